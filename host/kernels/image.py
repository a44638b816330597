"""Assembled kernels: :class:`KernelImage` and its file format, ``.ndpk``.

An ``.ndpk`` file is UTF-8 JSON::

    {
      "format": "matndp-kernel",
      "version": 1,
      "isa": "<fingerprint of the encoding, see isa_fingerprint()>",
      "name": "relu",
      "sections": {"main": 0, "final": 3},
      "arguments": {"OUT": 0},
      "uses_atomics": false,
      "words": ["0x0000000000c10130", ...]
    }

Words are 16-digit hex strings because JSON numbers are not exact beyond 2^53 in many
readers. ``sections`` maps each present section to its first instruction; sections are
contiguous, the first at 0, each running to the next one's start (or the end). A file is
refused (:class:`KernelFileError`) when any part is missing or malformed, when it was made
for another encoding, or when its words are not a valid kernel (:func:`validate_image`).
"""

import enum
import hashlib
import json
import pathlib
from dataclasses import dataclass, field

from matndp.hw.engine.isa import (INSTRUCTION_BITS, INSTRUCTION_FIELDS, INSTRUCTIONS,
                                  ARGUMENT_WORDS, IllegalInstruction, ImmediateUse, Instruction,
                                  Opcode)
from matndp.host.kernels.syntax import NAME, RESERVED_NAMES


__all__ = ["Section", "KernelImage", "KernelFileError", "InvalidImage", "FORMAT", "VERSION",
           "isa_fingerprint", "validate_image", "save_image", "load_image", "section_ranges",
           "ends_thread", "release_hazards"]


FORMAT = "matndp-kernel"
VERSION = 1


class Section(enum.Enum):
    """The parts of a kernel, in the order a filter entry runs them."""
    INIT = "init"      # once when the entry is armed; triggers wait for it
    MAIN = "main"      # once per triggering sector
    FINAL = "final"    # once after the entry's expected number of µthreads finished


def isa_fingerprint():
    """A short hash of everything that decides what a word means: the field positions and
    each instruction's opcode, operand types, immediate use and address operands."""
    description = [sorted(INSTRUCTION_FIELDS.items())] + [
        (spec.mnemonic, spec.opcode.value, spec.rd.value, spec.a.value, spec.b.value,
         spec.c.value, spec.immediate.value, list(spec.address)) for spec in INSTRUCTIONS]
    return hashlib.sha256(json.dumps(description).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class KernelImage:
    """An assembled kernel.

    words:        the instructions, 64-bit unsigned integers, position-independent.
    sections:     {Section: index of its first instruction}; MAIN is always present.
    arguments:    {name: argument word index} declared with ``.arg``.
    uses_atomics: whether ``.main`` holds scratchpad atomics, so that the entry's µthreads
                  take its ordering ticket (see docs/isa.md, determinism).
    """
    name: str
    words: tuple
    sections: dict
    arguments: dict = field(default_factory=dict)
    uses_atomics: bool = False

    def __post_init__(self):
        object.__setattr__(self, "words", tuple(int(word) for word in self.words))

    def __len__(self):
        return len(self.words)

    def section_of(self, pc):
        """The section holding instruction ``pc``."""
        for section, (start, end) in section_ranges(self).items():
            if start <= pc < end:
                return section
        raise IndexError(f"pc {pc} is outside kernel {self.name!r} ({len(self)} instructions)")


def section_ranges(image):
    """{Section: (start, end)} in layout order."""
    starts = sorted(image.sections.items(), key=lambda item: item[1])
    ends = [start for _, start in starts[1:]] + [len(image.words)]
    return {section: (start, end) for (section, start), end in zip(starts, ends)}


def ends_thread(instruction):
    """Whether nothing runs after ``instruction`` in its section's order: an exit, an
    instruction flagged exit, or an unconditional jump."""
    return (instruction.opcode in (Opcode.EXIT, Opcode.JUMP)) or instruction.exit


class InvalidImage(ValueError):
    """Words that are not a runnable kernel: ``index`` is the offending instruction."""

    def __init__(self, message, index=None):
        super().__init__(message)
        self.index = index


def _successors(instruction, pc):
    if instruction.opcode is Opcode.EXIT or instruction.exit:
        return []
    if instruction.spec.immediate is ImmediateUse.TARGET:
        target = pc + instruction.signed_imm
        return [target] if instruction.opcode is Opcode.JUMP else [pc + 1, target]
    return [pc + 1]


def release_hazards(instructions, start, end):
    """Indices of atomics in ``instructions[start:end]`` that some path reaches after an
    atomic with the release flag (the µthread no longer holds its ordering ticket)."""
    seen = set()
    work = [(start, False)]
    while work:
        pc, released = work.pop()
        if (pc, released) in seen:
            continue
        seen.add((pc, released))
        instruction = instructions[pc]
        after = released or (instruction.spec.is_atomic and instruction.release)
        work += [(successor, after) for successor in _successors(instruction, pc)
                 if start <= successor < end]
    return sorted({pc for pc, released in seen if released and instructions[pc].spec.is_atomic})


def validate_image(image, instruction_words=None):
    """Decoded instructions of ``image``; :class:`InvalidImage` unless every word is legal,
    the sections are well formed, every branch stays in its section, every section ends
    its µthread, the release flag follows the rules of ``.main`` and ``uses_atomics`` and
    the argument names are consistent with the words."""
    if not isinstance(image.name, str) or not image.name:
        raise InvalidImage("a kernel needs a name")
    if instruction_words is not None and len(image.words) > instruction_words:
        raise InvalidImage(f"{len(image.words)} instructions do not fit an instruction memory "
                           f"of {instruction_words}", instruction_words)
    instructions = []
    for index, word in enumerate(image.words):
        try:
            instructions.append(Instruction.decode(word))
        except IllegalInstruction as error:
            raise InvalidImage(f"word {index} ({word:#018x}): {error}", index) from None
    if Section.MAIN not in image.sections:
        raise InvalidImage("a kernel needs a main section")
    starts = sorted(image.sections.values())
    if len(set(starts)) != len(starts) or starts[0] != 0 or starts[-1] >= len(image.words):
        raise InvalidImage(f"section starts {starts} do not divide {len(image.words)} "
                           f"instructions into non-empty sections from 0")
    for section, (start, end) in section_ranges(image).items():
        for pc in range(start, end):
            instruction = instructions[pc]
            if instruction.spec.immediate is ImmediateUse.TARGET:
                target = pc + instruction.signed_imm
                if not start <= target < end:
                    raise InvalidImage(f"instruction {pc} branches to {target}, outside "
                                       f".{section.value} ({start} … {end - 1})", pc)
            if instruction.release and section is not Section.MAIN:
                raise InvalidImage(f"instruction {pc}: release in .{section.value}, which "
                                   f"holds no ordering ticket", pc)
        if not ends_thread(instructions[end - 1]):
            raise InvalidImage(f".{section.value} does not end with exit (its last "
                               f"instruction, {end - 1}, would run into what follows)", end - 1)
    main_start, main_end = section_ranges(image)[Section.MAIN]
    hazards = release_hazards(instructions, main_start, main_end)
    if hazards:
        raise InvalidImage(f"instruction {hazards[0]}: an atomic after the ordering ticket was "
                           f"released", hazards[0])
    atomics = any(instruction.spec.is_atomic for instruction in instructions[main_start:main_end])
    if atomics != image.uses_atomics:
        raise InvalidImage(f"uses_atomics is {image.uses_atomics}, but .main "
                           f"{'holds' if atomics else 'holds no'} scratchpad atomics")
    for name, index in image.arguments.items():
        if not isinstance(index, int) or not 0 <= index < ARGUMENT_WORDS:
            raise InvalidImage(f"argument {name!r} has index {index!r}, not 0 … {ARGUMENT_WORDS - 1}")
    if len(set(image.arguments.values())) != len(image.arguments):
        raise InvalidImage("two argument names share one index")
    return instructions


class KernelFileError(ValueError):
    """An ``.ndpk`` file that cannot be read as a kernel."""


def save_image(image, path):
    validate_image(image)
    document = {
        "format": FORMAT, "version": VERSION, "isa": isa_fingerprint(), "name": image.name,
        "sections": {section.value: start for section, start in
                     sorted(image.sections.items(), key=lambda item: item[1])},
        "arguments": dict(sorted(image.arguments.items(), key=lambda item: item[1])),
        "uses_atomics": image.uses_atomics,
        "words": [f"{word:#0{INSTRUCTION_BITS // 4 + 2}x}" for word in image.words],
    }
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1) + "\n")
    return path


def _require(document, key, kind, path):
    if key not in document:
        raise KernelFileError(f"{path}: no {key!r}")
    value = document[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise KernelFileError(f"{path}: {key!r} must be {kind.__name__}, not {value!r}")
    return value


def load_image(path):
    path = pathlib.Path(path)
    try:
        document = json.loads(path.read_text())
    except UnicodeDecodeError:
        raise KernelFileError(f"{path}: not a text file") from None
    except (ValueError, RecursionError) as error:     # a number too long, nesting too deep
        raise KernelFileError(f"{path}: not JSON ({error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise KernelFileError(f"{path}: not a matNDP kernel (no \"format\": \"{FORMAT}\")")
    version = _require(document, "version", int, path)
    if version != VERSION:
        raise KernelFileError(f"{path}: format version {version}; this reader knows {VERSION}")
    fingerprint = _require(document, "isa", str, path)
    if fingerprint != isa_fingerprint():
        raise KernelFileError(f"{path}: assembled for another instruction encoding "
                              f"(isa {fingerprint}, this one is {isa_fingerprint()}); reassemble it")
    name = _require(document, "name", str, path)
    sections_field = _require(document, "sections", dict, path)
    arguments = _require(document, "arguments", dict, path)
    uses_atomics = _require(document, "uses_atomics", bool, path)
    words_field = _require(document, "words", list, path)
    # Names as the assembler takes them, so that the disassembled source assembles again.
    if not NAME.match(name):
        raise KernelFileError(f"{path}: kernel name {name!r} is not a name (letters, digits, _)")
    for argument, index in arguments.items():
        if not NAME.match(argument) or argument in RESERVED_NAMES:
            raise KernelFileError(f"{path}: argument name {argument!r} is not a name, or is "
                                  f"reserved (a register, special register or float word)")
        if not isinstance(index, int) or isinstance(index, bool):
            raise KernelFileError(f"{path}: argument {argument!r} has index {index!r}, not an "
                                  f"integer")
    sections = {}
    for key, start in sections_field.items():
        try:
            section = Section(key)
        except ValueError:
            raise KernelFileError(f"{path}: unknown section {key!r}; sections are "
                                  f"{', '.join(s.value for s in Section)}") from None
        if not isinstance(start, int) or isinstance(start, bool):
            raise KernelFileError(f"{path}: section {key!r} starts at {start!r}, not an index")
        sections[section] = start
    words = []
    for index, text in enumerate(words_field):
        try:
            if not isinstance(text, str) or not text.lower().startswith("0x"):
                raise ValueError
            word = int(text, 16)
            if not 0 <= word < 1 << INSTRUCTION_BITS:
                raise ValueError
        except ValueError:
            raise KernelFileError(f"{path}: word {index} is {text!r}, not a "
                                  f"{INSTRUCTION_BITS}-bit hex string") from None
        words.append(word)
    image = KernelImage(name, tuple(words), sections, dict(arguments), uses_atomics)
    try:
        validate_image(image)
    except InvalidImage as error:
        raise KernelFileError(f"{path}: {error}") from None
    return image
