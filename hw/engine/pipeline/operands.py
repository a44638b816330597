"""OPERANDS: each source operand's value, chosen by its kind among the register read in
DECODE, a special register, the argument word and the immediate, both as a scalar and as
a vector (an argument or immediate broadcast to every lane), so DISPATCH hands every unit
the form it takes; and, from them, the instruction's checks (:class:`~.check.Check`)."""

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from ..component import SubCoreComponent
from ..isa import OperandKind, ScalarSpecial, VectorSpecial
from ..layouts import SCALAR_BITS, order_bits, vector_layout
from .check import Check, turn_checks
from .layouts import (OPERAND_NAMES, dispatch_layout, operands_layout, stage_signature,
                      thread_info_layout)


__all__ = ["Operands"]


class Operands(SubCoreComponent):
    """The OPERANDS stage of sub-core ``index`` (the ``SLOT`` special counts slots across
    sub-cores). Ports:

    i:             OPERANDS's record (from DECODE).
    scalar_read, vector_read, argument_read: per source operand, the data read in DECODE.
    event_data, thread_info: the slot's triggering access, read in DECODE.
    entry, seq:    per slot, its µthread's entry and sequence number.
    completed:     per entry, µthreads finished (the ``COMPLETED`` special).
    age, window_base, window_end, watchdog: for the checks (:class:`~.check.Check`).
    ordered, released, turn, holding, stopped: as DISPATCH's; a pipelined engine
                   works out the turn checks and the entry's stop here, a cycle before
                   DISPATCH uses them.
    o:             DISPATCH's record, registered.
    """

    def __init__(self, config, index=0):
        self.config = config
        self.index = index
        engine = config.engine
        entries = config.trigger.filter_entries
        operands = len(OPERAND_NAMES)
        super().__init__({
            "i":             In(stage_signature(operands_layout(config))),
            "scalar_read":   In(data.ArrayLayout(unsigned(SCALAR_BITS), operands)),
            "vector_read":   In(data.ArrayLayout(vector_layout(config), operands)),
            "argument_read": In(data.ArrayLayout(unsigned(SCALAR_BITS), operands)),
            "event_data":    In(vector_layout(config)),
            "thread_info":   In(thread_info_layout(config)),
            "entry":         In(data.ArrayLayout(unsigned(config.trigger.entry_bits),
                                                 engine.slots)),
            "seq":           In(data.ArrayLayout(unsigned(32), engine.slots)),
            "completed":     In(data.ArrayLayout(unsigned(config.counter_width), entries)),
            "age":           In(data.ArrayLayout(unsigned(32), engine.slots)),
            "window_base":   In(config.addr_width + 1),
            "window_end":    In(config.addr_width + 1),
            "watchdog":      In(32),
            "ordered":       In(engine.slots),
            "released":      In(engine.slots),
            "turn":          In(data.ArrayLayout(unsigned(order_bits(config)), entries)),
            "holding":       In(engine.slots),
            "stopped":       In(entries),
            "o":             Out(stage_signature(dispatch_layout(config))),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        slots = config.engine.slots
        lanes = config.lanes
        vector = vector_layout(config)
        record = self.i.payload
        control = record.control
        info = self.thread_info
        entry = self.entry[record.slot]
        immediate = control.imm.as_signed()
        scalar_special = Signal(data.ArrayLayout(unsigned(SCALAR_BITS), 8))
        m.d.comb += [
            scalar_special[ScalarSpecial.OFFSET.value].eq(info.offset),
            scalar_special[ScalarSpecial.ADDR.value].eq(info.addr),
            scalar_special[ScalarSpecial.ENTRY.value].eq(entry),
            scalar_special[ScalarSpecial.SEQ.value].eq(self.seq[record.slot]),
            scalar_special[ScalarSpecial.MASK.value].eq(info.mask[:64]),
            scalar_special[ScalarSpecial.WRITE.value].eq(info.write),
            scalar_special[ScalarSpecial.SLOT.value].eq(self.index * slots + record.slot),
            scalar_special[ScalarSpecial.COMPLETED.value].eq(self.completed[entry]),
        ]
        lane_index = Signal(vector)
        lane_mask = Signal(vector)
        for lane in range(lanes):
            m.d.comb += [
                lane_index[lane].eq(lane),
                lane_mask[lane].eq(info.mask[4 * lane:4 * lane + 4].all().replicate(32)),
            ]

        def broadcast(word):
            return Cat(*(word[:32] for _ in range(lanes)))

        m.submodules.check = check = Check(config)
        m.d.comb += [
            check.slot.eq(record.slot),
            check.pc.eq(record.pc),
            check.control.eq(control),
            check.age.eq(self.age),
            check.window_base.eq(self.window_base),
            check.window_end.eq(self.window_end),
            check.watchdog.eq(self.watchdog),
        ]
        out = self.o.payload
        for position, name in enumerate(OPERAND_NAMES):
            operand = getattr(control, name)
            scalar = Signal(SCALAR_BITS, name=f"scalar_{name}")
            with m.Switch(operand.kind):
                with m.Case(OperandKind.REGISTER):
                    m.d.comb += scalar.eq(Mux(operand.index == 0, 0,
                                              self.scalar_read[position]))
                with m.Case(OperandKind.SPECIAL):
                    m.d.comb += scalar.eq(scalar_special[operand.index[:3]])
                with m.Case(OperandKind.ARGUMENT):
                    m.d.comb += scalar.eq(self.argument_read[position])
                with m.Case(OperandKind.IMMEDIATE):
                    m.d.comb += scalar.eq(immediate)
            value = Signal(vector, name=f"vector_{name}")
            with m.Switch(operand.kind):
                with m.Case(OperandKind.REGISTER):
                    m.d.comb += value.eq(self.vector_read[position])
                with m.Case(OperandKind.SPECIAL):
                    with m.Switch(operand.index):
                        with m.Case(VectorSpecial.DATA.value):
                            m.d.comb += value.eq(self.event_data)
                        with m.Case(VectorSpecial.LANE.value):
                            m.d.comb += value.eq(lane_index)
                        with m.Case(VectorSpecial.LANEMASK.value):
                            m.d.comb += value.eq(lane_mask)
                with m.Case(OperandKind.ARGUMENT):
                    m.d.comb += value.eq(broadcast(self.argument_read[position]))
                with m.Case(OperandKind.IMMEDIATE):
                    m.d.comb += value.eq(broadcast(control.imm))
            m.d.sync += [out.scalar[position].eq(scalar), out.vector[position].eq(value)]
            if name in ("a", "b"):
                m.d.comb += getattr(check, name).eq(scalar)

        m.d.sync += [
            self.o.valid.eq(self.i.valid),
            out.slot.eq(record.slot),
            out.pc.eq(record.pc),
            out.control.eq(control),
            out.mask.eq(info.mask),
            out.entry.eq(entry),
            out.seq.eq(self.seq[record.slot]),
            out.address.eq(check.address),
            out.cause.eq(check.cause),
            out.next_pc.eq(check.next_pc),
        ]
        if config.engine.pipelined:
            # A cycle early, and exact but for a replay a cycle early: while a µthread has
            # the turn only its own releases move it on, and its ``released`` and
            # ``holding`` change only with its own instructions, decided before this one
            # got here; a turn that comes between here and DISPATCH is seen when the
            # µthread is picked again. An entry stopped in between stops the µthread at
            # its next instruction.
            needs_turn, turn_ok = turn_checks(
                control, ordered=self.ordered, released=self.released, turn=self.turn,
                holding=self.holding, slot=record.slot, entry=entry,
                seq=self.seq[record.slot][:order_bits(config)])
            m.d.sync += [out.needs_turn.eq(needs_turn), out.turn_ok.eq(turn_ok),
                         out.entry_stopped.eq(self.stopped.bit_select(entry, 1))]
        return m
