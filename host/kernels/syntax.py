"""The kernel assembly language's vocabulary, shared by the assembler and the disassembler:
operand order per instruction, register and special names, and how literals are read and
written (docs/isa.md, "Assembly language").
"""

import re

import numpy as np

from matndp.hw.engine.isa import (ARGUMENT_WORDS, REGISTER_COUNT, Element, ImmediateUse,
                                  OperandType, ScalarSpecial, VectorSpecial)


__all__ = ["EXIT_FLAG", "RELEASE_FLAG", "operand_slots", "signature", "register_name",
           "parse_register", "RESERVED_NAMES", "SCALAR_IMMEDIATE_RANGE", "LANE_INTEGER_RANGE",
           "format_scalar_immediate", "format_lane_immediate", "parse_integer", "parse_float",
           "LiteralError", "is_float_text", "FLOAT_WORDS", "NAME"]


EXIT_FLAG = "x"
RELEASE_FLAG = "r"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

SCALAR_IMMEDIATE_RANGE = (-(1 << 31), (1 << 31) - 1)     # sign-extended to 64 bits
LANE_INTEGER_RANGE = (-(1 << 31), (1 << 32) - 1)         # two's complement or unsigned
FLOAT_WORDS = ("inf", "nan")

_REGISTER = re.compile(r"([xva])(\d+)\Z")
_PREFIX = {OperandType.SCALAR: "x", OperandType.VECTOR: "v"}

RESERVED_NAMES = frozenset(
    [f"{prefix}{index}" for prefix in "xv" for index in range(REGISTER_COUNT)]
    + [f"a{index}" for index in range(ARGUMENT_WORDS)]
    + [special.name for special in ScalarSpecial] + [special.name for special in VectorSpecial]
    + list(FLOAT_WORDS))


def operand_slots(spec):
    """The operands as written, in order: ``("rd", None)``, ``("memory", None)`` for the
    address operands and offset in brackets, ``("source", name)`` for each other source,
    and ``("target", None)`` for a branch target."""
    slots = [("rd", None)] if spec.writes else []
    if spec.address:
        slots.append(("memory", None))
    slots += [("source", name) for name in spec.values]
    if spec.immediate is ImmediateUse.TARGET:
        slots.append(("target", None))
    return slots


def signature(spec):
    """How an instruction is written, e.g. ``vld vd, [xa + xb + imm]``."""
    parts = []
    for slot, name in operand_slots(spec):
        if slot == "rd":
            parts.append(f"{_PREFIX[spec.rd]}d")
        elif slot == "memory":
            parts.append("[" + " + ".join([f"x{name}" for name in spec.address] + ["imm"]) + "]")
        elif slot == "source":
            parts.append(f"{_PREFIX[getattr(spec, name)]}{name}")
        else:
            parts.append("label")
    return f"{spec.mnemonic} {', '.join(parts)}" if parts else spec.mnemonic


def register_name(kind, index):
    return f"{_PREFIX[kind]}{index}"


def parse_register(text):
    """``("x"|"v"|"a", index)`` for a register or argument-word name, else ``None``."""
    match = _REGISTER.match(text)
    if not match:
        return None
    return match.group(1), int(match.group(2))


class LiteralError(ValueError):
    """A literal that is malformed or out of range for its operand."""


def is_float_text(text):
    lowered = text.lower().lstrip("+-")
    if lowered in FLOAT_WORDS:
        return True
    return not lowered.startswith(("0x", "0b", "0o")) and any(c in lowered for c in ".e")


def parse_integer(text):
    try:
        return int(text, 0)
    except ValueError:
        raise LiteralError(f"malformed number {text!r}") from None


def parse_float(text):
    """The FP32 bits of a float literal, rounded as ``numpy.float32(text)`` rounds it
    (to the nearest float64, then to the nearest FP32)."""
    lowered = text.lower()
    if lowered.lstrip("+") == "nan":
        return 0x7FC00000
    if lowered == "-nan":
        raise LiteralError("a NaN literal has no sign (every NaN is 0x7fc00000); "
                           "write raw bits in hex for another pattern")
    try:
        value = float(text)
    except ValueError:
        raise LiteralError(f"malformed number {text!r}") from None
    with np.errstate(over="ignore"):
        bits = int(np.float32(value).view(np.uint32))
    if bits & 0x7FFFFFFF == 0x7F800000 and value not in (float("inf"), float("-inf")):
        raise LiteralError(f"{text} is beyond the largest FP32 value (write inf for infinity)")
    if bits & 0x7FFFFFFF == 0 and value != 0:
        raise LiteralError(f"{text} rounds to zero in FP32")
    return bits


def format_scalar_immediate(value):
    """A signed value as a literal: decimal when short, hex otherwise."""
    if -65536 < value < 65536:
        return str(value)
    return f"-{-value:#x}" if value < 0 else f"{value:#x}"


def format_lane_immediate(bits, element):
    """32 lane bits as the literal that reads back to them for ``element``."""
    if element is Element.FP32:
        if bits == 0x7FC00000:
            return "nan"
        value = np.uint32(bits).view(np.float32)
        if not np.isnan(value):
            text = str(value)
            if is_float_text(text) and parse_float(text) == bits:
                return text
        return f"{bits:#010x}"
    if element is Element.INT32:
        signed = bits - (1 << 32) if bits >> 31 else bits
        return str(signed) if -65536 < signed < 65536 else f"{bits:#010x}"
    return f"{bits:#010x}"
