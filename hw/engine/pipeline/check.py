"""The instruction's checks, worked out in OPERANDS from the operands it chooses, so that
DISPATCH decides from registers: the address of a memory or scratchpad access, the first
check the instruction fails (its error cause) and the pc after it; and what it owes its
entry's order (:func:`turn_checks`, in DISPATCH or, in a pipelined engine, in OPERANDS).

Checks, in order of precedence: the watchdog, a legal word, a memory access aligned and
within the window, a scratchpad access aligned and within the scratchpad.

Done in DISPATCH's cycle, the address's adders and the window's comparisons came before
its handshakes with the units, the ordering station's among them: the engine's longest
path in an FPGA build (docs/fpga.md, "The slice with its engine: paths before place and
route"). The watchdog compares the age the µthread will have a cycle later, when the
instruction is at DISPATCH (a living µthread's age goes up by one a cycle, up to its
limit), so an error names the same cycle and pc as when DISPATCH compared it.
"""

from amaranth.hdl import Module, Mux, Signal, unsigned
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from ..component import EngineComponent
from ..decoder import UnitCode, control_layout
from ..isa import Opcode
from ..layouts import SCALAR_BITS, ErrorCause


__all__ = ["Check", "ends_thread", "turn_checks"]


class Check(EngineComponent):
    """Combinational. Ports:

    slot, pc, control: the instruction's slot, pc and decoded control.
    a, b:           its first two source operands as scalars.
    age:            per slot, its µthread's age in cycles (this cycle's; the watchdog
                    compares the next).
    window_base, window_end, watchdog: as :class:`~..sub_core.SubCore`'s.
    address:        the access's address (memory and scratchpad instructions).
    cause:          the first check failed, or ``ErrorCause.NONE``.
    next_pc:        the pc after the instruction (a branch's target when taken).
    """

    def __init__(self, config):
        self.config = config
        engine = config.engine
        super().__init__({
            "slot":        In(engine.slot_bits),
            "pc":          In(engine.pc_bits),
            "control":     In(control_layout()),
            "a":           In(SCALAR_BITS),
            "b":           In(SCALAR_BITS),
            "age":         In(data.ArrayLayout(unsigned(32), engine.slots)),
            "window_base": In(config.addr_width + 1),
            "window_end":  In(config.addr_width + 1),
            "watchdog":    In(32),
            "address":     Out(SCALAR_BITS),
            "cause":       Out(ErrorCause),
            "next_pc":     Out(engine.pc_bits),
        })

    def elaborate(self, platform):
        m = Module()
        config, ctl = self.config, self.control
        opcode = ctl.opcode
        a, b = self.a, self.b

        address = self.address
        operand_sum = Signal(SCALAR_BITS)
        imm = ctl.imm.as_signed()
        m.d.comb += [operand_sum.eq(Mux(ctl.address_a, a, 0) + Mux(ctl.address_b, b, 0)),
                     address.eq(operand_sum + imm)]
        sector_aligned = address[:config.offset_bits] == 0
        word_aligned = address[:2] == 0
        word_access = (opcode == Opcode.LW) | (opcode == Opcode.SW)
        aligned = Mux(word_access, word_aligned, sector_aligned)
        in_space = address[config.addr_width:] == 0
        width = config.addr_width + 2
        if width <= SCALAR_BITS:
            # Within the address space, address - base and address + sector - 1 - end fit
            # in ``width`` bits as two's complement, and their low bits are those of the
            # operands' sum plus the immediate minus the bound: the comparisons add the
            # bound to the sum beside the address's own adder instead of after it.
            def sign_of(offset):
                return (operand_sum[:width] + offset[:width])[width - 1]
            at_or_above_base = ~sign_of(imm - self.window_base)
            sector_before_end = sign_of(imm + config.sector_bytes - 1 - self.window_end)
        else:
            at_or_above_base = address >= self.window_base
            sector_before_end = address + config.sector_bytes <= self.window_end
        in_window = in_space & at_or_above_base & sector_before_end
        spad_bits = (config.engine.scratchpad_bytes - 1).bit_length()
        in_scratchpad = address[spad_bits:] == 0
        age_at_dispatch = Signal(33)
        m.d.comb += age_at_dispatch.eq(self.age[self.slot] + 1)

        cause = self.cause
        with m.If(age_at_dispatch >= self.watchdog):
            m.d.comb += cause.eq(ErrorCause.WATCHDOG)
        with m.Elif(~ctl.legal):
            m.d.comb += cause.eq(ErrorCause.ILLEGAL_INSTRUCTION)
        with m.Elif((ctl.unit == UnitCode.MEMORY) & ~aligned):
            m.d.comb += cause.eq(ErrorCause.MISALIGNED)
        with m.Elif((ctl.unit == UnitCode.MEMORY) & ~in_window):
            m.d.comb += cause.eq(ErrorCause.OUT_OF_WINDOW)
        with m.Elif((ctl.unit == UnitCode.SCRATCHPAD) & ~sector_aligned):
            m.d.comb += cause.eq(ErrorCause.MISALIGNED)
        with m.Elif((ctl.unit == UnitCode.SCRATCHPAD) & ~in_scratchpad):
            m.d.comb += cause.eq(ErrorCause.SCRATCHPAD_RANGE)

        taken = Signal()
        with m.Switch(opcode):
            with m.Case(Opcode.BEQ):
                m.d.comb += taken.eq(a == b)
            with m.Case(Opcode.BNE):
                m.d.comb += taken.eq(a != b)
            with m.Case(Opcode.BLT):
                m.d.comb += taken.eq(a.as_signed() < b.as_signed())
            with m.Case(Opcode.BGE):
                m.d.comb += taken.eq(a.as_signed() >= b.as_signed())
            with m.Case(Opcode.BLTU):
                m.d.comb += taken.eq(a < b)
            with m.Case(Opcode.BGEU):
                m.d.comb += taken.eq(a >= b)
            with m.Case(Opcode.JUMP):
                m.d.comb += taken.eq(1)
        m.d.comb += self.next_pc.eq(Mux(taken, self.pc + imm, self.pc + 1))
        return m


def ends_thread(control):
    """Whether the instruction (its decoded ``control``) ends its µthread: ``exit``, or an
    instruction marked ``.x``."""
    return control.exit | (control.opcode == Opcode.EXIT)


def turn_checks(control, *, ordered, released, turn, holding, slot, entry, seq):
    """What a sub-core's instruction (its decoded ``control``) of the µthread in ``slot``
    (of ``entry``, sequence number ``seq``) owes its entry's order: ``(needs_turn,
    turn_ok)``. An ordered µthread that has not handed its turn on needs it for an atomic
    (which goes to the station, posted or not) and for its end, which may go only while it
    has the turn with none of its atomics still at the station. ``ordered``, ``released``:
    per slot; ``turn`` and ``holding``: the station's, ``holding`` per slot."""
    ends = ends_thread(control)
    needs_turn = ordered.bit_select(slot, 1) & ~released.bit_select(slot, 1) & \
        (control.atomic | ends)
    has_turn = (turn[entry] == seq) & ~holding.bit_select(slot, 1)
    return needs_turn, ~(needs_turn & ~control.atomic) | has_turn
