"""The memory-side arbiter: the GPU path and the engine share one port toward the memory
controller (docs/architecture.md, "Arbiter").

It sits below the trigger, so engine accesses never trigger. Requests toward memory carry
one more id bit than either source, naming it (0: GPU, 1: engine); read responses return
to their source by that bit. GPU requests win; engine requests take the cycles the GPU
leaves idle and, while one waits, at least one slot in ``ndp_share_period``
(:class:`~matndp.hw.config.ArbiterConfig`), so a saturating GPU stream cannot starve the
engine. The engine accepts its responses at once (it reserves room when it issues), so an
engine response never holds a GPU response. No register is added on either path: with the
engine idle the GPU path is exactly as without the arbiter.

A request, once offered toward memory, stays offered and unchanged until taken (the
choice is held), as the stream rules require.
"""

import dataclasses

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .layouts import MemoryPortSignature


__all__ = ["MemoryArbiter", "with_id_width"]


def with_id_width(config, id_width):
    """``config`` with request and response ids ``id_width`` bits wide (for the layouts of
    the engine's and the memory side's ports)."""
    return dataclasses.replace(config, id_width=id_width)


class MemoryArbiter(wiring.Component):
    """Ports: ``gpu`` and ``ndp`` (targets, from the trigger and the engine), ``mem``
    (initiator, toward memory); ``ndp_slot`` pulses when the engine's request is taken
    because of its minimum share rather than an idle GPU cycle."""

    def __init__(self, config):
        self.config = config
        super().__init__({
            "gpu":      In(MemoryPortSignature(config)),
            "ndp":      In(MemoryPortSignature(with_id_width(config, config.ndp_id_width))),
            "mem":      Out(MemoryPortSignature(with_id_width(config, config.mem_id_width))),
            "ndp_slot": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        gpu, ndp, mem = self.gpu, self.ndp, self.mem
        period = config.arbiter.ndp_share_period
        source_bit = config.mem_id_width - 1

        # --- requests -------------------------------------------------------------------------
        # GPU cycles won while an engine request waited; at period - 1 the engine's turn.
        waited = Signal(range(max(2, period)))
        share_due = Signal()
        if period:
            m.d.comb += share_due.eq(waited == period - 1)
        held = Signal()
        held_ndp = Signal()
        fresh_ndp = ndp.req.valid & (~gpu.req.valid | share_due)
        choose_ndp = Mux(held, held_ndp, fresh_ndp)
        m.d.comb += [
            mem.req.valid.eq(gpu.req.valid | ndp.req.valid),
            mem.req.payload.addr.eq(Mux(choose_ndp, ndp.req.payload.addr, gpu.req.payload.addr)),
            mem.req.payload.write.eq(Mux(choose_ndp, ndp.req.payload.write, gpu.req.payload.write)),
            mem.req.payload.data.eq(Mux(choose_ndp, ndp.req.payload.data, gpu.req.payload.data)),
            mem.req.payload.mask.eq(Mux(choose_ndp, ndp.req.payload.mask, gpu.req.payload.mask)),
            mem.req.payload.id.eq(Mux(choose_ndp, Cat(ndp.req.payload.id, 1),
                                      gpu.req.payload.id)),
            gpu.req.ready.eq(mem.req.ready & ~choose_ndp),
            ndp.req.ready.eq(mem.req.ready & choose_ndp),
        ]
        taken = mem.req.valid & mem.req.ready
        with m.If(taken):
            m.d.sync += held.eq(0)
        with m.Elif(mem.req.valid):
            m.d.sync += [held.eq(1), held_ndp.eq(choose_ndp)]
        if period:
            with m.If(ndp.req.valid & ndp.req.ready):
                m.d.sync += waited.eq(0)
            with m.Elif(ndp.req.valid & gpu.req.valid & gpu.req.ready & (waited != period - 1)):
                m.d.sync += waited.eq(waited + 1)
        m.d.comb += self.ndp_slot.eq(ndp.req.valid & ndp.req.ready & gpu.req.valid)

        # --- responses ------------------------------------------------------------------------
        to_ndp = mem.resp.payload.id[source_bit]
        m.d.comb += [
            gpu.resp.payload.data.eq(mem.resp.payload.data),
            gpu.resp.payload.id.eq(mem.resp.payload.id[:config.id_width]),
            gpu.resp.payload.status.eq(mem.resp.payload.status),
            ndp.resp.payload.data.eq(mem.resp.payload.data),
            ndp.resp.payload.id.eq(mem.resp.payload.id[:config.ndp_id_width]),
            ndp.resp.payload.status.eq(mem.resp.payload.status),
            gpu.resp.valid.eq(mem.resp.valid & ~to_ndp),
            ndp.resp.valid.eq(mem.resp.valid & to_ndp),
            # The engine takes every response at once; only the GPU side may hold one.
            mem.resp.ready.eq(Mux(to_ndp, 1, gpu.resp.ready)),
        ]
        return m
