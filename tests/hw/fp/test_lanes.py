"""N lanes of an FP unit behind one vector stream, against the MPFR reference, with
random back-pressure, in Amaranth's simulator; and its Verilog export."""

import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from matndp.hw.export import export_verilog
from matndp.hw.fp.addsub import FPAddSub
from matndp.hw.fp.fma import FPFusedMultiplyAdd
from matndp.hw.fp.lanes import FPLanes
from matndp.sim.golden.fp import mismatches, random_operands, reference


def _run_lanes(lanes_unit, vectors, *, seed, pause=0.3):
    """Results of ``vectors`` (lists of (a, b, c) per lane, and an op) through the lanes."""
    rng = random.Random(seed)
    results = []

    async def source(ctx):
        for operands, op in vectors:
            while rng.random() < pause:
                await ctx.tick()
            ctx.set(lanes_unit.operands.valid, 1)
            for lane, (a, b, c) in enumerate(operands):
                ctx.set(lanes_unit.operands.payload.a[lane], a)
                ctx.set(lanes_unit.operands.payload.b[lane], b)
                ctx.set(lanes_unit.operands.payload.c[lane], c)
            ctx.set(lanes_unit.operands.payload.op, op)
            await ctx.tick().until(lanes_unit.operands.ready)
            ctx.set(lanes_unit.operands.valid, 0)

    async def sink(ctx):
        for _ in vectors:
            while rng.random() < pause:
                await ctx.tick()
            ctx.set(lanes_unit.result.ready, 1)
            payload, = await ctx.tick().sample(lanes_unit.result.payload).until(
                lanes_unit.result.valid)
            ctx.set(lanes_unit.result.ready, 0)
            results.append([int(x) for x in payload])

    simulator = Simulator(lanes_unit)
    simulator.add_clock(1e-8)
    simulator.add_testbench(source)
    simulator.add_testbench(sink)
    simulator.run()
    return results


@pytest.mark.parametrize("unit_class, ops, lanes, count", [
    (FPAddSub, {0: "add", 1: "sub"}, 4, 120),
    (FPFusedMultiplyAdd, {0: "fma"}, 2, 80),
], ids=["addsub-4-lanes", "fma-2-lanes"])
def test_lanes_match_reference(unit_class, ops, lanes, count):
    rng = np.random.default_rng(9)
    codes = rng.choice(list(ops), count)
    columns = random_operands("fma", count * lanes, seed=21)   # three operands for all
    a, b, c = (column.reshape(count, lanes) for column in columns)
    vectors = [(list(zip(a[i].tolist(), b[i].tolist(), c[i].tolist())), int(codes[i]))
               for i in range(count)]
    results = np.array(_run_lanes(FPLanes(unit_class, lanes), vectors, seed=4), dtype=np.uint32)
    assert results.shape == (count, lanes)
    for code, op in ops.items():
        rows = codes == code
        arity = 3 if op == "fma" else 2
        operands = [x[rows].ravel() for x in (a, b, c)[:arity]]
        expected = reference(op, *operands)
        problems = mismatches(expected, results[rows].ravel(), *operands)
        assert not problems, "\n".join(problems)


def test_lanes_export_to_verilog_with_the_units_latency():
    lanes = FPLanes(FPAddSub, 2)
    assert lanes.LATENCY == FPAddSub.LATENCY
    text = export_verilog(lanes, "fp_lanes")
    assert "module fp_lanes" in text
    assert text.count("fp_lanes.lane") >= 2


@pytest.mark.parametrize("lanes", [0, -1, 2.5])
def test_bad_lane_count_is_named(lanes):
    with pytest.raises(ValueError, match="lanes must be a positive integer"):
        FPLanes(FPAddSub, lanes)
