"""Kernel source as the assembler reads it: lines with ``.include`` and ``.macro`` expanded,
each line carrying its :class:`Place` so that an error names the file, line and column it
stands at and, through an inclusion or a macro, where that file was included or that macro
used; and the lexer the assembler tokenises those lines with (docs/isa.md, "Assembly
language").

``.include "NAME"`` reads another file in place of the line (by default relative to the
including file's folder, then in the given search folders). ``.macro NAME p1, p2, …`` …
``.endm`` defines a macro; a line whose first word (after any labels) is the macro's name
uses it, and stands for the macro's lines with every ``\\p1`` replaced by the text of the
first argument, and so on. A macro is defined before its first use and once per kernel.
"""

import os
import pathlib
import re
from dataclasses import dataclass, field


__all__ = ["AssemblyError", "Place", "SourceLine", "Token", "expand", "file_reader",
           "tokens", "strip_comment", "split_operands"]


class AssemblyError(ValueError):
    """A problem in kernel source, at ``filename:line:column`` (1-based). ``trace`` lists
    where that line came from, innermost first: ``(how, filename, line, column)``, ``how``
    being ``"in macro NAME, used"`` or ``"included"``."""

    def __init__(self, filename, line, column, problem, trace=()):
        message = f"{filename}:{line}:{column}: {problem}"
        message += "".join(f"\n  {how} at {where}:{row}:{col}" for how, where, row, col in trace)
        super().__init__(message)
        self.filename, self.line, self.column, self.problem = filename, line, column, problem
        self.trace = tuple(trace)


# Places ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Place:
    """A line of source: its file and line, how it got into the kernel (``trace``, see
    :class:`AssemblyError`) and, for a line of a macro's expansion, which columns of the
    expanded text came from which columns of the macro's line (``segments``: (start in the
    expanded text, start in the written line) pairs, ascending)."""
    filename: str
    line: int
    trace: tuple = ()
    segments: tuple = ()

    def column(self, column):
        """The column of the written line that expanded ``column`` came from."""
        origin = column
        for expanded, written in self.segments:
            if expanded > column:
                break
            origin = written + (column - expanded) if written > 0 else -written
        return origin

    def error(self, column, problem):
        return AssemblyError(self.filename, self.line, self.column(column), problem, self.trace)

    def describe(self, other=None):
        """Where this line is, as few words as make it clear from ``other``'s line."""
        if other is not None and other.filename == self.filename and not self.trace and not other.trace:
            return f"line {self.line}"
        text = f"{self.filename}:{self.line}"
        if self.trace:
            how, filename, line, column = self.trace[0]
            text += f" ({how} at {filename}:{line}:{column})"
        return text


@dataclass(frozen=True)
class SourceLine:
    text: str
    place: Place


# Lexing ----------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>(?:0[xXbBoO][0-9A-Za-z_]*|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)
               [\w.]*)
  | (?P<name>[A-Za-z_]\w*(?:\.\w+)*)
  | (?P<directive>\.[A-Za-z_]\w*)
  | (?P<punct>[,\[\]+\-:.])
  | (?P<other>.)
""", re.VERBOSE)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    column: int


def strip_comment(text):
    positions = [text.find(mark) for mark in ";#" if mark in text]
    return text[:min(positions)] if positions else text


def tokens(place, text):
    found = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "space":
            continue
        if kind == "other":
            if match.group() == "\\":
                raise place.error(match.start() + 1, "a macro parameter (\\name) outside a macro")
            raise place.error(match.start() + 1, f"unexpected character {match.group()!r}")
        found.append(Token(kind, match.group(), match.start() + 1))
    return found


def split_operands(place, found):
    """Token lists separated by top-level commas (commas inside brackets belong to an
    address)."""
    groups, current, depth = [], [], 0
    for token in found:
        if token.text == "[":
            depth += 1
        elif token.text == "]":
            depth -= 1
        if token.text == "," and depth == 0:
            if not current:
                raise place.error(token.column, "missing operand before ','")
            groups.append(current)
            current = []
        else:
            current.append(token)
    if current:
        groups.append(current)
    elif groups:
        raise place.error(found[-1].column, "missing operand after ','")
    return groups


# Reading included files ------------------------------------------------------------------

def file_reader(search=()):
    """A reader of included files from disk: ``NAME`` relative to the including file's
    folder, else in each folder of ``search`` in turn. A reader takes (name, the including
    file's name) and returns (text, the included file's name), or raises
    ``FileNotFoundError`` naming where it looked."""
    folders = tuple(pathlib.Path(folder) for folder in search)

    def read(name, including):
        candidates = [pathlib.Path(including).parent / name, *(folder / name for folder in folders)]
        for path in candidates:
            path = pathlib.Path(os.path.normpath(path))
            if path.is_file():
                try:
                    return path.read_text(), str(path)
                except UnicodeDecodeError:
                    raise FileNotFoundError(f"{path} is not a UTF-8 text file") from None
        raise FileNotFoundError(f"no such file (looked in "
                                f"{', '.join(str(path.parent) for path in candidates)})")
    return read


# Expansion -------------------------------------------------------------------------------

_INCLUDE = re.compile(r'\s*\.include\s+"(?P<name>[^"]+)"\s*\Z')
_PARAMETER = re.compile(r"\\(?P<name>[A-Za-z_]\w*)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass
class _Macro:
    name: str
    parameters: tuple
    place: Place
    column: int
    body: list = field(default_factory=list)      # SourceLines, comments stripped


class _Expansion:
    """The state of one kernel's expansion: its macros and the files being read."""

    def __init__(self, reader, reserved):
        self.reader = reader
        self.reserved = reserved      # names a macro may not take (mnemonics, registers, …)
        self.macros = {}
        self.files = []               # the inclusion stack, outermost first
        self.using = []               # the macros being expanded, outermost first
        self.lines = []

    # Files -------------------------------------------------------------------------------

    def read_file(self, text, filename, trace):
        self.files.append(filename)
        defining = None
        for number, raw in enumerate(text.splitlines(), start=1):
            place = Place(filename, number, trace)
            code = strip_comment(raw)
            if defining is not None:
                defining = self.collect(defining, code, place)
                continue
            defining = self.line(code, place)
        if defining is not None:
            raise defining.place.error(defining.column, f"macro {defining.name} has no .endm")
        self.files.pop()

    def include(self, match, code, place):
        name = match.group("name")
        column = code.index('"') + 1
        try:
            text, filename = self.reader(name, place.filename)
        except FileNotFoundError as error:
            raise place.error(column, f"cannot include {name!r}: {error}") from None
        if filename in self.files:
            cycle = " → ".join(self.files[self.files.index(filename):] + [filename])
            raise place.error(column, f"{name!r} includes itself: {cycle}")
        self.read_file(text, filename, (("included", place.filename, place.line, _indent(code) + 1),
                                        *place.trace))

    # Lines -------------------------------------------------------------------------------

    def line(self, code, place):
        """Handle one line outside a macro definition; returns the macro a ``.macro``
        line starts (or None)."""
        stripped = code.strip()
        if stripped.startswith(".include") and stripped[8:9] in ("", " ", "\t", '"'):
            match = _INCLUDE.match(code)
            if match is None:
                raise place.error(_indent(code) + 1, '.include takes a file name in double quotes: '
                                  '.include "NAME"')
            self.include(match, code, place)
            return None
        found = tokens(place, code)
        if found and found[0].kind == "directive" and found[0].text == ".macro":
            return self.define(found, place)
        if found and found[0].kind == "directive" and found[0].text == ".endm":
            raise place.error(found[0].column, ".endm without .macro")
        labels = 0
        while labels + 1 < len(found) and found[labels].kind == "name" and found[labels + 1].text == ":":
            labels += 2
        if labels < len(found) and found[labels].kind == "name":
            base, _, flags = found[labels].text.partition(".")
            if flags and base in self.macros:
                raise place.error(found[labels].column + len(base), f"a macro takes no flags "
                                  f"(.{flags} on {base})")
        if labels < len(found) and found[labels].kind == "name" and found[labels].text in self.macros:
            head = found[labels]
            if labels:
                self.lines.append(SourceLine(code[:head.column - 1], place))
            self.use(self.macros[head.text], head, found[labels + 1:], place, code)
            return None
        self.lines.append(SourceLine(code, place))
        return None

    def collect(self, macro, code, place):
        """A line inside ``macro``'s definition; returns the macro still being defined, or
        None at its ``.endm``."""
        stripped = code.strip()
        if stripped.split(maxsplit=1)[:1] == [".endm"]:
            if stripped != ".endm":
                after = code.index(".endm") + len(".endm")
                raise place.error(after + _indent(code[after:]) + 1, ".endm takes no operands")
            self.macros[macro.name] = macro
            return None
        if stripped.split(maxsplit=1)[:1] == [".macro"]:
            raise place.error(code.index(".macro") + 1, f"macro definitions do not nest "
                              f"(macro {macro.name} has no .endm before this line)")
        if stripped.startswith(".include"):
            raise place.error(code.index(".include") + 1, f".include inside macro {macro.name}: "
                              f"include the file outside the macro")
        for match in _PARAMETER.finditer(code):
            name = match.group("name")
            if name is None:
                raise place.error(match.start() + 1, "'\\' must be followed by a parameter name")
            if name not in macro.parameters:
                raise place.error(match.start() + 1, f"\\{name} is not a parameter of macro "
                                  f"{macro.name} ({', '.join(macro.parameters) or 'it has none'})")
        macro.body.append(SourceLine(code, place))
        return macro

    def define(self, found, place):
        if len(found) < 2 or found[1].kind != "name":
            raise place.error(found[0].column, ".macro takes a name and its parameters: "
                              ".macro NAME p1, p2, …")
        name = found[1]
        if not _NAME.match(name.text):
            raise place.error(name.column, f"{name.text!r} is not a valid macro name")
        if name.text in self.reserved:
            raise place.error(name.column, f"{name.text!r} is {self.reserved[name.text]}; "
                              f"choose another macro name")
        if name.text in self.macros:
            raise place.error(name.column, f"macro {name.text} is already defined at "
                              f"{self.macros[name.text].place.describe(place)}")
        parameters = []
        for group in (split_operands(place, found[2:]) if len(found) > 2 else []):
            if len(group) != 1 or group[0].kind != "name" or not _NAME.match(group[0].text):
                raise place.error(group[0].column, f"a macro parameter is a name, not "
                                  f"{' '.join(token.text for token in group)!r}")
            if group[0].text in parameters:
                raise place.error(group[0].column, f"parameter {group[0].text} is given twice")
            parameters.append(group[0].text)
        return _Macro(name.text, tuple(parameters), place, found[0].column)

    def use(self, macro, head, rest, place, code):
        arguments = split_operands(place, rest) if rest else []
        if len(arguments) != len(macro.parameters):
            wanted = len(macro.parameters)
            raise place.error(head.column, f"macro {macro.name} takes {wanted} "
                              f"argument{'' if wanted == 1 else 's'}"
                              f"{' (' + ', '.join(macro.parameters) + ')' if wanted else ''}, "
                              f"not {len(arguments)}")
        if macro.name in self.using:
            chain = " → ".join(self.using[self.using.index(macro.name):] + [macro.name])
            raise place.error(head.column, f"macro {macro.name} uses itself: {chain}")
        values = {parameter: code[group[0].column - 1:group[-1].column - 1 + len(group[-1].text)]
                  for parameter, group in zip(macro.parameters, arguments)}
        trace = (f"in macro {macro.name}, used", place.filename, place.line,
                 place.column(head.column))
        self.using.append(macro.name)
        for body in macro.body:
            text, segments = _substitute(body.text, values)
            self.line(text, Place(body.place.filename, body.place.line, (trace, *place.trace),
                                  segments))
        self.using.pop()


def _substitute(text, values):
    """``text`` with each ``\\parameter`` replaced, and the segments mapping the result's
    columns back to ``text``'s (a negative written start stands for a parameter's column,
    where everything of its replacement maps)."""
    pieces, segments, position, length = [], [], 0, 0
    for match in _PARAMETER.finditer(text):
        literal = text[position:match.start()]
        segments.append((length + 1, position + 1))
        pieces.append(literal)
        length += len(literal)
        segments.append((length + 1, -(match.start() + 1)))
        replacement = values[match.group("name")]
        pieces.append(replacement)
        length += len(replacement)
        position = match.end()
    segments.append((length + 1, position + 1))
    pieces.append(text[position:])
    return "".join(pieces), tuple(segments)


def _indent(text):
    return len(text) - len(text.lstrip())


def expand(text, filename, reader, reserved):
    """The lines of kernel source ``text`` (read from ``filename``) with every
    ``.include`` and macro use expanded, as :class:`SourceLine` s, comments stripped; and
    {name: the place of its definition} of the macros defined.
    ``reader`` reads an included file (see :func:`file_reader`); ``reserved`` maps the
    names a macro may not take to what they are."""
    expansion = _Expansion(reader, reserved)
    expansion.read_file(text, filename, ())
    return expansion.lines, {name: macro.place for name, macro in expansion.macros.items()}
