"""The disassembler: instruction words back to assembly text that assembles to the same
words (docs/isa.md, "Assembly language")."""

from matndp.hw.engine.isa import (SPECIALS, ImmediateUse, Instruction, OperandKind,
                                  OperandType)
from matndp.host.kernels.image import section_ranges, validate_image
from matndp.host.kernels.syntax import (EXIT_FLAG, RELEASE_FLAG, format_lane_immediate,
                                        format_scalar_immediate, operand_slots, register_name)


__all__ = ["disassemble", "disassemble_instruction"]


_MNEMONIC_WIDTH = 10


def _source(instruction, name, argument_names):
    """A source operand as written (the immediate included)."""
    spec = instruction.spec
    operand, kind = instruction.operand(name), getattr(spec, name)
    if operand.kind is OperandKind.REGISTER:
        return register_name(kind, operand.index)
    if operand.kind is OperandKind.SPECIAL:
        return SPECIALS[kind](operand.index).name
    if operand.kind is OperandKind.ARGUMENT:
        return argument_names.get(operand.index, f"a{operand.index}")
    if kind is OperandType.SCALAR:
        return format_scalar_immediate(instruction.signed_imm)
    return format_lane_immediate(instruction.imm, spec.element(name))


def _address(instruction, argument_names):
    """``[a + b + imm]``, dropping trailing x0 operands and a zero offset, so that the
    assembler, which fills the address operands in order, rebuilds the same fields."""
    spec = instruction.spec
    terms = [_source(instruction, name, argument_names) for name in spec.address]
    while terms and terms[-1] == "x0":
        terms.pop()
    text = " + ".join(terms)
    offset = instruction.signed_imm
    if offset or not terms:
        if not terms:
            text = format_scalar_immediate(offset)
        elif offset < 0:
            text += f" - {format_scalar_immediate(-offset)}"
        else:
            text += f" + {format_scalar_immediate(offset)}"
    return f"[{text}]"


def disassemble_instruction(word, pc=None, labels=None, argument_names=None):
    """One instruction word as text. Branch targets are ``labels[pc + imm]`` when given,
    else written relative (``.+N``). Raises ``IllegalInstruction`` for an illegal word."""
    instruction = word if isinstance(word, Instruction) else Instruction.decode(word)
    spec = instruction.spec
    argument_names = argument_names or {}
    mnemonic = spec.mnemonic
    if instruction.release:
        mnemonic += f".{RELEASE_FLAG}"
    if instruction.exit:
        mnemonic += f".{EXIT_FLAG}"
    parts = []
    for slot, name in operand_slots(spec):
        if slot == "rd":
            parts.append(register_name(spec.rd, instruction.rd))
        elif slot == "memory":
            parts.append(_address(instruction, argument_names))
        elif slot == "source":
            parts.append(_source(instruction, name, argument_names))
        else:
            displacement = instruction.signed_imm
            target = None if pc is None else pc + displacement
            if labels is not None and target in labels:
                parts.append(labels[target])
            else:
                parts.append(f".{'+' if displacement >= 0 else '-'}{abs(displacement)}")
    if not parts:
        return mnemonic
    return f"{mnemonic:<{_MNEMONIC_WIDTH}} {', '.join(parts)}"


def _label_names(instructions, argument_names):
    taken = set(argument_names.values())
    labels = {}
    for pc, instruction in enumerate(instructions):
        if instruction.spec.immediate is ImmediateUse.TARGET:
            target = pc + instruction.signed_imm
            name = f"L{target}"
            while name in taken:
                name += "_"
            labels.setdefault(target, name)
    return labels


def disassemble(image):
    """The whole kernel as source text: ``.kernel``, its ``.arg`` names, each section with
    labels ``L<index>`` at branch targets. Raises ``InvalidImage`` for an invalid image."""
    instructions = validate_image(image)
    argument_names = {index: name for name, index in image.arguments.items()}
    labels = _label_names(instructions, argument_names)
    lines = [f".kernel {image.name}"]
    lines += [f".arg {name} {index}" for name, index in
              sorted(image.arguments.items(), key=lambda item: item[1])]
    for section, (start, end) in section_ranges(image).items():
        lines += ["", f".{section.value}"]
        for pc in range(start, end):
            if pc in labels:
                lines.append(f"{labels[pc]}:")
            lines.append("    " + disassemble_instruction(instructions[pc], pc, labels, argument_names))
    return "\n".join(lines) + "\n"
