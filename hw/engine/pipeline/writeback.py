"""WRITE-BACK: the units' answers, one per cycle, into the register files.

Every unit answers with the slot and a value (the shared units also with an error); a
round-robin merge takes one answer a cycle, the sub-core's own units' before the shared
units' completions, and an in-order unit's answer that loses it waits in a spill register,
so the unit goes on taking instructions. Where the answer goes is kept here: the units of
:data:`~.layouts.IN_ORDER_UNITS` answer in the order they were given instructions, so each
has a queue of the destinations of its instructions in flight, pushed by DISPATCH and
popped with the answer; a µthread has at most one memory and one scratchpad access in
flight, whose destinations the slot keeps. The answer is written to its register, and the
scoreboard learns that it is no longer in flight. When it was the µthread's last
instruction in flight and the µthread carried ``exit``, failed (a memory access answered
with an error) or is dying, the µthread ends here, unless an instruction of it is still on
its way to DISPATCH, which then ends it; a failed access with more in flight leaves the
µthread dying.
"""

from amaranth.hdl import Cat, Const, Module, Signal, unsigned
from amaranth.lib import data, stream
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out, connect

from ...stream import RoundRobinMerge, SpillRegister
from ..component import EngineComponent
from ..decoder import OperandClass
from ..layouts import (SCALAR_BITS, ErrorCause, ThreadKind, completion_layout,
                       scalar_result_layout, vector_layout, vector_result_layout)
from .layouts import (IN_ORDER_UNITS, RESULT_SOURCES, SCALAR_UNITS, SHARED_UNITS, VECTOR_UNITS,
                      destination_layout, ending_members, register_bits, register_write_layout,
                      slot_update_layout)
from .scoreboard import answer_layout


__all__ = ["WriteBack", "SCALAR_SPILLS"]


#: Spill registers behind each scalar unit (one behind each vector unit): with one, the
#: ALU's answers still lost the merge twice in a row often enough to replay 0.38
#: instructions a sector of layernorm_stats at 768 columns (none spilled: 0.70); with two,
#: 0.21.
SCALAR_SPILLS = 2


class WriteBack(EngineComponent):
    """Ports:

    alu … scratchpad: the answers of every unit (:data:`~.layouts.RESULT_SOURCES`).
    update_valid / update: DISPATCH sent an instruction on (its destination is queued
                    when a unit of :data:`~.layouts.IN_ORDER_UNITS` will answer it).
    room:           per unit of :data:`~.layouts.IN_ORDER_UNITS`, room in its queue.
    memory_dest, scratchpad_dest: per slot, where its shared-unit access writes.
    last:           per slot, one instruction in flight (from the scoreboard).
    exit_pending, dying, in_pipe, entry, kind: per slot, its µthread's state.
    killed, decided: DISPATCH's ``kill`` and ``decided`` of this cycle.
    scalar_write, vector_write: the register files' write ports.
    answer_valid / answer: the answer taken, for the scoreboard.
    end, kill, retire_valid / retire, error_valid / error: the µthread that ended or
                    ends once its instructions in flight are back, and its error.
    """

    def __init__(self, config):
        self.config = config
        engine = config.engine
        slots = engine.slots
        per_slot = lambda shape: In(data.ArrayLayout(shape, slots))
        members = {}
        for name in SCALAR_UNITS.values():
            members[name] = In(stream.Signature(scalar_result_layout(config)))
        for name in VECTOR_UNITS.values():
            members[name] = In(stream.Signature(vector_result_layout(config)))
        for name in SHARED_UNITS.values():
            members[name] = In(stream.Signature(completion_layout(config)))
        members.update({
            "update_valid":    In(1),
            "update":          In(slot_update_layout(config)),
            "room":            Out(len(IN_ORDER_UNITS)),
            "memory_dest":     per_slot(destination_layout(config)),
            "scratchpad_dest": per_slot(destination_layout(config)),
            "last":            In(slots),
            "exit_pending":    In(slots),
            "dying":           In(slots),
            "in_pipe":         In(slots),
            "entry":           per_slot(unsigned(config.trigger.entry_bits)),
            "kind":            per_slot(ThreadKind),
            "killed":          In(slots),
            "decided":         In(slots),
            "scalar_write":    Out(register_write_layout(config, unsigned(SCALAR_BITS))),
            "vector_write":    Out(register_write_layout(config, vector_layout(config))),
            "answer_valid":    Out(1),
            "answer":          Out(answer_layout(config)),
            **ending_members(config),
        })
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        config = self.config
        slots = config.engine.slots
        vector = vector_layout(config)
        result_width = max(vector.size, SCALAR_BITS)
        merged_layout = data.StructLayout({
            "slot": unsigned(config.engine.slot_bits), "value": unsigned(result_width),
            "error": unsigned(1)})
        sources = [getattr(self, name) for name in RESULT_SOURCES]
        # The shared units' completions wait in queues that never fill, while a unit of
        # the sub-core whose answer waits holds as a whole, and DISPATCH replays what it
        # offers it: so the sub-core's own units' answers go first, and a completion is
        # taken in a cycle none of them answers (docs/engine.md, "Write-back's order").
        # A pipelined engine chooses the answer to take a cycle ahead (a register), so
        # that no unit's ``valid`` reaches the register writes, the scoreboard and the
        # units' ``ready`` through the choice in one cycle: a cycle is lost when the
        # choice moves to a unit that starts answering while the chosen one is idle.
        m.submodules.merge = merge = RoundRobinMerge(
            merged_layout, len(sources), registered_choice=config.engine.pipelined,
            deferred=[position for position, name in enumerate(RESULT_SOURCES)
                      if name in SHARED_UNITS.values()])
        for position, (name, port, source) in enumerate(zip(RESULT_SOURCES, merge.i, sources)):
            if position < len(IN_ORDER_UNITS):
                # A unit's answer that loses the merge waits in registers of its own, so
                # the unit (which holds as a whole while its answer waits) still takes the
                # instruction DISPATCH offers next instead of replaying it. The scalar
                # units, which answer most of a kernel's address arithmetic, have two.
                spills = SCALAR_SPILLS if name in SCALAR_UNITS.values() else 1
                for place in range(spills if config.engine.writeback_spills else 0):
                    spill = SpillRegister(merged_layout)
                    m.submodules[f"{name}_spill{place}"] = spill
                    connect(m, spill.o, port)
                    port = spill.i
            m.d.comb += [
                port.valid.eq(source.valid),
                source.ready.eq(port.ready),
                port.payload.slot.eq(source.payload.slot),
                port.payload.value.eq(source.payload.value),
                port.payload.error.eq(source.payload.error
                                      if "error" in source.payload.shape().members else 0),
            ]
        done = merge.o.payload
        m.d.comb += merge.o.ready.eq(1)
        done_valid = merge.o.valid
        slot = done.slot

        # Where each answer goes: per in-order unit, a queue of its instructions' destinations
        # (as deep as a sub-core has slots: with one instruction in flight per µthread it
        # is never full); per slot, its memory and scratchpad access's.
        dest_layout = data.StructLayout({"rd_type": OperandClass, "rd": unsigned(register_bits())})
        heads = []
        update = self.update
        for position, (code, name) in enumerate(IN_ORDER_UNITS.items()):
            queue = SyncFIFO(width=dest_layout.size, depth=slots)
            m.submodules[f"{name}_destinations"] = queue
            head = Signal(dest_layout, name=f"{name}_destination")
            written = Signal(dest_layout, name=f"{name}_written")
            m.d.comb += [
                written.rd_type.eq(update.rd_type),
                written.rd.eq(update.rd),
                queue.w_data.eq(written),
                queue.w_en.eq(self.update_valid & update.answered & (update.unit == code)),
                self.room[position].eq(queue.w_rdy),
                head.eq(queue.r_data),
                queue.r_en.eq(merge.i[position].valid & merge.i[position].ready),
            ]
            heads.append(head)
        shared = {len(IN_ORDER_UNITS): self.memory_dest, len(IN_ORDER_UNITS) + 1:
                  self.scratchpad_dest}
        dest_type = Signal(OperandClass)
        dest_index = Signal(register_bits())
        error_pc = Signal(config.engine.pc_bits)
        with m.Switch(merge.index):
            for position, head in enumerate(heads):
                with m.Case(position):
                    m.d.comb += [dest_type.eq(head.rd_type), dest_index.eq(head.rd)]
            for position, dests in shared.items():
                with m.Case(position):
                    dest = dests[slot]
                    m.d.comb += [dest_type.eq(dest.rd_type), dest_index.eq(dest.rd),
                                 error_pc.eq(dest.pc)]

        register = Cat(dest_index, slot)
        m.d.comb += [
            self.scalar_write.addr.eq(register),
            self.scalar_write.data.eq(done.value[:SCALAR_BITS]),
            self.scalar_write.en.eq(done_valid & ~done.error & (dest_type == OperandClass.SCALAR)),
            self.vector_write.addr.eq(register),
            self.vector_write.data.eq(done.value[:vector.size]),
            self.vector_write.en.eq(done_valid & ~done.error & (dest_type == OperandClass.VECTOR)),
            self.answer_valid.eq(done_valid),
            self.answer.slot.eq(slot),
            self.answer.rd_type.eq(dest_type),
            self.answer.rd.eq(dest_index),
            self.answer.memory.eq(merge.index == len(IN_ORDER_UNITS)),
            self.answer.scratchpad.eq(merge.index == len(IN_ORDER_UNITS) + 1),
        ]

        bit = lambda value: value.bit_select(slot, 1)
        dying = bit(self.dying) | bit(self.killed)
        ahead = bit(self.in_pipe) & ~bit(self.decided)     # an instruction on its way
        finishing = done.error | bit(self.exit_pending) | dying
        slot_bit = Const(1, slots) << slot
        with m.If(done_valid):
            with m.If(finishing & bit(self.last) & ~ahead):
                m.d.comb += self.end.eq(slot_bit)
            with m.Elif(done.error):
                m.d.comb += self.kill.eq(slot_bit)
        m.d.comb += [
            self.retire_valid.eq(self.end.any()),
            self.retire.entry.eq(self.entry[slot]),
            self.retire.kind.eq(self.kind[slot]),
            self.retire.error.eq(done.error | dying),
            self.error_valid.eq(done_valid & done.error),
            self.error.entry.eq(self.entry[slot]),
            self.error.pc.eq(error_pc),
            self.error.cause.eq(ErrorCause.MEMORY_ERROR),
        ]
        return m
