"""The engine's vector units against the independent FP golden model, lane by lane, with
random back-pressure on both sides."""

import numpy as np
import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.convert import VectorConvert
from matndp.hw.engine.fma_lanes import FMALanes
from matndp.hw.engine.isa import Opcode
from matndp.hw.engine.reduce import VectorReduce, reduce_unit
from matndp.hw.engine.serial_reduce import SerialReduce
from matndp.hw.engine.vector_misc import VectorMisc
from matndp.sim.golden.fp import SPECIAL_VALUES, canonicalize_nans, random_operands, reference

from ..streams import receive, send, simulate
from .harness import DispatchSource, Sink, Source


CONFIG = NDPConfig()
LANES = CONFIG.lanes


def _vectors(rng, count, specials=True):
    pool = np.concatenate([SPECIAL_VALUES, rng.integers(0, 1 << 32, 256, dtype=np.uint64)
                           .astype(np.uint32)]) if specials else None
    if specials:
        return rng.choice(pool, size=(count, LANES)).astype(np.uint32)
    return rng.integers(0, 1 << 32, (count, LANES), dtype=np.uint64).astype(np.uint32)


def _run(dut, requests, *, seed, pressure=0.3, cycles_each=12):
    results = []

    async def source(ctx):
        await send(ctx, dut.request, requests, seed=seed, idle=pressure)

    async def sink(ctx):
        await receive(ctx, dut.result, len(requests), seed=seed + 1, stall=pressure, into=results)

    simulate(dut, source, sink, cycles=cycles_each * len(requests) + 200)
    return results


def _request(slot, opcode, a, b=None, c=None, x=0):
    zero = [0] * LANES
    return {"slot": slot, "opcode": opcode, "a": [int(v) for v in a],
            "b": [int(v) for v in (zero if b is None else b)],
            "c": [int(v) for v in (zero if c is None else c)], "x": x}


def _check(results, expected):
    assert [int(r.slot) for r in results] == [slot for slot, _ in expected]
    for index, (result, (_, value)) in enumerate(zip(results, expected)):
        got = np.array([int(result.value[lane]) for lane in range(LANES)], dtype=np.uint32)
        assert np.array_equal(got, np.asarray(value, dtype=np.uint32)), \
            f"result {index}: {[hex(v) for v in got]} != {[hex(int(v)) for v in value]}"


# (FMA units, back-pressure): one unit per lane, and the lanes in groups through fewer.
@pytest.mark.parametrize("fma_units, pressure", [(None, 0.0), (None, 0.3), (1, 0.3), (2, 0.0),
                                                 (2, 0.3), (4, 0.3)])
def test_fma_lanes_compute_every_fma_class_instruction(fma_units, pressure):
    rng = np.random.default_rng(11)
    requests, expected = [], []
    golden = {
        Opcode.VADD: lambda a, b, c: reference("add", a, b),
        Opcode.VSUB: lambda a, b, c: reference("sub", a, b),
        Opcode.VMUL: lambda a, b, c: reference("mul", a, b),
        Opcode.VFMA: lambda a, b, c: reference("fma", a, b, c),
        Opcode.VFMS: lambda a, b, c: reference("fma", a, b, c ^ np.uint32(0x80000000)),
        Opcode.VFNMA: lambda a, b, c: reference("fma", a ^ np.uint32(0x80000000), b, c),
    }
    for index in range(120):
        opcode = list(golden)[index % len(golden)]
        if index % 2:
            a, b, c = _vectors(rng, 3)
        else:
            a, b, c = (np.asarray(column, dtype=np.uint32) for column in
                       random_operands("fma", LANES, seed=index))
        requests.append(_request(index % 16, opcode, a, b, c))
        expected.append((index % 16, canonicalize_nans(golden[opcode](a, b, c))))
    unit = FMALanes(NDPConfig(engine=EngineConfig(fma_units=fma_units)))
    _check(_run(unit, requests, seed=3, pressure=pressure, cycles_each=12 + unit.passes),
           expected)


def _fma_records(count, seed):
    """``vfma`` requests of random operands, with their slots and golden values as notes."""
    rng = np.random.default_rng(seed)
    records = []
    for index in range(count):
        a, b, c = _vectors(rng, 3)
        records.append((_request(index % 16, Opcode.VFMA, a, b, c),
                        (index % 16, canonicalize_nans(reference("fma", a, b, c)))))
    return records


def _run_offers(unit, source, count, *, pause, seed):
    """Drive ``source`` into ``unit`` until ``count`` results are back; the results taken."""
    sink = Sink(unit.result, pause=pause, seed=seed)

    async def bench(ctx):
        for cycle in range(count * (unit.passes + unit.LATENCY) * 4 + 100):
            source.drive(ctx)
            sink.drive(ctx)
            source.sample(ctx, cycle)
            sink.sample(ctx, cycle)
            await ctx.tick()
            if len(sink.taken) == count:
                break

    simulate(unit, bench)
    assert len(sink.taken) == count, f"{len(sink.taken)} of {count} results"
    return sink.taken


def _check_offered_a_cycle_at_a_time(unit, records, *, seed):
    """``records`` (request, (slot, golden value)) offered as DISPATCH offers them, with
    back-pressure: each result is its instruction's, in the order they were taken."""
    source = DispatchSource(unit.request, records, pause=0.3, seed=seed)
    taken = _run_offers(unit, source, len(records), pause=0.3, seed=seed + 1)
    _check([payload for _, payload in taken], [note for _, (_, note) in source.accepted])


def _check_streaming_at_one_per_pass(unit, records):
    """``records`` offered back to back and taken at once: right, and one taken every
    ``unit.passes`` cycles."""
    pending = list(records)
    source = Source(unit.request, lambda: pending.pop(0) if pending else None, pause=0.0, seed=1)
    taken = _run_offers(unit, source, len(records), pause=0.0, seed=2)
    _check([payload for _, payload in taken], [note for _, note in records])
    taken_at = [cycle for cycle, _ in source.accepted]
    assert np.diff(taken_at).tolist() == [unit.passes] * (len(records) - 1)


@pytest.mark.parametrize("fma_units", [1, 4])
def test_grouped_fma_lanes_take_an_instruction_offered_a_cycle_at_a_time_whole(fma_units):
    """DISPATCH offers an instruction for one cycle and may offer another µthread's next:
    a vector that passes the units in groups is taken whole with its first group, its
    lanes never mixed with another's."""
    unit = FMALanes(NDPConfig(engine=EngineConfig(fma_units=fma_units)))
    _check_offered_a_cycle_at_a_time(unit, _fma_records(24, seed=fma_units), seed=fma_units)


@pytest.mark.parametrize("fma_units", [2, 8])
def test_fma_instructions_stream_at_one_per_pass(fma_units):
    unit = FMALanes(NDPConfig(engine=EngineConfig(fma_units=fma_units)))
    _check_streaming_at_one_per_pass(unit, _fma_records(12, seed=3))


def _minimum(a, b, maximum):
    return reference("max" if maximum else "min", a, b)


def _compare(a, b, relation):
    with np.errstate(invalid="ignore"):      # signalling NaNs: the comparison is quiet
        fa = a.view(np.float32).astype(np.float64)
        fb = b.view(np.float32).astype(np.float64)
        holds = {"eq": fa == fb, "lt": fa < fb, "le": fa <= fb}[relation]
    return holds.astype(np.uint32)


def _sign(a, negate):
    nan = (a & 0x7FFFFFFF) > 0x7F800000
    value = a ^ np.uint32(0x80000000) if negate else a & np.uint32(0x7FFFFFFF)
    return np.where(nan, np.uint32(0x7FC00000), value).astype(np.uint32)


def _misc_cases(count, seed):
    """Requests of every single-cycle vector instruction in turn, with their slots and
    golden values."""
    rng = np.random.default_rng(seed)
    cases = []
    for index in range(count):
        a, b, c = _vectors(rng, 3)
        shift = rng.integers(0, 64, LANES, dtype=np.uint32)
        x = int(rng.integers(0, 1 << 63))
        table = {
            Opcode.VMIN: (a, b, None, lambda: _minimum(a, b, False)),
            Opcode.VMAX: (a, b, None, lambda: _minimum(a, b, True)),
            Opcode.VCMPEQ: (a, b, None, lambda: _compare(a, b, "eq")),
            Opcode.VCMPLT: (a, b, None, lambda: _compare(a, b, "lt")),
            Opcode.VCMPLE: (a, b, None, lambda: _compare(a, b, "le")),
            Opcode.VSEL: (a, b, c, lambda: np.where(c & 1, a, b)),
            Opcode.VABS: (a, None, None, lambda: _sign(a, False)),
            Opcode.VNEG: (a, None, None, lambda: _sign(a, True)),
            Opcode.VIADD: (a, b, None, lambda: a + b),
            Opcode.VISUB: (a, b, None, lambda: a - b),
            Opcode.VIAND: (a, b, None, lambda: a & b),
            Opcode.VIOR: (a, b, None, lambda: a | b),
            Opcode.VIXOR: (a, b, None, lambda: a ^ b),
            Opcode.VISHL: (a, shift, None, lambda: a << (shift & 31)),
            Opcode.VISHR: (a, shift, None, lambda: a >> (shift & 31)),
            Opcode.VISRA: (a, shift, None, lambda: (a.view(np.int32) >> (shift & 31).astype(np.int32)).view(np.uint32)),
            Opcode.VSPLAT: (a, None, None, lambda: np.full(LANES, x & 0xFFFFFFFF, dtype=np.uint32)),
            Opcode.VGET: (a, None, None, lambda: np.array([a[x % LANES]] + [0] * (LANES - 1),
                                                           dtype=np.uint32)),
        }
        opcode = list(table)[index % len(table)]
        va, vb, vc, golden = table[opcode]
        with np.errstate(over="ignore"):
            cases.append((_request(index % 16, opcode, va, vb, vc, x=x), (index % 16, golden())))
    return cases


# (units, back-pressure): one unit per lane, and the lanes in groups through fewer.
@pytest.mark.parametrize("misc_units, pressure", [(None, 0.3), (1, 0.3), (2, 0.0), (4, 0.3)])
def test_vector_misc_unit(misc_units, pressure):
    cases = _misc_cases(200, seed=5)
    unit = VectorMisc(NDPConfig(engine=EngineConfig(misc_units=misc_units)))
    _check(_run(unit, [request for request, _ in cases], seed=9, pressure=pressure,
                cycles_each=6 + unit.passes), [expected for _, expected in cases])


@pytest.mark.parametrize("misc_units", [1, 2])
def test_grouped_vector_misc_takes_an_instruction_offered_a_cycle_at_a_time_whole(misc_units):
    unit = VectorMisc(NDPConfig(engine=EngineConfig(misc_units=misc_units)))
    _check_offered_a_cycle_at_a_time(unit, _misc_cases(40, seed=misc_units), seed=misc_units)


@pytest.mark.parametrize("misc_units", [None, 2, 8])
def test_vector_misc_instructions_stream_at_one_per_pass(misc_units):
    unit = VectorMisc(NDPConfig(engine=EngineConfig(misc_units=misc_units)))
    _check_streaming_at_one_per_pass(unit, _misc_cases(18, seed=4))


def test_convert_unit():
    rng = np.random.default_rng(2)
    cases = []
    for index in range(90):
        a, b = _vectors(rng, 2)
        elements = np.concatenate([a & 0xFFFF, a >> 16], axis=0).reshape(2, LANES).T.reshape(-1)
        kind = index % 3
        if kind == 0:
            expected = reference("bf16_to_f32", elements[:LANES].astype(np.uint32))
            opcode = Opcode.VCVTLO
        elif kind == 1:
            expected = reference("bf16_to_f32", elements[LANES:].astype(np.uint32))
            opcode = Opcode.VCVTHI
        else:
            narrow = np.concatenate([reference("f32_to_bf16", a), reference("f32_to_bf16", b)])
            expected = (narrow[0::2] | (narrow[1::2] << 16)).astype(np.uint32)
            opcode = Opcode.VPACKBF
        cases.append((_request(index % 16, opcode, a, b), (index % 16, expected)))
    _check(_run(VectorConvert(CONFIG), [r for r, _ in cases], seed=4, cycles_each=6),
           [e for _, e in cases])


def _tree(values, combine):
    values = list(values)
    while len(values) > 1:
        values = [combine(values[2 * i], values[2 * i + 1]) for i in range(len(values) // 2)]
    return values[0]


# Sums and maxima mixed, in runs of each and alternating, so that an instruction of one
# kind follows the other's still in flight; on the tree and on the serial unit.
@pytest.mark.parametrize("tree", [True, False], ids=["tree", "serial"])
@pytest.mark.parametrize("pressure", [0.0, 0.3])
def test_reduce_unit_follows_the_pairwise_tree(pressure, tree):
    rng = np.random.default_rng(8)
    cases = []
    for index in range(48):
        a = _vectors(rng, 1, specials=index % 2 == 0)[0]
        summing = index % 3 != 2 if index < 24 else (index // 4) % 2 == 0
        combine = (lambda x, y: reference("add", np.array([x]), np.array([y]))[0]) if summing \
            else (lambda x, y: reference("max", np.array([x]), np.array([y]))[0])
        total = _tree(a, combine)
        cases.append((_request(index % 16, Opcode.VREDSUM if summing else Opcode.VREDMAX, a),
                      (index % 16, np.full(LANES, total, dtype=np.uint32))))
    config = NDPConfig(engine=EngineConfig(reduce_tree=tree))
    unit = reduce_unit(config)
    assert isinstance(unit, VectorReduce if tree else SerialReduce)
    _check(_run(unit, [r for r, _ in cases], seed=1, pressure=pressure, cycles_each=60),
           [e for _, e in cases])
