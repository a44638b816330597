"""PICK, the first stage of a sub-core's issue pipeline: one eligible µthread a cycle,
round robin, whose pc addresses the instruction memory.

The slot picked is the first eligible one after the slot picked last, among the eligible
slots that are *preferred* when there are any (their next instruction accesses memory
while the load/store unit has room: docs/engine.md, "Memory first"), else among all. So
every µthread that stays eligible is picked once in ``slots`` cycles at worst, not counting
the cycles of a hold or those in which a preferred slot is picked instead.
"""

from amaranth.hdl import Const, Module, Mux, Signal, unsigned
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from ..component import EngineComponent
from .layouts import fetch_layout, stage_signature


__all__ = ["Pick"]


class Pick(EngineComponent):
    """Ports:

    eligible:   slots that may be picked.
    prefer:     slots picked before the other eligible ones.
    hold:       pick none this cycle (the sub-core's vector registers' first read port is
                wanted two cycles on; :class:`~..sub_core.SubCore`).
    pc:         per slot, its µthread's pc.
    imem_addr:  the instruction memory's read address (the picked slot's pc).
    picked:     the slot picked this cycle (one-hot, or none).
    o:          FETCH's record, registered.
    """

    def __init__(self, config):
        self.config = config
        engine = config.engine
        super().__init__({
            "eligible":  In(engine.slots),
            "prefer":    In(engine.slots),
            "hold":      In(1),
            "pc":        In(data.ArrayLayout(unsigned(engine.pc_bits), engine.slots)),
            "imem_addr": Out(engine.pc_bits),
            "picked":    Out(engine.slots),
            "o":         Out(stage_signature(fetch_layout(config))),
        })

    def elaborate(self, platform):
        m = Module()
        engine = self.config.engine
        slots, slot_bits = engine.slots, engine.slot_bits
        last_pick = Signal(slot_bits)
        any_eligible = Signal()
        pick_valid = Signal()
        pick_slot = Signal(slot_bits)
        preferred = Signal(slots)
        candidates = Signal(slots)
        m.d.comb += [preferred.eq(self.eligible & self.prefer),
                     candidates.eq(Mux(preferred.any(), preferred, self.eligible))]
        for step in reversed(range(slots)):
            candidate = (last_pick + 1 + step)[:slot_bits]
            with m.If(candidates.bit_select(candidate, 1)):
                m.d.comb += [any_eligible.eq(1), pick_slot.eq(candidate)]
        # The hold only gates the pick, so it stays off the instruction memory's address.
        m.d.comb += pick_valid.eq(any_eligible & ~self.hold)
        m.d.comb += self.imem_addr.eq(self.pc[pick_slot])
        with m.If(pick_valid):
            m.d.sync += last_pick.eq(pick_slot)
            m.d.comb += self.picked.eq(Const(1, slots) << pick_slot)
        m.d.sync += [self.o.valid.eq(pick_valid), self.o.payload.slot.eq(pick_slot),
                     self.o.payload.pc.eq(self.pc[pick_slot])]
        return m
