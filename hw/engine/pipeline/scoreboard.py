"""The scoreboard of a sub-core: per µthread, the registers its instructions in flight will
write (ready bits), so that a µthread issues its next instruction while earlier ones are
in flight, in program order, as soon as that instruction neither reads nor writes one of
them.

Each slot counts its instructions in flight (sent to a unit that answers, not yet written
back), at most ``in_flight``, and marks the registers they write; a µthread has at most one
memory access and one scratchpad access in flight (the shared units answer each µthread's
one access, and one at a time keeps its accesses in program order), and an instruction
that ends the µthread waits until nothing is in flight. When DISPATCH sends an instruction
on, the instruction at the slot's next pc is read (a read port of the instruction memory
of its own) and decoded in the next cycle into what it *needs*: the registers it reads and
writes, whether it accesses memory or the scratchpad, whether it ends the µthread and
whether a unit will answer it. The slot is *ready* when none of that is pending, or when
nothing at all is in flight. PICK chooses only ready slots, so an instruction reaches
DECODE, where its registers are read, after every earlier write to them has been written
back; nothing is replayed for a register.

With ``in_flight`` = 1 there is nothing to look ahead at: a slot is ready when its one
instruction has been written back, as without a scoreboard.
"""

from amaranth.hdl import Cat, Const, Module, Signal, unsigned
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from ..component import EngineComponent
from ..decoder import Decoder, OperandClass, UnitCode
from ..isa import REGISTER_COUNT, OperandKind, instruction_layout
from .check import ends_thread
from .layouts import OPERAND_NAMES, register_bits


__all__ = ["Scoreboard", "needs_layout", "issue_layout", "answer_layout"]


def needs_layout():
    """What an instruction waits for: registers it reads or writes, and the shared units."""
    return data.StructLayout({
        "scalar":     unsigned(REGISTER_COUNT),
        "vector":     unsigned(REGISTER_COUNT),
        "memory":     unsigned(1),
        "scratchpad": unsigned(1),
        "drain":      unsigned(1),     # it ends the µthread: nothing may be in flight
        "answered":   unsigned(1),     # a unit answers it: it counts as in flight
    })


def issue_layout(config):
    """An instruction DISPATCH sent to a unit that answers it."""
    return data.StructLayout({
        "slot":       unsigned(config.engine.slot_bits),
        "rd_type":    OperandClass,
        "rd":         unsigned(register_bits()),
        "memory":     unsigned(1),
        "scratchpad": unsigned(1),
    })


def answer_layout(config):
    """An answer WRITE-BACK took: the instruction in flight it ends."""
    return issue_layout(config)


def _register_bits(rd_type, rd, kind):
    """The one-hot register ``rd`` if it is of ``kind`` (scalar ``x0`` is never one)."""
    bits = Const(1, REGISTER_COUNT) << rd
    if kind is OperandClass.SCALAR:
        return Cat(((rd_type == kind) & (rd != 0)).replicate(REGISTER_COUNT)) & bits
    return Cat((rd_type == kind).replicate(REGISTER_COUNT)) & bits


class Scoreboard(EngineComponent):
    """Ports:

    start:          slots whose µthread starts this cycle (nothing in flight).
    issue_valid / issue: DISPATCH sent an instruction to a unit that will answer it.
    lookahead_valid / lookahead_slot: DISPATCH sent an instruction of this slot on (to a
                    unit, or completed it) and the slot's next instruction is being read.
    lookahead:      that instruction's word, in the cycle after.
    answer_valid / answer: WRITE-BACK took an answer.
    idle:           per slot, nothing in flight.
    last:           per slot, exactly one instruction in flight.
    ready:          per slot, the instruction at its pc may be picked.
    looked_up:      the slot whose next instruction's needs are known from the next cycle.
    memory_next:    per slot, the instruction at its pc accesses memory, as last looked up
                    (a µthread that went on with nothing in flight is not looked up again
                    until its next instruction goes on; until then this tells of the one
                    before). Nothing with ``in_flight`` = 1.
    """

    def __init__(self, config):
        self.config = config
        engine = config.engine
        slots = engine.slots
        super().__init__({
            "start":           In(slots),
            "issue_valid":     In(1),
            "issue":           In(issue_layout(config)),
            "lookahead_valid": In(1),
            "lookahead_slot":  In(engine.slot_bits),
            "lookahead":       In(instruction_layout()),
            "answer_valid":    In(1),
            "answer":          In(answer_layout(config)),
            "idle":            Out(slots),
            "last":            Out(slots),
            "ready":           Out(slots),
            "looked_up":       Out(slots),
            "memory_next":     Out(slots),
        })

    def elaborate(self, platform):
        m = Module()
        engine = self.config.engine
        slots = engine.slots
        limit = engine.in_flight
        count_shape = range(limit + 1)
        counts = [Signal(count_shape, name=f"in_flight{slot}") for slot in range(slots)]
        issue, answer = self.issue, self.answer
        for slot, count in enumerate(counts):
            issued = self.issue_valid & (issue.slot == slot)
            answered = self.answer_valid & (answer.slot == slot)
            m.d.comb += [self.idle[slot].eq(count == 0), self.last[slot].eq(count == 1)]
            with m.If(self.start[slot]):
                m.d.sync += count.eq(0)
            with m.Elif(issued & ~answered):
                m.d.sync += count.eq(count + 1)
            with m.Elif(answered & ~issued):
                m.d.sync += count.eq(count - 1)
        if limit == 1:
            m.d.comb += self.ready.eq(self.idle)
            return m

        # Per slot: the registers written by instructions in flight, the shared units in
        # use, and what the instruction at its pc needs.
        layout = needs_layout()
        pending = Signal(data.ArrayLayout(layout, slots))
        needs = Signal(data.ArrayLayout(layout, slots))
        issue_bits = Signal(layout)
        answer_bits = Signal(layout)
        for bits, record in ((issue_bits, issue), (answer_bits, answer)):
            m.d.comb += [
                bits.scalar.eq(_register_bits(record.rd_type, record.rd, OperandClass.SCALAR)),
                bits.vector.eq(_register_bits(record.rd_type, record.rd, OperandClass.VECTOR)),
                bits.memory.eq(record.memory),
                bits.scratchpad.eq(record.scratchpad),
            ]
        for slot in range(slots):
            issued = self.issue_valid & (issue.slot == slot)
            answered = self.answer_valid & (answer.slot == slot)
            now = pending[slot].as_value()
            set_bits = Signal.like(now, name=f"set{slot}")
            clear_bits = Signal.like(now, name=f"clear{slot}")
            m.d.comb += [set_bits.eq(issue_bits.as_value() & issued.replicate(len(now))),
                         clear_bits.eq(answer_bits.as_value() & answered.replicate(len(now)))]
            with m.If(self.start[slot]):
                m.d.sync += [pending[slot].eq(0), needs[slot].eq(0)]
            with m.Else():
                m.d.sync += pending[slot].eq((now & ~clear_bits) | set_bits)

        # The next instruction's needs, decoded from the lookahead read.
        m.submodules.decoder = decoder = Decoder()
        m.d.comb += decoder.instruction.eq(self.lookahead)
        control = decoder.control
        wanted = Signal(layout)
        scalar_reads = [_register_bits(getattr(control, name).type, getattr(control, name).index,
                                       OperandClass.SCALAR) &
                        Cat((getattr(control, name).kind == OperandKind.REGISTER)
                            .replicate(REGISTER_COUNT))
                        for name in OPERAND_NAMES]
        vector_reads = [_register_bits(getattr(control, name).type, getattr(control, name).index,
                                       OperandClass.VECTOR) &
                        Cat((getattr(control, name).kind == OperandKind.REGISTER)
                            .replicate(REGISTER_COUNT))
                        for name in OPERAND_NAMES]
        m.d.comb += [
            wanted.scalar.eq(scalar_reads[0] | scalar_reads[1] | scalar_reads[2] |
                             _register_bits(control.rd_type, control.rd, OperandClass.SCALAR)),
            wanted.vector.eq(vector_reads[0] | vector_reads[1] | vector_reads[2] |
                             _register_bits(control.rd_type, control.rd, OperandClass.VECTOR)),
            wanted.memory.eq(control.unit == UnitCode.MEMORY),
            wanted.scratchpad.eq(control.unit == UnitCode.SCRATCHPAD),
            wanted.drain.eq(ends_thread(control)),
            wanted.answered.eq((control.unit != UnitCode.CONTROL) &
                               (control.unit != UnitCode.BRANCH)),
        ]
        looking = Signal()
        looking_slot = Signal(engine.slot_bits)
        m.d.sync += [looking.eq(self.lookahead_valid), looking_slot.eq(self.lookahead_slot)]
        with m.If(looking):
            m.d.sync += needs[looking_slot].eq(wanted)
            m.d.comb += self.looked_up.eq(Const(1, slots) << looking_slot)

        for slot, count in enumerate(counts):
            need, busy = needs[slot], pending[slot]
            clear = ((need.scalar & busy.scalar) == 0) & ((need.vector & busy.vector) == 0) & \
                ~(need.memory & busy.memory) & ~(need.scratchpad & busy.scratchpad) & \
                ~need.drain & (~need.answered | (count < limit))
            m.d.comb += [self.ready[slot].eq((count == 0) | clear),
                         self.memory_next[slot].eq(need.memory)]
        return m
