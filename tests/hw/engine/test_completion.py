"""The completion queues of the shared engine units in Amaranth's simulator: random valued
and value-less completions from µthreads that wait for their completion before the next
(as sub-cores do), random back-pressure on every completion stream; fairness, timing and
the overrun flag in directed cases."""

import random

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.completion import CompletionQueue

from .harness import Sink, simulate


def _idle(ctx, dut):
    ctx.set(dut.fill.valid, 0)
    for mark in dut.marks:
        ctx.set(mark.valid, 0)


@pytest.mark.parametrize("config, marks", [
    (NDPConfig(), 1),
    (NDPConfig(engine=EngineConfig(sub_cores=3, slots=4)), 3),
    (NDPConfig(sector_bytes=64, engine=EngineConfig(sub_cores=2)), 2),
], ids=["one-sub-core", "three-sub-cores", "64-byte-sectors"])
def test_random_completions_with_back_pressure(config, marks):
    engine = config.engine
    dut = CompletionQueue(config, marks=marks)
    rng = random.Random(len(config.engine.__repr__()) + marks)
    threads = engine.sub_cores * engine.slots
    sinks = [Sink(port, pause=0.4, seed=index) for index, port in enumerate(dut.completions)]
    expected = {}
    delivered = 0
    count = 400

    async def bench(ctx):
        nonlocal delivered
        issued = 0
        cycle = 0
        while delivered < count:
            assert cycle < 20 * count
            idle = [thread for thread in range(threads) if thread not in expected]
            rng.shuffle(idle)
            _idle(ctx, dut)
            if idle and issued < count and rng.random() < 0.7:
                thread = idle.pop()
                value = [rng.getrandbits(32) for _ in range(config.lanes)]
                ctx.set(dut.fill.valid, 1)
                ctx.set(dut.fill.payload, {"thread": thread, "value": value})
                expected[thread] = (value, 0)
                issued += 1
            for mark in dut.marks:
                if idle and issued < count and rng.random() < 0.5:
                    thread = idle.pop()
                    error = rng.randrange(2)
                    ctx.set(mark.valid, 1)
                    ctx.set(mark.payload, {"thread": thread, "error": error})
                    expected[thread] = ([0] * config.lanes, error)
                    issued += 1
            for sink in sinks:
                sink.drive(ctx)
            assert not ctx.get(dut.overrun)
            for sub_core, sink in enumerate(sinks):
                completion = sink.sample(ctx, cycle)
                if completion is not None:
                    thread = sub_core * engine.slots + completion.slot
                    got = ([completion.value[lane] for lane in range(config.lanes)],
                           completion.error)
                    assert got == expected.pop(thread), f"thread {thread} in cycle {cycle}"
                    delivered += 1
            await ctx.tick()
            cycle += 1

    simulate(dut, bench)
    assert not expected


def _deliveries(dut, schedule, *, hold_until, cycles):
    """Completions offered by sub-core 0 with ``ready`` low until ``hold_until``; the
    schedule maps a cycle to a list of ("fill"|"mark", slot) inputs."""
    seen = []

    async def bench(ctx):
        for cycle in range(cycles):
            _idle(ctx, dut)
            used_marks = 0
            for kind, slot in schedule.get(cycle, ()):
                if kind == "fill":
                    ctx.set(dut.fill.valid, 1)
                    ctx.set(dut.fill.payload, {"thread": slot, "value": [slot + 100] * 8})
                else:
                    mark = dut.marks[used_marks]
                    used_marks += 1
                    ctx.set(mark.valid, 1)
                    ctx.set(mark.payload, {"thread": slot, "error": 0})
            ready = cycle >= hold_until
            ctx.set(dut.completions[0].ready, ready)
            if ctx.get(dut.completions[0].valid) and ready:
                payload = ctx.get(dut.completions[0].payload)
                seen.append((cycle, "fill" if payload.value[0] else "mark", payload.slot))
            await ctx.tick()

    simulate(dut, bench)
    return seen


def test_both_kinds_take_turns():
    dut = CompletionQueue(NDPConfig(), marks=1)
    schedule = {cycle: [("fill", cycle), ("mark", 8 + cycle)] for cycle in range(4)}
    seen = _deliveries(dut, schedule, hold_until=10, cycles=25)
    kinds = [kind for _, kind, _ in seen]
    assert len(seen) == 8
    assert all(kinds[index] != kinds[index + 1] for index in range(7))


def test_done_slots_are_served_round_robin():
    """After slot 1, slot 5 goes before the lower slot 0 that waits with it."""
    dut = CompletionQueue(NDPConfig(), marks=2)
    seen = _deliveries(dut, {0: [("mark", 1)], 1: [("mark", 5), ("mark", 0)]},
                       hold_until=5, cycles=12)
    assert [slot for _, _, slot in seen] == [1, 5, 0]


def test_documented_latencies():
    dut = CompletionQueue(NDPConfig(), marks=1)
    seen = _deliveries(dut, {0: [("mark", 3)], 4: [("fill", 6)]}, hold_until=0, cycles=10)
    assert seen == [(3, "mark", 3), (6, "fill", 6)]


def test_overrun_when_a_slot_is_marked_twice_or_the_queue_overflows():
    config = NDPConfig(engine=EngineConfig(slots=4))
    for schedule in ({0: [("mark", 1)], 1: [("mark", 1)]},
                     {cycle: [("fill", cycle % 4)] for cycle in range(6)}):
        dut = CompletionQueue(config, marks=1)
        flagged = []

        async def bench(ctx, dut=dut, schedule=schedule):
            for cycle in range(8):
                _idle(ctx, dut)
                for kind, slot in schedule.get(cycle, ()):
                    port = dut.fill if kind == "fill" else dut.marks[0]
                    ctx.set(port.valid, 1)
                    ctx.set(port.payload.thread, slot)
                flagged.append(ctx.get(dut.overrun))
                await ctx.tick()

        simulate(dut, bench)
        assert any(flagged), schedule


@pytest.mark.parametrize("marks", [0, -1, 1.5, True, "2"])
def test_constructor_refuses_a_bad_mark_count(marks):
    with pytest.raises(ValueError, match="marks must be a positive integer"):
        CompletionQueue(NDPConfig(), marks=marks)


@pytest.mark.parametrize("config", [None, EngineConfig()])
def test_constructor_refuses_what_is_not_a_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig"):
        CompletionQueue(config)
