"""DISPATCH, the last stage of a sub-core's issue pipeline: the instruction goes to its unit,
or its µthread is replayed or ended.

An instruction that failed one of its checks (worked out in OPERANDS, :mod:`.check`) ends
the µthread with an error naming entry, pc and cause. A µthread of a stopped entry ends
without one. An instruction whose unit cannot take it (busy, the ordering station's queue
of the µthread full) or that must wait for its entry's turn is *replayed*: the slot stays
at its pc and becomes eligible again. Branches and ``exit`` complete here, as do an
ordered entry's posted atomics (docs/engine.md, "Determinism") and, with
``posted_stores``, stores (docs/engine.md, "Posted stores"). A µthread that fails a check
or is stopped while instructions of it are in flight is *dying*: its end waits for them.

An instruction sent to a unit that answers it is *in flight*: the scoreboard marks what it
writes, and with ``in_flight`` above 1 the instruction at the slot's next pc is read for
the scoreboard to decode (*lookahead*) while the slot stays busy a cycle more; an
instruction that completes here while nothing else is in flight frees the slot at once.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out

from ..component import SubCoreComponent
from ..decoder import OperandClass, UnitCode
from ..isa import MEMORY_STORES, Opcode
from ..layouts import (ErrorCause, ThreadKind, memory_op_layout, order_bits,
                       scalar_request_layout, scratchpad_op_layout, vector_request_layout)
from .check import ends_thread, turn_checks
from .layouts import (IN_ORDER_UNITS, SCALAR_UNITS, VECTOR_UNITS, dispatch_layout,
                      ending_members, slot_update_layout, stage_signature)
from .scoreboard import issue_layout


__all__ = ["Dispatch"]


class Dispatch(SubCoreComponent):
    """The DISPATCH stage of sub-core ``index`` (memory requests name µthreads across
    sub-cores). Ports:

    i:              DISPATCH's record (from OPERANDS).
    kind, ordered, released: per slot, its µthread's state.
    turn, holding, stopped: as :class:`~..sub_core.SubCore`'s (a pipelined engine's
                    OPERANDS has used them and ``ordered``, ``released`` a cycle before).
    alu … convert:  requests to the sub-core's units (:data:`~.layouts.SCALAR_UNITS`,
                    :data:`~.layouts.VECTOR_UNITS`).
    memory_ops, scratchpad_ops: requests to the shared units.
    idle:           per slot, nothing in flight (from the scoreboard).
    dying:          per slot, the µthread ends once its instructions in flight are back;
                    its instruction here is dropped.
    room:           per unit of :data:`~.layouts.IN_ORDER_UNITS`, room for one more
                    instruction in flight in write-back's record of it.
    issued:         the instruction went to its unit (or completed here).
    update_valid / update: the slot's new pc and what its instruction writes.
    issue_valid / issue: the instruction is in flight (for the scoreboard).
    lookahead_valid / lookahead_slot / lookahead_pc: the slot's next instruction to read.
    clear:          the slot may be picked again (completed here, or replayed).
    decided:        the slot whose instruction left the pipeline this cycle.
    end:            the slot's µthread ended here; ``kill``: it ends once its
                    instructions in flight are written back.
    release:        per entry, an ordered µthread that ends here hands the turn on.
    retire_valid / retire, error_valid / error: the µthread that ended, and its error.
    """

    def __init__(self, config, index=0):
        self.config = config
        self.index = index
        engine = config.engine
        slots = engine.slots
        entries = config.trigger.filter_entries
        per_slot = lambda shape: In(data.ArrayLayout(shape, slots))
        members = {
            "i":              In(stage_signature(dispatch_layout(config))),
            "kind":           per_slot(ThreadKind),
            "ordered":        In(slots),
            "released":       In(slots),
            "turn":           In(data.ArrayLayout(unsigned(order_bits(config)), entries)),
            "holding":        In(slots),
            "stopped":        In(entries),
            "idle":           In(slots),
            "dying":          In(slots),
            "room":           In(len(IN_ORDER_UNITS)),
        }
        for name in SCALAR_UNITS.values():
            members[name] = Out(stream.Signature(scalar_request_layout(config)))
        for name in VECTOR_UNITS.values():
            members[name] = Out(stream.Signature(vector_request_layout(config)))
        members.update({
            "memory_ops":     Out(stream.Signature(memory_op_layout(config))),
            "scratchpad_ops": Out(stream.Signature(scratchpad_op_layout(config))),
            "issued":         Out(1),
            "update_valid":   Out(1),
            "update":         Out(slot_update_layout(config)),
            "issue_valid":    Out(1),
            "issue":          Out(issue_layout(config)),
            "lookahead_valid": Out(1),
            "lookahead_slot": Out(engine.slot_bits),
            "lookahead_pc":   Out(engine.pc_bits),
            "clear":          Out(slots),
            "decided":        Out(slots),
            "release":        Out(entries),
            **ending_members(config),
        })
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        config = self.config
        engine = config.engine
        slots = engine.slots
        lanes = config.lanes
        entries = config.trigger.filter_entries
        record = self.i.payload
        valid = self.i.valid
        ctl = record.control
        slot = record.slot
        xa, xb, xc = (record.scalar[position] for position in range(3))
        va, vb, vc = (record.vector[position] for position in range(3))
        entry = record.entry
        opcode = ctl.opcode

        address = record.address
        cause = record.cause
        word_access = (opcode == Opcode.LW) | (opcode == Opcode.SW)

        # An ordered entry's atomics go to the ordering station, which applies them in
        # turn; all but the one that hands the turn on are posted (the µthread goes on).
        # The end of a µthread that has not handed the turn on with an atomic waits for
        # its turn and for its queued atomics, then hands the turn on itself.
        seq = record.seq
        ends = ends_thread(ctl)
        if engine.pipelined:        # worked out in OPERANDS
            needs_turn, turn_ok = record.needs_turn, record.turn_ok
            entry_stopped = record.entry_stopped
        else:
            needs_turn, turn_ok = turn_checks(
                ctl, ordered=self.ordered, released=self.released, turn=self.turn,
                holding=self.holding, slot=slot, entry=entry, seq=seq)
            entry_stopped = self.stopped.bit_select(entry, 1)
        ordered_atomic = needs_turn & ctl.atomic
        posted_atomic = ordered_atomic & ~ctl.release & ~ends
        # A store that passed its checks cannot be refused, so it needs no answer: the
        # µthread goes on, and the entry's completion waits for the port to take it.
        store = Cat(*(opcode == code for code in MEMORY_STORES)).any()
        posted_store = (ctl.unit == UnitCode.MEMORY) & store if engine.posted_stores else 0
        stopped = entry_stopped | self.dying.bit_select(slot, 1)

        next_pc = record.next_pc

        scalar_units = {code: getattr(self, name) for code, name in SCALAR_UNITS.items()}
        vector_units = {code: getattr(self, name) for code, name in VECTOR_UNITS.items()}
        for request in scalar_units.values():
            m.d.comb += [request.payload.slot.eq(slot), request.payload.opcode.eq(opcode),
                         request.payload.a.eq(xa), request.payload.b.eq(xb)]
        for request in vector_units.values():
            m.d.comb += [request.payload.slot.eq(slot), request.payload.opcode.eq(opcode),
                         request.payload.a.eq(va), request.payload.b.eq(vb),
                         request.payload.c.eq(vc),
                         request.payload.x.eq(Mux(ctl.a.type == OperandClass.SCALAR, xa, xb))]
        thread = self.index * slots + slot
        memory_op = self.memory_ops.payload
        m.d.comb += [
            memory_op.thread.eq(thread),
            memory_op.opcode.eq(opcode),
            memory_op.addr.eq(address),
            memory_op.data.eq(Mux(word_access, Cat(*(xc[:32] for _ in range(lanes))), vc)),
            memory_op.mask.eq(record.mask),
            memory_op.posted.eq(posted_store),
            memory_op.entry.eq(entry),
        ]
        spad_op = self.scratchpad_ops.payload
        m.d.comb += [
            spad_op.thread.eq(thread),
            spad_op.opcode.eq(opcode),
            spad_op.addr.eq(address),
            spad_op.b.eq(vb),
            spad_op.c.eq(vc),
            spad_op.entry.eq(entry),
            # An atomic that ends an ordered µthread hands the turn on as it leaves the
            # ordering station, like one marked ``.r``.
            spad_op.release.eq(ctl.release | (ends & needs_turn)),
            spad_op.ordered.eq(ordered_atomic),
            spad_op.posted.eq(posted_atomic),
            spad_op.seq.eq(seq),
        ]

        proceed = valid & ~stopped & (cause == ErrorCause.NONE) & turn_ok
        unit_ready = Signal()
        in_order = {**scalar_units, **vector_units}
        with m.Switch(ctl.unit):
            for position, (code, request) in enumerate(in_order.items()):
                with m.Case(code):
                    m.d.comb += [request.valid.eq(proceed & self.room[position]),
                                 unit_ready.eq(request.ready & self.room[position])]
            with m.Case(UnitCode.MEMORY):
                m.d.comb += [self.memory_ops.valid.eq(proceed),
                             unit_ready.eq(self.memory_ops.ready)]
            with m.Case(UnitCode.SCRATCHPAD):
                m.d.comb += [self.scratchpad_ops.valid.eq(proceed),
                             unit_ready.eq(self.scratchpad_ops.ready)]
            with m.Default():       # CONTROL, BRANCH: complete here
                m.d.comb += unit_ready.eq(1)
        completes_here = ((ctl.unit == UnitCode.CONTROL) | (ctl.unit == UnitCode.BRANCH) |
                          posted_atomic | posted_store)
        dispatched = proceed & unit_ready
        failed = valid & ~stopped & (cause != ErrorCause.NONE)
        killed = valid & stopped
        m.d.comb += self.issued.eq(dispatched)

        answered = ~completes_here
        idle = self.idle.bit_select(slot, 1)
        m.d.comb += [
            self.update_valid.eq(dispatched),
            self.update.slot.eq(slot),
            self.update.next_pc.eq(next_pc),
            self.update.pc.eq(record.pc),
            self.update.unit.eq(ctl.unit),
            self.update.rd_type.eq(ctl.rd_type),
            self.update.rd.eq(ctl.rd),
            self.update.answered.eq(answered),
            self.update.ends.eq(ends),
            self.update.releases.eq(needs_turn & (ctl.release | ends)),
            self.issue_valid.eq(dispatched & answered),
            self.issue.slot.eq(slot),
            self.issue.rd_type.eq(ctl.rd_type),
            self.issue.rd.eq(ctl.rd),
            self.issue.memory.eq(ctl.unit == UnitCode.MEMORY),
            self.issue.scratchpad.eq(ctl.unit == UnitCode.SCRATCHPAD),
            self.lookahead_slot.eq(slot),
            self.lookahead_pc.eq(next_pc),
        ]
        # With a scoreboard, a slot whose instruction goes on stays busy while its next
        # instruction is looked up, unless nothing is in flight after this one.
        looks_ahead = engine.in_flight > 1
        frees_now = completes_here & idle if looks_ahead else 1
        slot_bit = Const(1, slots) << slot
        with m.If(valid):
            m.d.comb += self.decided.eq(slot_bit)
        with m.If(dispatched):
            with m.If(completes_here & ends):
                m.d.comb += self.end.eq(slot_bit)
            with m.Elif(frees_now):
                m.d.comb += self.clear.eq(slot_bit)
            if looks_ahead:
                with m.Elif(~ends):
                    m.d.comb += self.lookahead_valid.eq(1)
        with m.Elif(failed | killed):
            if looks_ahead:
                with m.If(idle):
                    m.d.comb += self.end.eq(slot_bit)
                with m.Else():
                    m.d.comb += self.kill.eq(slot_bit)
            else:
                # Nothing else of the µthread is in flight. (Here and above, a branch
                # that is never taken would leave an empty case in the Verilog, which
                # Yosys's reader refuses.)
                m.d.comb += self.end.eq(slot_bit)
        with m.Elif(valid):        # replay
            m.d.comb += self.clear.eq(slot_bit)

        # An ordered µthread that ends with no atomic in flight hands the turn on now.
        with m.If(dispatched & needs_turn & ends & ~ctl.atomic):
            m.d.comb += self.release.eq(Const(1, entries) << entry)
        m.d.comb += [
            self.retire_valid.eq(self.end.any()),
            self.retire.entry.eq(entry),
            self.retire.kind.eq(self.kind[slot]),
            self.retire.error.eq(failed | killed),
            self.error_valid.eq(failed),
            self.error.entry.eq(entry),
            self.error.pc.eq(record.pc),
            self.error.cause.eq(cause),
        ]
        return m
