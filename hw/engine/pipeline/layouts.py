"""What each stage of a sub-core's issue pipeline holds, declared once.

A stage's record is registered at the end of the stage before it and carries the µthread's
slot and the instruction's pc along, growing as the instruction is decoded and its
operands are read. The pipeline never stalls (a µthread that cannot go on is replayed), so
a stage has a ``valid`` bit and no ``ready``.
"""

from amaranth.hdl import unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import Out

from ..decoder import OperandClass, UnitCode, control_layout
from ..isa import REGISTER_COUNT, instruction_layout
from ..layouts import (SCALAR_BITS, ErrorCause, error_layout, order_bits, retire_layout,
                       vector_layout)


__all__ = [
    "OPERAND_NAMES", "SCALAR_UNITS", "VECTOR_UNITS", "SHARED_UNITS", "IN_ORDER_UNITS",
    "RESULT_SOURCES", "destination_layout",
    "register_bits", "argument_block_bits", "fetch_layout", "decode_layout", "operands_layout",
    "dispatch_layout", "stage_signature", "thread_info_layout", "register_write_layout",
    "slot_update_layout", "ending_members",
]


OPERAND_NAMES = ("a", "b", "c")

# The units a sub-core dispatches to, by the decoder's unit code: its own scalar units, the
# vector units the engine connects to it, and the units all sub-cores share.
SCALAR_UNITS = {UnitCode.ALU: "alu", UnitCode.MULTIPLY: "multiply"}
VECTOR_UNITS = {UnitCode.FMA: "fma", UnitCode.VECTOR: "vector", UnitCode.DIVIDE: "divide",
                UnitCode.REDUCE: "reduce", UnitCode.CONVERT: "convert"}
SHARED_UNITS = {UnitCode.MEMORY: "memory", UnitCode.SCRATCHPAD: "scratchpad"}
# The units that answer in the order they were given instructions (the shared units answer
# in any order, but each µthread has at most one access in each).
IN_ORDER_UNITS = {**SCALAR_UNITS, **VECTOR_UNITS}
# The answers write-back merges, in the merge's order (its round robin starts with the first).
RESULT_SOURCES = (*SCALAR_UNITS.values(), *VECTOR_UNITS.values(), *SHARED_UNITS.values())


def register_bits():
    """Bits of a register index within one kind (scalar or vector)."""
    return (REGISTER_COUNT - 1).bit_length()


def argument_block_bits(config):
    return max(1, (config.engine.argument_blocks - 1).bit_length())


def _slot_pc(config):
    return {"slot": unsigned(config.engine.slot_bits), "pc": unsigned(config.engine.pc_bits)}


def fetch_layout(config):
    """FETCH: the picked slot and its pc (the instruction memory reads it)."""
    return data.StructLayout(_slot_pc(config))


def decode_layout(config):
    """DECODE: the instruction word."""
    return data.StructLayout({**_slot_pc(config), "word": instruction_layout()})


def operands_layout(config):
    """OPERANDS: the decoded control (register, argument and special reads under way)."""
    return data.StructLayout({**_slot_pc(config), "control": control_layout()})


def dispatch_layout(config):
    """DISPATCH: the control and each source operand's value, as a scalar and as a vector,
    the triggering access's byte mask (``vstm`` stores with it), the µthread's entry and
    sequence number (its low :func:`~..layouts.order_bits`: what its turn is compared
    with), and what the instruction's checks found (:class:`~.check.Check`): a memory or
    scratchpad access's address, the first check failed (``ErrorCause.NONE`` for none) and
    the pc after the instruction; in a pipelined engine also what DISPATCH decides on
    besides, as it stood a cycle before: the instruction's turn checks
    (:func:`~.check.turn_checks`) and whether its entry is stopped (docs/engine.md,
    "The pipelined engine")."""
    return data.StructLayout({
        **_slot_pc(config),
        "entry":   unsigned(config.trigger.entry_bits),
        "seq":     unsigned(order_bits(config)),
        "needs_turn":    unsigned(1),
        "turn_ok":       unsigned(1),
        "entry_stopped": unsigned(1),
        "control": control_layout(),
        "scalar":  data.ArrayLayout(unsigned(SCALAR_BITS), len(OPERAND_NAMES)),
        "vector":  data.ArrayLayout(vector_layout(config), len(OPERAND_NAMES)),
        "mask":    unsigned(config.sector_bytes),
        "address": unsigned(SCALAR_BITS),
        "cause":   ErrorCause,
        "next_pc": unsigned(config.engine.pc_bits),
    })


def stage_signature(layout):
    """A stage's record as its producer drives it."""
    return wiring.Signature({"valid": Out(1), "payload": Out(layout)})


def thread_info_layout(config):
    """The triggering access's scalars a µthread reads as specials, kept per slot."""
    return data.StructLayout({
        "offset": unsigned(config.addr_width),
        "addr":   unsigned(config.addr_width),
        "mask":   unsigned(config.sector_bytes),
        "write":  unsigned(1),
    })


def register_write_layout(config, shape):
    """A write into one slot's register of a register file of ``shape`` elements."""
    return data.StructLayout({
        "addr": unsigned(config.engine.slot_bits + register_bits()),
        "data": shape,
        "en":   unsigned(1),
    })


def slot_update_layout(config):
    """What DISPATCH changes when it sends a slot's instruction on: the slot's next pc, and
    what the instruction writes when a unit answers it (``answered``) and to which."""
    return data.StructLayout({
        "slot":      unsigned(config.engine.slot_bits),
        "next_pc":   unsigned(config.engine.pc_bits),
        "pc":        unsigned(config.engine.pc_bits),
        "unit":      UnitCode,
        "rd_type":   OperandClass,
        "rd":        unsigned(register_bits()),
        "answered":  unsigned(1),
        "ends":      unsigned(1),
        "releases":  unsigned(1),
    })


def destination_layout(config):
    """Where an instruction in flight writes its answer, and its pc (for an error)."""
    return data.StructLayout({
        "rd_type": OperandClass,
        "rd":      unsigned(register_bits()),
        "pc":      unsigned(config.engine.pc_bits),
    })


def ending_members(config):
    """The ports of a stage that decides an instruction's outcome (DISPATCH, WRITE-BACK):
    the slots whose µthread ended (``end``) or ends once its instructions in flight are
    written back (``kill``: it is dying), and the µthread that ended with its error, if
    any."""
    slots = config.engine.slots
    return {
        "end":          Out(slots),
        "kill":         Out(slots),
        "retire_valid": Out(1),
        "retire":       Out(retire_layout(config)),
        "error_valid":  Out(1),
        "error":        Out(error_layout(config)),
    }
