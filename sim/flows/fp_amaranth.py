"""Operand records through one FP unit in Amaranth's simulator, with random back-pressure
on both streams. Python runs every cycle, so this suits small sets and unit tests."""

import random

import numpy as np
from amaranth.sim import Simulator


__all__ = ["pack_records", "run_unit"]


def pack_records(layout, code, a, b, c):
    """The operand records of ``layout`` (a unit's ``operand_layout``) as integers, from
    the operand arrays and the op field ``code`` (one value, or one per record)."""
    codes = np.broadcast_to(np.asarray(code, dtype=np.uint32), np.shape(a))
    at_a, at_b, at_c, at_op = (layout[name].offset for name in ("a", "b", "c", "op"))
    return [x << at_a | y << at_b | z << at_c | op << at_op
            for x, y, z, op in zip(a.tolist(), b.tolist(), c.tolist(), codes.tolist())]


def run_unit(unit, code, a, b, c, *, pause=(0, 0), seed=1, cycles_per_record=4):
    """Result bit patterns of ``unit`` on the records (a, b, c, op=code), in order.
    ``code`` is the op field's value, one for all records or a sequence of one per
    record. ``pause`` holds (source, sink) per-cycle hold probabilities in 1/256. Raises
    AssertionError when results go missing (the run exceeds a generous cycle bound) or
    the unit produces more results than records."""
    records = pack_records(unit.operands.payload.shape(), code, a, b, c)
    source_pause, sink_pause = (p / 256 for p in pause)
    throttle = 1 / (1 - max(source_pause, sink_pause))
    limit = int(len(records) * cycles_per_record * throttle * 4) + 1000
    rng = random.Random(seed)
    results = []

    async def source(ctx):
        for record in records:
            while rng.random() < source_pause:
                await ctx.tick()
            ctx.set(unit.operands.valid, 1)
            ctx.set(unit.operands.payload.as_value(), record)
            await ctx.tick().until(unit.operands.ready)
            ctx.set(unit.operands.valid, 0)

    async def sink(ctx):
        cycles = 0
        for _ in records:
            while rng.random() < sink_pause:
                await ctx.tick()
                cycles += 1
            ctx.set(unit.result.ready, 1)
            while True:
                _, _, valid, payload = await ctx.tick().sample(unit.result.valid,
                                                               unit.result.payload)
                cycles += 1
                if valid:
                    break
                if cycles > limit:
                    raise AssertionError(f"{len(results)} of {len(records)} results after "
                                         f"{cycles} cycles: results went missing")
            ctx.set(unit.result.ready, 0)
            results.append(payload)
        # A duplicated result would appear within a few cycles.
        ctx.set(unit.result.ready, 1)
        for _ in range(16):
            _, _, valid = await ctx.tick().sample(unit.result.valid)
            if valid:
                raise AssertionError("the unit produced more results than records")

    simulator = Simulator(unit)
    simulator.add_clock(1e-8)
    # The source may legitimately still wait when records went missing; the sink decides.
    simulator.add_testbench(source, background=True)
    simulator.add_testbench(sink)
    simulator.run()
    return np.array(results, dtype=np.uint32)
