"""N lanes of an FP unit behind one vector stream, against the MPFR reference, with
random back-pressure, in Amaranth's simulator; its Verilog export; and the checks of its
configuration."""

import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from matndp.hw.export import export_verilog
from matndp.hw.fp.addsub import FPAddSub
from matndp.hw.fp.fma import FPFusedMultiplyAdd
from matndp.hw.fp.lanes import FPLanes, FPLanesSignature, LanesConfig
from matndp.hw.fp.opcodes import AddSubOp, MultiplyOp
from matndp.hw.fp.units import operations_of
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


@pytest.mark.parametrize("unit_class, lanes, count", [
    (FPAddSub, 4, 120),
    (FPFusedMultiplyAdd, 2, 80),
], ids=["addsub-4-lanes", "fma-2-lanes"])
def test_lanes_match_reference(unit_class, lanes, count):
    operations = operations_of(unit_class)
    rng = np.random.default_rng(9)
    chosen = rng.integers(0, len(operations), count)
    columns = random_operands("fma", count * lanes, seed=21)   # three operands for all
    a, b, c = (column.reshape(count, lanes) for column in columns)
    vectors = [(list(zip(a[i].tolist(), b[i].tolist(), c[i].tolist())),
                operations[chosen[i]].code) for i in range(count)]
    results = np.array(_run_lanes(FPLanes(LanesConfig(unit_class, lanes)), vectors, seed=4),
                       dtype=np.uint32)
    assert results.shape == (count, lanes)
    for index, operation in enumerate(operations):
        rows = chosen == index
        operands = [x[rows].ravel() for x in (a, b, c)[:operation.arity]]
        expected = reference(operation.name, *operands)
        problems = mismatches(expected, results[rows].ravel(), *operands)
        assert not problems, "\n".join(problems)


def test_lanes_export_to_verilog_with_the_units_latency():
    lanes = FPLanes(LanesConfig(FPAddSub, 2))
    assert lanes.LATENCY == FPAddSub.LATENCY
    assert lanes.OPS is AddSubOp
    assert lanes.signature == FPLanesSignature(2, AddSubOp)
    assert lanes.signature != FPLanesSignature(2, MultiplyOp)
    assert lanes.signature != FPLanesSignature(3, AddSubOp)
    text = export_verilog(lanes, "fp_lanes")
    assert "module fp_lanes" in text
    assert text.count("fp_lanes.lane") >= 2


# A refused configuration is refused before any component exists, so nothing is left to
# be reported as never elaborated (warnings are errors in this suite).
@pytest.mark.parametrize("lanes", [0, -1, 2.5, True])
def test_bad_lane_count_is_named(lanes):
    with pytest.raises(ValueError, match="lanes must be a positive integer"):
        LanesConfig(FPAddSub, lanes)


@pytest.mark.parametrize("unit", [int, "FPAddSub"], ids=["other-class", "name"])
def test_unit_that_is_not_an_fp_unit_class_is_named(unit):
    with pytest.raises(TypeError, match="unit must be an FP unit class"):
        LanesConfig(unit, 2)
