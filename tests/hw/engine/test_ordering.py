"""The ordering station in Amaranth's simulator.

µthreads of several entries (some ordered, one stopped part-way) send scratchpad ops
one at a time, in program order, as sub-cores do: an op refused is withdrawn and offered
again later (the sub-core replays it), while other µthreads offer theirs. Each µthread of
an ordered entry posts its ordered atomics and ends with one that hands the turn on, or
with none and a direct release once it holds the turn and has nothing queued. The output
sees random back-pressure. Every op must leave exactly once, unchanged; per running
entry, the ordered ops must leave in sequence order, each µthread's in program order; a
µthread's other ops never overtake its queued ones; a queued op once offered stays
offered, unchanged, until taken.
"""

import random

import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.engine.isa import Opcode
from matndp.hw.engine.layouts import order_bits
from matndp.hw.engine.ordering import AtomicOrder
from matndp.hw.export import export_verilog

from .harness import simulate
from ..streams import shared


CONFIG = NDPConfig(trigger=TriggerConfig(filter_entries=4),
                   engine=EngineConfig(sub_cores=2, slots=4, ordered_atomics=2))
# Twelve µthreads: the round robin from the one picked last wraps at 12, not at the 16 its
# 4-bit number counts to.
CONFIGS = {
    "two-sub-cores-of-four-slots": CONFIG,
    "three-sub-cores-of-four-slots": NDPConfig(
        trigger=TriggerConfig(filter_entries=4),
        engine=EngineConfig(sub_cores=3, slots=4, ordered_atomics=2)),
}
ORDERED_ENTRIES = (0, 1, 3)
STOPPED_ENTRY = 3


class Thread:
    """One µthread: its entry, sequence number and ops (dicts) still to send."""

    def __init__(self, thread, entry, seq, ops, direct_release):
        self.thread, self.entry, self.seq = thread, entry, seq
        self.ops = ops
        self.direct_release = direct_release


def make_thread(rng, thread, entry, seq, serial, mask):
    """Ops of a µthread: for an ordered entry, 0–3 ordered atomics (the last releasing),
    with straight ops before, between and after; otherwise straight ops only. ``mask``:
    the sequence numbers' bits."""
    ops = []

    def op(ordered, release=0):
        serial[0] += 1
        return {"thread": thread, "opcode": rng.choice([Opcode.SAMOADD, Opcode.SAMOFMA]),
                "addr": 32 * rng.randrange(64), "b": [rng.getrandbits(32) for _ in range(8)],
                "c": [serial[0]] * 8, "entry": entry, "release": release,
                "ordered": ordered, "posted": int(ordered and not release),
                "seq": seq & mask}

    ordered_entry = entry in ORDERED_ENTRIES
    atomics = rng.randrange(4) if ordered_entry else 0
    for index in range(atomics):
        if rng.random() < 0.3:
            ops.append(op(0))
        ops.append(op(1, release=int(index == atomics - 1)))
    for _ in range(rng.randrange(2)):
        ops.append(op(0))
    return Thread(thread, entry, seq, ops, direct_release=ordered_entry and atomics == 0)


def run(*, seed, config=CONFIG, threads_per_entry=40, pause=0.3, stop_after=10):
    dut = shared(AtomicOrder, config, release_sources=config.engine.sub_cores)
    rng = random.Random(seed)
    slots = config.engine.slots
    thread_count = config.engine.sub_cores * slots
    entries = config.trigger.filter_entries
    mask = (1 << order_bits(config)) - 1
    next_seq = [0] * entries
    serial = [0]
    alive = {}                 # thread -> Thread
    sent = []                  # every op, in the order taken in
    left = []                  # (cycle, op) in the order they left
    expected_order = {entry: [] for entry in ORDERED_ENTRIES}
    finished = {"count": 0}
    total_threads = threads_per_entry * entries

    def spawn(thread):
        choices = [entry for entry in range(entries) if next_seq[entry] < threads_per_entry]
        if not choices:
            return
        entry = rng.choice(choices)
        alive[thread] = make_thread(rng, thread, entry, next_seq[entry], serial, mask)
        if entry in ORDERED_ENTRIES:
            expected_order[entry].extend(op["c"][0] for op in alive[thread].ops if op["ordered"])
        next_seq[entry] += 1

    async def bench(ctx):
        for thread in range(thread_count):
            spawn(thread)
        cycle = 0
        stopped = 0
        offered_before = None       # a queued op offered and not taken last cycle
        while finished["count"] < total_threads or any(t.ops for t in alive.values()):
            assert cycle < 200 * total_threads, f"stuck in cycle {cycle}"
            if cycle == stop_after * 10:
                stopped = 1 << STOPPED_ENTRY
            ctx.set(dut.stopped, stopped)
            # One offer per cycle, from a µthread chosen at random (a merge's choice).
            waiting = [t for t in alive.values() if t.ops]
            offer = rng.choice(waiting) if waiting and rng.random() >= pause else None
            ctx.set(dut.i.valid, offer is not None)
            if offer is not None:
                ctx.set(dut.i.payload, offer.ops[0])
            # Direct releases: a µthread with no atomics, holding the turn, nothing queued.
            releases = [0] * config.engine.sub_cores
            ending = []
            holding = ctx.get(dut.holding)
            for t in alive.values():
                if t.ops or not t.direct_release:
                    continue
                if stopped >> t.entry & 1:
                    ending.append(t)            # killed as it dispatches: no release
                elif ctx.get(dut.turn[t.entry]) == t.seq & mask and not holding >> t.thread & 1:
                    releases[t.thread // slots] |= 1 << t.entry
                    ending.append(t)
            for source, bits in enumerate(releases):
                ctx.set(dut.release[source], bits)
            ready = rng.random() >= pause
            ctx.set(dut.o.ready, ready)

            valid = ctx.get(dut.o.valid)
            payload = ctx.get(dut.o.payload)
            if offered_before is not None:
                assert valid and payload.as_value().value == offered_before, \
                    f"a queued op changed or vanished while offered, cycle {cycle}"
            offered_before = None
            if valid and ready:
                left.append((cycle, payload))
            elif valid and payload.ordered:
                offered_before = payload.as_value().value
            if offer is not None:
                # Whether the op is taken does not depend on its ``valid`` (DISPATCH's
                # decision must not run through the station's choice of output).
                taken = ctx.get(dut.i.ready)
                ctx.set(dut.i.valid, 0)
                assert ctx.get(dut.i.ready) == taken, f"i.ready follows i.valid, cycle {cycle}"
                ctx.set(dut.i.valid, 1)
                if taken:
                    sent.append(dict(offer.ops.pop(0)))
            await ctx.tick()
            cycle += 1
            # A µthread ends when its last op has been taken and, if ordered, has left
            # (its completion would come later still), or with its direct release.
            gone = {int(p.c[0]) for _, p in left}
            for t in ending:
                del alive[t.thread]
                finished["count"] += 1
                spawn(t.thread)
            for thread, t in list(alive.items()):
                if t.ops or t.direct_release:
                    continue
                mine = [op["c"][0] for op in sent if op["thread"] == thread and op["seq"] ==
                        t.seq & mask and op["entry"] == t.entry]
                if all(serial_number in gone for serial_number in mine):
                    del alive[thread]
                    finished["count"] += 1
                    spawn(thread)
        for _ in range(10):
            ctx.set(dut.i.valid, 0)
            ctx.set(dut.o.ready, 1)
            if ctx.get(dut.o.valid):
                left.append((cycle, ctx.get(dut.o.payload)))
            await ctx.tick()
            cycle += 1

    simulate(dut, bench)
    return sent, left, expected_order


def _fields(payload):
    return {"thread": int(payload.thread), "opcode": Opcode(payload.opcode),
            "addr": int(payload.addr), "b": [int(payload.b[i]) for i in range(8)],
            "c": [int(payload.c[i]) for i in range(8)], "entry": int(payload.entry),
            "release": int(payload.release), "ordered": int(payload.ordered),
            "posted": int(payload.posted), "seq": int(payload.seq)}


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ordered_atomics_leave_in_sequence_order_under_back_pressure(seed, config):
    sent, left, expected_order = run(seed=seed, config=config)
    out = [_fields(payload) for _, payload in left]
    by_serial = {op["c"][0]: op for op in sent}
    # Exactly once, unchanged.
    assert sorted(op["c"][0] for op in out) == sorted(by_serial)
    for op in out:
        assert op == by_serial[op["c"][0]]
    # Order per running entry.
    for entry in ORDERED_ENTRIES:
        got = [op["c"][0] for op in out if op["entry"] == entry and op["ordered"]]
        if entry == STOPPED_ENTRY:
            assert sorted(got) == sorted(expected_order[entry])
        else:
            assert got == expected_order[entry], f"entry {entry}"
    # A µthread's straight ops never overtake its queued ones.
    position = {op["c"][0]: index for index, op in enumerate(out)}
    for thread_ops in _by_thread_life(sent):
        for earlier, later in zip(thread_ops, thread_ops[1:]):
            if earlier["ordered"]:
                assert position[earlier["c"][0]] < position[later["c"][0]]


def _by_thread_life(sent):
    lives = {}
    for op in sent:
        lives.setdefault((op["thread"], op["entry"], op["seq"]), []).append(op)
    return lives.values()


def test_an_entrys_atomics_pass_one_per_cycle_once_their_turn_comes():
    """Consecutive µthreads' queued atomics leave back to back: the turn moves on as the
    releasing op is picked, not when the scratchpad reports it."""
    dut = shared(AtomicOrder, CONFIG, release_sources=2)
    ops = []
    for seq in (1, 2, 3, 0):          # queued out of order; seq 0's arrival lets them go
        for index in range(2):
            ops.append({"thread": seq, "opcode": Opcode.SAMOADD, "addr": 32 * index,
                        "b": [0] * 8, "c": [10 * seq + index] * 8, "entry": 1,
                        "release": index, "ordered": 1, "posted": 1 - index, "seq": seq})
    left = []

    async def bench(ctx):
        ctx.set(dut.o.ready, 1)
        for op in ops:
            ctx.set(dut.i.valid, 1)
            ctx.set(dut.i.payload, op)
            assert ctx.get(dut.i.ready)
            await ctx.tick()
        ctx.set(dut.i.valid, 0)
        for cycle in range(12):
            if ctx.get(dut.o.valid):
                left.append((cycle, int(ctx.get(dut.o.payload.c[0]))))
            await ctx.tick()

    simulate(dut, bench)
    assert [value for _, value in left] == [0, 1, 10, 11, 20, 21, 30, 31]
    cycles = [cycle for cycle, _ in left]
    assert cycles == list(range(cycles[0], cycles[0] + 8))


def test_a_full_queue_refuses_and_other_threads_pass():
    dut = shared(AtomicOrder, CONFIG, release_sources=2)
    depth = CONFIG.engine.ordered_atomics

    def op(thread, seq, value, ordered=1):
        return {"thread": thread, "opcode": Opcode.SAMOADD, "addr": 0, "b": [0] * 8,
                "c": [value] * 8, "entry": 0, "release": 0, "ordered": ordered,
                "posted": ordered, "seq": seq}

    async def bench(ctx):
        ctx.set(dut.o.ready, 0)
        for index in range(depth):
            ctx.set(dut.i.valid, 1)
            ctx.set(dut.i.payload, op(5, 1, index))
            assert ctx.get(dut.i.ready)
            await ctx.tick()
        ctx.set(dut.i.payload, op(5, 1, 99))
        assert not ctx.get(dut.i.ready), "a full queue took another op"
        ctx.set(dut.i.payload, op(6, 2, 7))
        assert ctx.get(dut.i.ready), "another µthread's op was refused"
        await ctx.tick()
        ctx.set(dut.i.payload, op(5, 1, 8, ordered=0))
        assert not ctx.get(dut.i.ready), "a straight op overtook its µthread's queued ones"
        ctx.set(dut.i.payload, op(4, 0, 9, ordered=0))
        assert ctx.get(dut.o.valid) and ctx.get(dut.o.payload.c[0]) == 9
        ctx.set(dut.o.ready, 1)
        assert ctx.get(dut.i.ready)
        assert ctx.get(dut.holding) == (1 << 5) | (1 << 6)

    simulate(dut, bench)


def test_arm_restarts_the_order():
    dut = shared(AtomicOrder, CONFIG, release_sources=2)

    async def bench(ctx):
        ctx.set(dut.release[1], 0b0100)
        await ctx.tick()
        ctx.set(dut.release[1], 0)
        assert ctx.get(dut.turn[2]) == 1
        ctx.set(dut.arm, 0b0100)
        await ctx.tick()
        ctx.set(dut.arm, 0)
        assert ctx.get(dut.turn[2]) == 0

    simulate(dut, bench)


def test_ports_and_export():
    dut = shared(AtomicOrder, NDPConfig(), release_sources=1)
    assert len(dut.holding) == NDPConfig().engine.slots
    assert "module order" in export_verilog(dut, "order")


@pytest.mark.parametrize("config, sources, error, message", [
    (NDPConfig(engine=None), 1, TypeError, "NDPConfig with an engine"),
    ("config", 1, TypeError, "NDPConfig with an engine"),
    (CONFIG, 0, ValueError, "release_sources must be a positive integer"),
    (CONFIG, True, ValueError, "release_sources must be a positive integer"),
])
def test_constructor_errors(config, sources, error, message):
    with pytest.raises(error, match=message):
        AtomicOrder(config, release_sources=sources)


@pytest.mark.parametrize("value", [0, 3, 32])
def test_ordered_atomics_must_be_a_power_of_two_in_range(value):
    with pytest.raises(ValueError, match="ordered_atomics must be a power of two in 1..16"):
        EngineConfig(ordered_atomics=value)
