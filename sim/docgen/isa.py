"""Render ``docs/isa.md`` from the one ISA description (:mod:`matndp.hw.engine.isa`).

The prose lives in ``isa_template.md`` beside this module; every ``{{name}}`` in it is
replaced by a table generated here, so nothing the ISA defines is written twice.
"""

import importlib.resources
import re

from matndp.hw.engine.isa import (DIVISOR_FIELDS, ELEMENT_MEANING, ERROR_CAUSE_MEANING,
                                  FIELD_MEANING, INSTRUCTION_BITS, INSTRUCTION_FIELDS,
                                  INSTRUCTIONS, OPERAND_KIND_MEANING, SPECIAL_MEANING,
                                  UNIT_MEANING, ErrorCause, ImmediateUse, OperandKind,
                                  OperandType, ScalarSpecial, Unit, VectorSpecial)
from matndp.host.kernels.assembler import DEFAULT_INSTRUCTION_WORDS
from matndp.host.kernels.image import FORMAT, VERSION, Section
from matndp.host.kernels.syntax import (EXIT_FLAG, LANE_INTEGER_RANGE, RELEASE_FLAG,
                                        SCALAR_IMMEDIATE_RANGE, signature)


__all__ = ["render_isa_markdown"]


def _bits(lsb, width):
    return f"{lsb + width - 1}:{lsb}" if width > 1 else f"{lsb}"


def _field_table():
    lines = ["| bits | field | meaning |", "|---|---|---|"]
    top = {}
    for name, (lsb, width) in INSTRUCTION_FIELDS.items():
        head = name.split(".")[0]
        low, high = top.get(head, (lsb, lsb + width))
        top[head] = (min(low, lsb), max(high, lsb + width))
    for name, (low, high) in sorted(top.items(), key=lambda item: item[1]):
        lines.append(f"| {_bits(low, high - low)} | `{name}` | {_markdown(FIELD_MEANING[name])} |")
    return lines


def _markdown(text):
    """Docstring cross-references (``:class:`Opcode```) as code spans."""
    return re.sub(r":\w+:`([^`]+)`", r"`\1`", text)


def _operand_kinds():
    lines = ["| kind | code | meaning |", "|---|---|---|"]
    lines += [f"| {kind.name} | {kind.value} | {OPERAND_KIND_MEANING[kind]} |" for kind in OperandKind]
    return lines


def _specials():
    lines = ["| operand | name | index | meaning |", "|---|---|---|---|"]
    for kind, enum in (("scalar", ScalarSpecial), ("vector", VectorSpecial)):
        lines += [f"| {kind} | `{special.name}` | {special.value} | {SPECIAL_MEANING[special]} |"
                  for special in enum]
    return lines


def _elements():
    lines = ["| element | lanes hold |", "|---|---|"]
    lines += [f"| {element.value} | {meaning} |" for element, meaning in ELEMENT_MEANING.items()]
    return lines


def _operands_column(spec):
    parts = []
    for name in spec.sources:
        kind = getattr(spec, name)
        where = "address" if name in spec.address else kind.name.lower()
        element = spec.element(name)
        parts.append(f"{name}: {where}" + (f" {element.value}" if element else ""))
    return ", ".join(parts) or "–"


def _immediate_column(spec):
    if spec.immediate is ImmediateUse.OPERAND:
        return "operand" if spec.sources else "–"
    return spec.immediate.value


def _instructions():
    lines = []
    for unit in Unit:
        specs = [spec for spec in INSTRUCTIONS if spec.unit is unit]
        lines += [f"### {unit.value}: {UNIT_MEANING[unit]}", "",
                  "| opcode | syntax | operands | imm | semantics |", "|---|---|---|---|---|"]
        for spec in specs:
            flags = f" (`.{RELEASE_FLAG}`)" if spec.is_atomic else ""
            lines.append(f"| `{spec.opcode.value:#04x}` | `{signature(spec)}`{flags} | "
                         f"{_operands_column(spec)} | {_immediate_column(spec)} | {spec.semantics} |")
        lines.append("")
    return lines[:-1]


def _errors():
    lines = ["| cause | code | meaning |", "|---|---|---|"]
    lines += [f"| `{cause.name}` | {cause.value} | {ERROR_CAUSE_MEANING[cause]} |" for cause in ErrorCause]
    return lines


def _divisor_table():
    lines = ["| bits | field |", "|---|---|"]
    lines += [f"| {_bits(lsb, width)} | `{name}` |" for name, (lsb, width) in
              sorted(DIVISOR_FIELDS.items(), key=lambda item: item[1])]
    return lines


def _values():
    low, high = SCALAR_IMMEDIATE_RANGE
    lane_low, lane_high = LANE_INTEGER_RANGE
    return {
        "instruction_bits": str(INSTRUCTION_BITS),
        "scalar_range": f"{low} … {high}",
        "lane_range": f"{lane_low} … {lane_high:#x}",
        "exit_flag": EXIT_FLAG, "release_flag": RELEASE_FLAG,
        "instruction_words": str(DEFAULT_INSTRUCTION_WORDS),
        "format": FORMAT, "version": str(VERSION),
        "sections": ", ".join(f"`.{section.value}`" for section in Section),
        "register_types": ", ".join(f"`{kind.value}` {kind.name.lower()}" for kind in OperandType
                                    if kind is not OperandType.NONE),
    }


_TABLES = {
    "fields": _field_table, "operand_kinds": _operand_kinds, "specials": _specials,
    "elements": _elements, "instructions": _instructions, "errors": _errors,
    "divisor": _divisor_table,
}


def render_isa_markdown():
    template = importlib.resources.files("matndp.sim.docgen").joinpath("isa_template.md").read_text()
    values = _values()

    def substitute(match):
        name = match.group(1)
        if name in _TABLES:
            return "\n".join(_TABLES[name]())
        if name in values:
            return values[name]
        raise KeyError(f"isa_template.md: unknown placeholder {{{{{name}}}}}")
    return re.sub(r"\{\{(\w+)\}\}", substitute, template)
