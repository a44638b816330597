"""VectorDivide (hw/engine/divide.py): vdiv, vsqrt and vrsqrt lane by lane against the
independent FP golden model, in instruction order, for every way of sharing the units
among the lanes, with random back-pressure on both streams; instructions stream through at
one per pass, each result offered ``cycles_per_instruction`` after its instruction is
taken; and a vdiv never overtakes a vrsqrt still in the square-root units."""

import numpy as np
import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.divide import VectorDivide
from matndp.hw.engine.isa import Opcode
from matndp.hw.fp.sqrt import FPSqrt
from matndp.sim.golden.fp import SPECIAL_VALUES, random_operands, reference

from .harness import DispatchSource, Sink, Source, simulate
from ..streams import shared


ONE = np.uint32(0x3F800000)
OPCODES = (Opcode.VDIV, Opcode.VSQRT, Opcode.VRSQRT)


def _unit(divide_units):
    return shared(VectorDivide, NDPConfig(engine=EngineConfig(divide_units=divide_units)))


def _golden(opcode, a, b):
    if opcode == Opcode.VDIV:
        return reference("div", a, b)
    if opcode == Opcode.VSQRT:
        return reference("sqrt", a)
    return reference("div", np.full(len(a), ONE), reference("sqrt", a))


def _operands(rng, lanes, index):
    """Special values among random words, or the FP checks' biased division operands."""
    if index % 2:
        pool = np.concatenate([SPECIAL_VALUES,
                               rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)])
        return rng.choice(pool, size=(2, lanes)).astype(np.uint32)
    a, b = random_operands("div", lanes, seed=int(rng.integers(1 << 16)))
    return np.stack([a, b])


def _instructions(unit, opcodes, seed):
    """Requests (with their opcodes and expected values as notes) for ``opcodes``."""
    lanes = unit.config.lanes
    slots = unit.config.engine.slots
    rng = np.random.default_rng(seed)
    records = []
    for index, opcode in enumerate(opcodes):
        a, b = _operands(rng, lanes, index)
        request = {"slot": index % slots, "opcode": opcode, "a": a.tolist(), "b": b.tolist(),
                   "c": [0] * lanes, "x": 0}
        records.append((request, (index % slots, opcode, _golden(opcode, a, b))))
    return records


def _run(unit, records, *, pause, seed, dispatch=False):
    """Offer ``records`` (in order, each held until taken; or as :class:`~.harness.DispatchSource` does);
    returns the source's accepted and the sink's taken ``(cycle, ...)`` lists once every
    result is back. Every cycle with an offer also checks that whether the unit takes it
    does not depend on the offer's ``valid`` (DISPATCH's decision must not run through the
    unit's choice of what to issue)."""
    pending = list(records)
    source = DispatchSource(unit.request, records, pause=pause, seed=seed) if dispatch else \
        Source(unit.request, lambda: pending.pop(0) if pending else None, pause=pause, seed=seed)
    sink = Sink(unit.result, pause=pause, seed=seed + 1)
    # A vdiv may wait for a vrsqrt's roots; back-pressure slows both sides.
    limit = len(records) * (unit.passes + FPSqrt.LATENCY) * (4 if pause else 1) + 200

    async def bench(ctx):
        for cycle in range(limit):
            source.drive(ctx)
            sink.drive(ctx)
            if ctx.get(unit.request.valid):
                takes = ctx.get(unit.request.ready)
                ctx.set(unit.request.valid, 0)
                assert ctx.get(unit.request.ready) == takes, f"ready follows valid, cycle {cycle}"
                ctx.set(unit.request.valid, 1)
            source.sample(ctx, cycle)
            sink.sample(ctx, cycle)
            await ctx.tick()
            if len(sink.taken) == len(records):
                break
        ctx.set(unit.result.ready, 1)
        for _ in range(8):      # a result beyond the last would show within a few cycles
            await ctx.tick()
            assert not ctx.get(unit.result.valid), "a result beyond the last instruction"

    simulate(unit, bench)
    assert len(sink.taken) == len(records), \
        f"{len(sink.taken)} of {len(records)} results within {limit} cycles"
    return source.accepted, sink.taken


def _check_values(unit, records, taken):
    lanes = unit.config.lanes
    for index, ((_, (slot, opcode, expected)), (_, result)) in enumerate(zip(records, taken)):
        got = [int(result.value[lane]) for lane in range(lanes)]
        assert int(result.slot) == slot, f"result {index}: slot {int(result.slot)}, not {slot}"
        assert got == expected.tolist(), \
            f"result {index} ({opcode.name}): {[hex(v) for v in got]} != " \
            f"{[hex(int(v)) for v in expected]}"


@pytest.mark.parametrize("divide_units", [1, 2, 4, 8])
@pytest.mark.parametrize("pause", [0.0, 0.3])
def test_results_match_the_golden_model_in_order(divide_units, pause):
    unit = _unit(divide_units)
    rng = np.random.default_rng(divide_units)
    opcodes = [OPCODES[index] for index in rng.integers(0, 3, 48)]
    records = _instructions(unit, opcodes, seed=divide_units + 10)
    _, taken = _run(unit, records, pause=pause, seed=divide_units)
    _check_values(unit, records, taken)


@pytest.mark.parametrize("divide_units", [1, 2, 8])
def test_an_instruction_offered_a_cycle_at_a_time_is_taken_whole(divide_units):
    """DISPATCH offers an instruction for one cycle and replays its µthread when the unit
    refuses it, so the next offer may be another µthread's: a vector that passes the units
    in several groups is taken whole with its first, never mixed with another's lanes."""
    unit = _unit(divide_units)
    rng = np.random.default_rng(divide_units + 20)
    opcodes = [OPCODES[index] for index in rng.integers(0, 3, 32)]
    records = _instructions(unit, opcodes, seed=divide_units + 30)
    accepted, taken = _run(unit, records, pause=0.3, seed=divide_units, dispatch=True)
    _check_values(unit, [record for _, record in accepted], taken)


@pytest.mark.parametrize("divide_units", [1, 2, 8])
@pytest.mark.parametrize("opcode", OPCODES, ids=lambda opcode: opcode.name)
def test_instructions_stream_at_one_per_pass(divide_units, opcode):
    unit = _unit(divide_units)
    records = _instructions(unit, [opcode] * 12, seed=3)
    accepted, taken = _run(unit, records, pause=0.0, seed=1)
    _check_values(unit, records, taken)
    taken_at = [cycle for cycle, _ in accepted]
    assert np.diff(taken_at).tolist() == [unit.passes] * (len(records) - 1)
    latency = unit.cycles_per_instruction(opcode)
    assert [cycle for cycle, _ in taken] == [cycle + latency for cycle in taken_at]


@pytest.mark.parametrize("divide_units", [1, 8])
def test_a_vdiv_waits_for_the_roots_of_an_earlier_vrsqrt(divide_units):
    """At full rate a vdiv behind a vrsqrt would reach the dividers first; it must
    wait, while a vsqrt behind a vdiv or a vrsqrt and a vdiv behind a vsqrt stream on."""
    unit = _unit(divide_units)
    opcodes = [Opcode.VRSQRT, Opcode.VDIV, Opcode.VDIV, Opcode.VSQRT, Opcode.VRSQRT,
               Opcode.VSQRT, Opcode.VDIV, Opcode.VSQRT, Opcode.VDIV, Opcode.VRSQRT]
    records = _instructions(unit, opcodes, seed=7)
    accepted, taken = _run(unit, records, pause=0.0, seed=2)
    _check_values(unit, records, taken)
    taken_at = {index: cycle for index, (cycle, _) in enumerate(accepted)}
    roots = unit.cycles_per_instruction(Opcode.VSQRT) - 1
    # The first vdiv is taken once the vrsqrt's last group has left the square roots;
    # a vsqrt behind a vdiv or a vrsqrt, and a vdiv behind a vsqrt, follow at once.
    assert taken_at[1] - taken_at[0] >= roots
    assert taken_at[3] - taken_at[2] == unit.passes
    assert taken_at[5] - taken_at[4] == unit.passes
    assert taken_at[8] - taken_at[7] == unit.passes
