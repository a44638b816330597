"""The kernel assembler: readable text to a :class:`~matndp.host.kernels.image.KernelImage`.

The language is described in docs/isa.md ("Assembly language"); in short::

    .kernel relu              ; one kernel per file
    .arg OUT 0                ; name argument word 0
    .main                     ; once per triggering sector
        vmax   v1, DATA, 0.0
        add    x1, OFFSET, OUT
        vst.x  [x1], v1       ; .x: exit after this instruction

Every error is an :class:`AssemblyError` naming the file, line and column, and where an
included file was included or a macro used (``.include`` and ``.macro``: see
:mod:`~matndp.host.kernels.source`).
"""

import difflib
import pathlib
from dataclasses import dataclass

from matndp.hw.engine.isa import (ARGUMENT_WORDS, REGISTER_COUNT, SPEC_BY_MNEMONIC, SPECIALS,
                                  Element, ImmediateUse, Instruction, Opcode, Operand,
                                  OperandKind, OperandType, ScalarSpecial, VectorSpecial)
from matndp.host.kernels.image import InvalidImage, KernelImage, Section, validate_image
from matndp.host.kernels.source import (AssemblyError, Place, expand, file_reader,
                                        split_operands, strip_comment, tokens)
from matndp.host.kernels.syntax import (EXIT_FLAG, FLOAT_WORDS, LANE_INTEGER_RANGE, NAME,
                                        RELEASE_FLAG, RESERVED_NAMES, SCALAR_IMMEDIATE_RANGE,
                                        LiteralError, is_float_text, operand_slots,
                                        parse_float, parse_integer, parse_register, signature)


__all__ = ["AssemblyError", "assemble", "assemble_file", "assemble_instruction",
           "DEFAULT_INSTRUCTION_WORDS"]


# The RTL engine's default instruction-memory depth. Callers that target another engine
# configuration pass that configuration's depth.
DEFAULT_INSTRUCTION_WORDS = 1024


# Parsed operands -------------------------------------------------------------------------

@dataclass(frozen=True)
class _Term:
    """One operand as written: a name (register, special, argument, label) or a literal."""
    kind: str            # "name", "number", "relative"
    text: str
    column: int
    value: int = 0       # relative targets: the displacement


@dataclass(frozen=True)
class _Memory:
    terms: tuple         # _Term names
    offset: int
    offset_column: int   # 0 when no offset was written
    column: int


@dataclass
class _Line:
    place: Place
    column: int
    mnemonic: str
    flags: tuple
    operands: list
    section: Section
    index: int = 0


def _parse_signed_number(place, tokens, what):
    """A literal with an optional leading sign, as one text."""
    if tokens[0].text in "+-" and len(tokens) == 2 and (
            tokens[1].kind == "number" or tokens[1].text in FLOAT_WORDS):
        return _Term("number", tokens[0].text + tokens[1].text, tokens[0].column)
    if len(tokens) == 1 and tokens[0].kind in ("number", "name"):
        kind = "number" if tokens[0].kind == "number" or tokens[0].text in FLOAT_WORDS else "name"
        return _Term(kind, tokens[0].text, tokens[0].column)
    raise place.error(tokens[0].column, f"cannot read {what} "
                       f"{' '.join(token.text for token in tokens)!r}")


def _parse_memory(place, tokens):
    if tokens[-1].text != "]":
        raise place.error(tokens[0].column, "missing ']' after the address")
    inner = tokens[1:-1]
    if not inner:
        raise place.error(tokens[0].column, "empty address '[]'")
    terms, offset, offset_column = [], 0, 0
    position, sign = 0, "+"
    while position < len(inner):
        token = inner[position]
        if token.text in "+-" and token.kind == "punct":
            if position + 1 >= len(inner) or inner[position + 1].kind not in ("number", "name"):
                raise place.error(token.column, f"'{token.text}' needs a term after it")
            sign, position = token.text, position + 1
            token = inner[position]
        if token.kind == "number":
            if offset_column:
                raise place.error(token.column, f"a second offset in one address "
                                   f"(the first is at column {offset_column}); add them up")
            value = _integer(place, token.column, token.text)
            offset, offset_column = (-value if sign == "-" else value), token.column
        elif token.kind == "name":
            if sign == "-":
                raise place.error(token.column, f"only the offset may be subtracted, "
                                   f"not {token.text}")
            terms.append(_Term("name", token.text, token.column))
        else:
            raise place.error(token.column, f"unexpected {token.text!r} in an address")
        position += 1
        if position < len(inner) and not (inner[position].text in "+-"
                                          and inner[position].kind == "punct"):
            raise place.error(inner[position].column,
                               f"expected '+' or '-' before {inner[position].text!r}")
        sign = "+"
    return _Memory(tuple(terms), offset, offset_column, tokens[0].column)


def _integer(place, column, text):
    if is_float_text(text):
        raise place.error(column, f"{text} is not an integer")
    try:
        return parse_integer(text)
    except LiteralError as error:
        raise place.error(column, str(error)) from None


def _parse_operand(place, tokens):
    first = tokens[0]
    if first.text == "[":
        return _parse_memory(place, tokens)
    if first.text == "." and first.kind == "punct":
        if len(tokens) == 1:
            return _Term("relative", ".", first.column, 0)
        if len(tokens) == 3 and tokens[1].text in "+-" and tokens[2].kind == "number":
            value = _integer(place, tokens[2].column, tokens[2].text)
            return _Term("relative", "." + tokens[1].text + tokens[2].text, first.column,
                         -value if tokens[1].text == "-" else value)
        raise place.error(first.column, "a relative target is written '.+N' or '.-N'")
    return _parse_signed_number(place, tokens, "operand")


# Resolution of operands against an instruction's spec ------------------------------------

class _Resolver:
    def __init__(self, arguments, labels, label_sections):
        self.arguments = arguments            # name -> index
        self.labels = labels                  # name -> instruction index
        self.label_sections = label_sections  # name -> Section

    def fail(self, line, column, problem):
        raise line.place.error(column, problem)

    def name_operand(self, line, term, kind, role):
        """Operand for a register, special or argument name in an operand of ``kind``."""
        text = term.text
        register = parse_register(text)
        if register is not None:
            prefix, index = register
            limit = ARGUMENT_WORDS if prefix == "a" else REGISTER_COUNT
            if index >= limit:
                self.fail(line, term.column, f"no {text}: {'argument words' if prefix == 'a' else 'registers'} "
                          f"are {prefix}0 … {prefix}{limit - 1}")
            if prefix == "a":
                return Operand(OperandKind.ARGUMENT, index)
            expected = "x" if kind is OperandType.SCALAR else "v"
            if prefix != expected:
                kind_name = "scalar" if kind is OperandType.SCALAR else "vector"
                self.fail(line, term.column, f"{text} is a {'vector' if prefix == 'v' else 'scalar'} "
                          f"register, but {role} is {kind_name}")
            return Operand(OperandKind.REGISTER, index)
        for special_kind, enum in SPECIALS.items():
            if text in enum.__members__:
                if special_kind is not kind:
                    self.fail(line, term.column, f"{text} is a {'vector' if enum is VectorSpecial else 'scalar'} "
                              f"special register, but {role} is "
                              f"{'scalar' if kind is OperandType.SCALAR else 'vector'}")
                return Operand(OperandKind.SPECIAL, enum[text].value)
        if text in self.arguments:
            return Operand(OperandKind.ARGUMENT, self.arguments[text])
        if text in self.labels:
            self.fail(line, term.column, f"label {text} can only be a branch target")
        hint = ""
        upper = text.upper()
        if upper in ScalarSpecial.__members__ or upper in VectorSpecial.__members__:
            hint = f" (special registers are upper case: {upper})"
        elif text.lower() != text and parse_register(text.lower()):
            hint = f" (registers are lower case: {text.lower()})"
        self.fail(line, term.column, f"unknown name {text!r}: not a register, special register, "
                  f"argument or literal{hint}")

    def immediate(self, line, term, kind, element, role):
        """The 32-bit imm field for a literal in a source of ``kind``."""
        text = term.text
        if kind is OperandType.SCALAR:
            if is_float_text(text):
                self.fail(line, term.column, f"{text}: a scalar immediate is an integer")
            value = _integer(line.place, term.column, text)
            low, high = SCALAR_IMMEDIATE_RANGE
            if not low <= value <= high:
                self.fail(line, term.column, f"immediate {text} is out of range: a scalar "
                          f"immediate is sign-extended from 32 bits ({low} … {high})")
            return value & 0xFFFFFFFF
        floating = is_float_text(text)
        hexadecimal = text.lower().lstrip("+-").startswith(("0x", "0b", "0o"))
        if element is Element.FP32 and not floating and not hexadecimal:
            self.fail(line, term.column, f"{text}: {role} holds FP32 values; write a float "
                      f"({text}.0) or raw bits in hex")
        if element is Element.INT32 and floating:
            self.fail(line, term.column, f"{text}: {role} holds 32-bit integers; a float "
                      f"literal does not belong here")
        if floating:
            try:
                return parse_float(text)
            except LiteralError as error:
                self.fail(line, term.column, str(error))
        value = _integer(line.place, term.column, text)
        if hexadecimal and element is Element.FP32 and value < 0:
            self.fail(line, term.column, f"{text}: raw FP32 bits are not negative")
        low, high = LANE_INTEGER_RANGE
        if not low <= value <= high:
            self.fail(line, term.column, f"immediate {text} is out of range for a 32-bit lane "
                      f"({low} … {high:#x})")
        return value & 0xFFFFFFFF

    def target(self, line, term):
        if term.kind == "relative":
            return term.value
        if term.kind != "name" or not NAME.match(term.text):
            self.fail(line, term.column, f"a branch target is a label, not {term.text!r}")
        if term.text not in self.labels:
            self.fail(line, term.column, f"undefined label {term.text!r}")
        if self.label_sections[term.text] is not line.section:
            self.fail(line, term.column, f"label {term.text!r} is in "
                      f".{self.label_sections[term.text].value}; a branch stays in its section "
                      f"(.{line.section.value})")
        return self.labels[term.text] - line.index

    def instruction(self, line):
        spec = SPEC_BY_MNEMONIC[line.mnemonic]
        slots = operand_slots(spec)
        if len(line.operands) != len(slots):
            self.fail(line, line.column, f"{spec.mnemonic} takes {len(slots)} operand"
                      f"{'' if len(slots) == 1 else 's'} ({signature(spec)}), not "
                      f"{len(line.operands)}")
        fields = {"rd": 0, "a": Operand(), "b": Operand(), "c": Operand()}
        imm, imm_column = 0, 0
        for (slot, name), operand in zip(slots, line.operands):
            role = f"operand {name} of {spec.mnemonic}" if name else f"the destination of {spec.mnemonic}"
            if slot == "memory":
                if not isinstance(operand, _Memory):
                    self.fail(line, operand.column, f"{spec.mnemonic} needs an address in "
                              f"brackets here ({signature(spec)})")
                if len(operand.terms) > len(spec.address):
                    self.fail(line, operand.terms[len(spec.address)].column,
                              f"{spec.mnemonic} adds at most {len(spec.address)} "
                              f"operand{'' if len(spec.address) == 1 else 's'} and an offset "
                              f"({signature(spec)})")
                for address_name, term in zip(spec.address, operand.terms):
                    fields[address_name] = self.name_operand(line, term, OperandType.SCALAR,
                                                             f"an address operand of {spec.mnemonic}")
                low, high = SCALAR_IMMEDIATE_RANGE
                if not low <= operand.offset <= high:
                    self.fail(line, operand.offset_column, f"offset {operand.offset} is out of "
                              f"range: it is sign-extended from 32 bits ({low} … {high})")
                imm = operand.offset & 0xFFFFFFFF
                continue
            if isinstance(operand, _Memory):
                self.fail(line, operand.column, f"{role} is not an address")
            if slot == "target":
                displacement = self.target(line, operand)
                low, high = SCALAR_IMMEDIATE_RANGE
                if not low <= displacement <= high:
                    self.fail(line, operand.column, f"branch displacement {displacement} is out of range")
                imm = displacement & 0xFFFFFFFF
                continue
            if operand.kind == "relative":
                self.fail(line, operand.column, f"{role} is not a branch target")
            if slot == "rd":
                register = parse_register(operand.text) if operand.kind == "name" else None
                prefix = "x" if spec.rd is OperandType.SCALAR else "v"
                if register is None or register[0] != prefix:
                    self.fail(line, operand.column, f"the destination of {spec.mnemonic} is a "
                              f"{'scalar' if prefix == 'x' else 'vector'} register "
                              f"({prefix}0 … {prefix}{REGISTER_COUNT - 1}), not {operand.text!r}")
                if register[1] >= REGISTER_COUNT:
                    self.fail(line, operand.column, f"no {operand.text}: registers are "
                              f"{prefix}0 … {prefix}{REGISTER_COUNT - 1}")
                fields["rd"] = register[1]
                continue
            kind = getattr(spec, name)
            if operand.kind == "number":
                if spec.immediate is not ImmediateUse.OPERAND:
                    what = "address offset" if spec.immediate is ImmediateUse.OFFSET else "branch target"
                    self.fail(line, operand.column, f"{spec.mnemonic} takes no immediate operand: "
                              f"its immediate is the {what}")
                if imm_column:
                    self.fail(line, operand.column, f"only one operand can be an immediate "
                              f"(the first is at column {imm_column})")
                imm = self.immediate(line, operand, kind, spec.element(name), role)
                imm_column = operand.column
                fields[name] = Operand(OperandKind.IMMEDIATE, 0)
            else:
                fields[name] = self.name_operand(line, operand, kind, role)
        return Instruction(spec.opcode, fields["rd"], fields["a"], fields["b"], fields["c"],
                           release=RELEASE_FLAG in line.flags, exit=EXIT_FLAG in line.flags,
                           imm=imm)


# The two passes ---------------------------------------------------------------------------

def _check_flags(place, column, mnemonic_text, section, macros=None):
    """The mnemonic and its flags from ``vst.x``-style text."""
    base, *flags = mnemonic_text.split(".")
    if base not in SPEC_BY_MNEMONIC:
        if macros and base in macros:
            raise place.error(column, f"macro {base} is used before its definition at "
                              f"{macros[base].describe(place)}")
        hint = ""
        if base.lower() in SPEC_BY_MNEMONIC:
            hint = f" (mnemonics are lower case: {base.lower()})"
        else:
            close = difflib.get_close_matches(base, [*SPEC_BY_MNEMONIC, *(macros or ())], n=1)
            if close:
                hint = f" (did you mean {close[0]}?)"
        what = "mnemonic or macro" if macros else "mnemonic"
        raise place.error(column, f"unknown {what} {base!r}{hint}")
    spec = SPEC_BY_MNEMONIC[base]
    flag_column = column + len(base)
    seen = []
    for flag in flags:
        if flag not in (EXIT_FLAG, RELEASE_FLAG):
            raise place.error(flag_column, f"unknown flag .{flag}: flags are "
                              f".{EXIT_FLAG} (exit after) and .{RELEASE_FLAG} (release the ordering ticket)")
        if flag in seen:
            raise place.error(flag_column, f"flag .{flag} given twice")
        if flag == RELEASE_FLAG and not spec.is_atomic:
            raise place.error(flag_column, f".{RELEASE_FLAG} (release) is only "
                              f"for scratchpad atomics, not {base}")
        if flag == RELEASE_FLAG and section is not Section.MAIN:
            raise place.error(flag_column, f".{RELEASE_FLAG} in .{section.value}: "
                              f"only .main µthreads hold an ordering ticket")
        if flag == EXIT_FLAG and spec.opcode is Opcode.EXIT:
            raise place.error(flag_column, "exit already ends the µthread; drop .x")
        if flag == EXIT_FLAG and spec.is_branch:
            raise place.error(flag_column, f"{base} is a branch: it cannot also exit")
        seen.append(flag)
        flag_column += len(flag) + 1
    return base, tuple(seen)


def _check_new_name(place, column, name, what, taken):
    if not NAME.match(name):
        raise place.error(column, f"{name!r} is not a valid {what} name")
    if name in RESERVED_NAMES:
        raise place.error(column, f"{name!r} is reserved (a register, argument word, "
                          f"special register or float word); choose another {what} name")
    if name in taken:
        kind, where = taken[name]
        raise place.error(column, f"{name!r} is already {kind} {where.describe(place)}")


# Names a macro may not take, and what they are.
_NOT_MACRO_NAMES = {**{name: "reserved (a register, argument word, special register or float word)"
                       for name in RESERVED_NAMES},
                    **{mnemonic: "a mnemonic" for mnemonic in SPEC_BY_MNEMONIC}}


def _parse(filename, lines, macros):
    """Pass one: directives, labels and instruction lines, laid out in source order."""
    kernel_name = None
    arguments, argument_places = {}, {}
    labels, label_sections, names = {}, {}, {}
    section, sections, section_places = None, {}, {}
    parsed = []
    pending_labels = []
    for source_line in lines:
        place = source_line.place
        found = tokens(place, source_line.text)
        while len(found) >= 2 and found[0].kind == "name" and found[1].text == ":":
            label = found[0]
            if section is None:
                raise place.error(label.column, f"label {label.text!r} before the first section")
            _check_new_name(place, label.column, label.text, "label", names)
            names[label.text] = ("defined at", place)
            pending_labels.append((label.text, place, label.column))
            label_sections[label.text] = section
            labels[label.text] = len(parsed)
            found = found[2:]
        if not found:
            continue
        head = found[0]
        if head.kind == "directive":
            directive, rest = head.text[1:], found[1:]
            if directive == "kernel":
                if kernel_name is not None:
                    raise place.error(head.column, "one .kernel per file")
                if len(rest) != 1 or not NAME.match(rest[0].text):
                    raise place.error(head.column, ".kernel takes one name: .kernel NAME")
                kernel_name = rest[0].text
            elif directive == "arg":
                if kernel_name is None:
                    raise place.error(head.column, ".kernel NAME comes first")
                if section is not None:
                    raise place.error(head.column, "declare arguments before the first section")
                if len(rest) != 2:
                    raise place.error(head.column, ".arg takes a name and an index: .arg NAME INDEX")
                name_token, index_token = rest
                _check_new_name(place, name_token.column, name_token.text, "argument", names)
                index = _integer(place, index_token.column, index_token.text)
                if not 0 <= index < ARGUMENT_WORDS:
                    raise place.error(index_token.column, f"argument index {index} is "
                                      f"out of range (0 … {ARGUMENT_WORDS - 1})")
                if index in argument_places:
                    raise place.error(index_token.column, f"argument word {index} is "
                                      f"already named at {argument_places[index].describe(place)}")
                arguments[name_token.text] = index
                argument_places[index] = place
                names[name_token.text] = ("an argument, declared at", place)
            elif directive in (s.value for s in Section):
                if kernel_name is None:
                    raise place.error(head.column, ".kernel NAME comes first")
                if rest:
                    raise place.error(rest[0].column, f".{directive} takes no operands")
                new = Section(directive)
                if new in sections:
                    raise place.error(head.column, f".{directive} appears twice "
                                      f"(first at {section_places[new].describe(place)})")
                if section is not None and sections[section] == len(parsed):
                    raise section_places[section].error(1, f".{section.value} has no instructions")
                section = new
                sections[new] = len(parsed)
                section_places[new] = place
            else:
                raise place.error(head.column, f"unknown directive .{directive}; directives "
                                  f"are .kernel, .arg, .init, .main, .final, .include, .macro")
            if pending_labels and directive in (s.value for s in Section):
                raise place.error(head.column, f"label {pending_labels[-1][0]!r} must "
                                  f"label an instruction of its section")
            continue
        if head.kind != "name":
            raise place.error(head.column, f"expected an instruction, not {head.text!r}")
        if section is None:
            raise place.error(head.column, "instruction outside a section "
                              "(start one with .init, .main or .final)")
        mnemonic, flags = _check_flags(place, head.column, head.text, section, macros)
        operands = [_parse_operand(place, group) for group in split_operands(place, found[1:])]
        parsed.append(_Line(place, head.column, mnemonic, flags, operands, section, len(parsed)))
        pending_labels = []
    start = Place(filename, 1)
    if kernel_name is None:
        raise start.error(1, "no .kernel NAME")
    if Section.MAIN not in sections:
        raise start.error(1, "no .main section")
    if pending_labels:
        label, place, column = pending_labels[-1]
        raise place.error(column, f"label {label!r} labels no instruction")
    if section is not None and sections[section] == len(parsed):
        raise section_places[section].error(1, f".{section.value} has no instructions")
    return kernel_name, arguments, labels, label_sections, sections, parsed


def assemble(text, filename="<kernel>", instruction_words=DEFAULT_INSTRUCTION_WORDS, include=None):
    """Assemble kernel source ``text``; ``instruction_words`` is the depth of the
    instruction memory the kernel must fit. ``include`` reads the files ``.include``
    names (a reader as :func:`~matndp.host.kernels.source.file_reader` makes; by default
    files relative to ``filename``'s folder)."""
    lines, macros = expand(text, filename, include or file_reader(), _NOT_MACRO_NAMES)
    kernel_name, arguments, labels, label_sections, sections, parsed = _parse(filename, lines, macros)
    if len(parsed) > instruction_words:
        line = parsed[instruction_words]
        raise line.place.error(line.column, f"kernel too large: {len(parsed)} instructions, "
                               f"the instruction memory holds {instruction_words}")
    resolver = _Resolver(arguments, labels, label_sections)
    instructions = [resolver.instruction(line) for line in parsed]
    main_start = sections[Section.MAIN]
    main_end = min([start for start in sections.values() if start > main_start] + [len(parsed)])
    image = KernelImage(
        kernel_name, tuple(instruction.encode() for instruction in instructions), dict(sections),
        dict(arguments),
        uses_atomics=any(i.spec.is_atomic for i in instructions[main_start:main_end]))
    try:
        validate_image(image, instruction_words)
    except InvalidImage as error:
        line = parsed[error.index] if error.index is not None and error.index < len(parsed) else parsed[-1]
        raise line.place.error(line.column, _image_problem(error, line)) from None
    return image


def _image_problem(error, line):
    text = str(error)
    if "does not end with exit" in text:
        return (f".{line.section.value} does not end its µthread: its last instruction must be "
                f"exit, carry .{EXIT_FLAG}, or be a jump")
    if "ordering ticket was released" in text:
        return (f"{line.mnemonic}: an atomic after the ordering ticket was released (.{RELEASE_FLAG}) "
                f"on some path; release on the last atomic only")
    return text


def assemble_file(path, instruction_words=DEFAULT_INSTRUCTION_WORDS, include_folders=()):
    """Assemble the file at ``path``; ``.include`` reads files relative to the including
    file's folder, then in ``include_folders`` in turn."""
    path = pathlib.Path(path)
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise AssemblyError(str(path), 1, 1, "not a UTF-8 text file") from None
    return assemble(text, str(path), instruction_words, include=file_reader(include_folders))


def assemble_instruction(text, arguments=None, filename="<instruction>"):
    """One instruction (no labels; branch targets as ``.+N``) to its 64-bit word."""
    place = Place(filename, 1)
    found = tokens(place, strip_comment(text))
    if not found or found[0].kind != "name":
        raise place.error(found[0].column if found else 1, "expected an instruction")
    mnemonic, flags = _check_flags(place, found[0].column, found[0].text, Section.MAIN)
    operands = [_parse_operand(place, group) for group in split_operands(place, found[1:])]
    line = _Line(place, found[0].column, mnemonic, flags, operands, Section.MAIN, 0)
    return _Resolver(dict(arguments or {}), {}, {}).instruction(line).encode()
