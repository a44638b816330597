"""WRITE-BACK: the units' answers, one per cycle, into the register files.

Every unit answers with the slot and a value (the shared units also with an error); a
round-robin merge takes one answer a cycle, which is written to the register the slot's
instruction in flight names. The slot becomes eligible again or, when the instruction
carried ``exit`` or failed (a memory access answered with an error), its µthread ends.
"""

from amaranth.hdl import Cat, Const, Module, unsigned
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out

from ...stream import RoundRobinMerge
from ..component import EngineComponent
from ..decoder import OperandClass
from ..layouts import (SCALAR_BITS, ErrorCause, ThreadKind, completion_layout,
                       scalar_result_layout, vector_layout, vector_result_layout)
from .layouts import (RESULT_SOURCES, SCALAR_UNITS, SHARED_UNITS, VECTOR_UNITS, ending_members,
                      register_bits, register_write_layout)


__all__ = ["WriteBack"]


class WriteBack(EngineComponent):
    """Ports:

    alu … scratchpad: the answers of every unit (:data:`~.layouts.RESULT_SOURCES`).
    dest_type, dest_index, exit_pending, entry, kind, inflight_pc: per slot, its
                    µthread's state and its instruction in flight.
    scalar_write, vector_write: the register files' write ports.
    clear:          the slot may be picked again.
    end:            the slot's µthread ended.
    retire_valid / retire, error_valid / error: the µthread that ended, and its error.
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
            "dest_type":    per_slot(OperandClass),
            "dest_index":   per_slot(unsigned(register_bits())),
            "exit_pending": In(slots),
            "entry":        per_slot(unsigned(config.trigger.entry_bits)),
            "kind":         per_slot(ThreadKind),
            "inflight_pc":  per_slot(unsigned(engine.pc_bits)),
            "scalar_write": Out(register_write_layout(config, unsigned(SCALAR_BITS))),
            "vector_write": Out(register_write_layout(config, vector_layout(config))),
            **ending_members(config),
        })
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        config = self.config
        slots = config.engine.slots
        vector = vector_layout(config)
        result_width = max(vector.size, SCALAR_BITS)
        answer_layout = data.StructLayout({
            "slot": unsigned(config.engine.slot_bits), "value": unsigned(result_width),
            "error": unsigned(1)})
        sources = [getattr(self, name) for name in RESULT_SOURCES]
        m.submodules.merge = merge = RoundRobinMerge(answer_layout, len(sources))
        for port, source in zip(merge.i, sources):
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
        dest_type = self.dest_type[slot]
        register = Cat(self.dest_index[slot], slot)
        m.d.comb += [
            self.scalar_write.addr.eq(register),
            self.scalar_write.data.eq(done.value[:SCALAR_BITS]),
            self.scalar_write.en.eq(done_valid & ~done.error & (dest_type == OperandClass.SCALAR)),
            self.vector_write.addr.eq(register),
            self.vector_write.data.eq(done.value[:vector.size]),
            self.vector_write.en.eq(done_valid & ~done.error & (dest_type == OperandClass.VECTOR)),
        ]
        slot_bit = Const(1, slots) << slot
        with m.If(done_valid):
            with m.If(done.error | self.exit_pending.bit_select(slot, 1)):
                m.d.comb += self.end.eq(slot_bit)
            with m.Else():
                m.d.comb += self.clear.eq(slot_bit)
        m.d.comb += [
            self.retire_valid.eq(self.end.any()),
            self.retire.entry.eq(self.entry[slot]),
            self.retire.kind.eq(self.kind[slot]),
            self.retire.error.eq(done.error),
            self.error_valid.eq(done_valid & done.error),
            self.error.entry.eq(self.entry[slot]),
            self.error.pc.eq(self.inflight_pc[slot]),
            self.error.cause.eq(ErrorCause.MEMORY_ERROR),
        ]
        return m
