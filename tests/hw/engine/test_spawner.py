"""The spawner alone, in Amaranth's simulator, against its contract (docs/engine.md):
a waiting initializer or finalizer starts first (lowest entry first), except that right
after a finalizer µthread an event that can start (or be drained) goes first; otherwise
the head event starts a main µthread of its entry with the entry's next sequence number,
or, when its entry is stopped, is drained at once; events wait in order while their entry
does not accept them or no slot is free. An initializer starts with SEQ 0, a finalizer
µthread with the SEQ the entry control gives. The slot is the lowest free one of the first
sub-core, after the one used last, that has any.

The testbench plays the entry control (accepts, stops, helper requests that stay up until
their µthreads start — a finalizer's for several —, sequence numbers) and the sub-cores
(slots that fill when a µthread starts and free after a random lifetime), all changing at
random; the events arrive with random pauses. Sub-cores take every spawn (their ``ready``
is always high). A pipelined engine's spawner tells the entry control a cycle later, so
the entry control's state moves a cycle later too; meanwhile the spawner starts no helper
of the entry it has just told of and numbers a main µthread of it after the one told."""

import random

import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.engine.layouts import ThreadKind
from matndp.hw.engine.spawner import Spawner

from .harness import Source, simulate
from ..streams import shared


ENTRIES = 4


def _config(sub_cores, slots=4, pipelined=False):
    return NDPConfig(trigger=TriggerConfig(filter_entries=ENTRIES),
                     engine=EngineConfig(sub_cores=sub_cores, slots=slots, instruction_words=64,
                                         argument_blocks=4, pipelined=pipelined))


def _entry_config(entry):
    return {"main_pc": 8 + entry, "init_pc": 16 + entry, "final_pc": 24 + entry,
            "has_init": 1, "has_final": 1, "ordered": entry % 2, "arg_block": 3 - entry,
            "expected": 0}


class World:
    """The entry control and the sub-cores around the spawner, changing at random."""

    def __init__(self, config, rng):
        self.rng = rng
        self.sub_cores = config.engine.sub_cores
        self.slots = config.engine.slots
        self.lifetimes = [[0] * self.slots for _ in range(self.sub_cores)]   # 0: free
        self.accepts = (1 << ENTRIES) - 1
        self.stopped = 0
        self.init_request = 0
        self.final_request = 0
        self.seq = [0] * ENTRIES
        self.helper_seq = [0] * ENTRIES
        self.helpers_left = [0] * ENTRIES    # initializer or finalizer µthreads still to start

    def free(self, core):
        return sum(1 << slot for slot, life in enumerate(self.lifetimes[core]) if life == 0)

    def drive(self, ctx, dut):
        for core in range(self.sub_cores):
            ctx.set(dut.free[core], self.free(core))
        ctx.set(dut.accepts, self.accepts)
        ctx.set(dut.stopped, self.stopped)
        ctx.set(dut.init_request, self.init_request)
        ctx.set(dut.final_request, self.final_request)
        ctx.set(dut.seq, self.seq)
        ctx.set(dut.helper_seq, self.helper_seq)

    def step(self, spawned, told):
        """The cycle ends: µthreads age and end, a started one (``spawned``) fills its slot,
        and the entry control moves with the start it is told of (``told``: a started
        helper's request drops; flags change at random)."""
        for core in range(self.sub_cores):
            for slot in range(self.slots):
                if self.lifetimes[core][slot] > 0:
                    self.lifetimes[core][slot] -= 1
        if spawned is not None:
            core, record = spawned
            self.lifetimes[core][record.slot] = self.rng.randrange(1, 12)
        if told is not None:
            kind, entry = told
            if kind is ThreadKind.MAIN:
                self.seq[entry] += 1
            else:
                self.helper_seq[entry] += 1
                self.helpers_left[entry] -= 1
                if not self.helpers_left[entry]:
                    self.init_request &= ~(1 << entry)
                    self.final_request &= ~(1 << entry)
        rng = self.rng
        if rng.random() < 0.08:
            self.accepts ^= 1 << rng.randrange(ENTRIES)
        if rng.random() < 0.03:
            self.stopped ^= 1 << rng.randrange(ENTRIES)
        if rng.random() < 0.04:
            entry = rng.randrange(ENTRIES)
            if not (self.init_request | self.final_request) >> entry & 1:
                if rng.random() < 0.5:
                    self.init_request |= 1 << entry
                else:
                    self.final_request |= 1 << entry
                self.helpers_left[entry] = rng.randrange(1, 6)
                self.helper_seq[entry] = rng.randrange(100)


def _lowest(bits):
    return (bits & -bits).bit_length() - 1


def run_spawner(config, seed, events_count=120, pause=0.3):
    """Drive the spawner with random events and surroundings; check every cycle's choice
    against the contract; return (events in order, what became of each, spawns)."""
    dut = shared(Spawner, config)
    rng = random.Random(seed)
    world = World(config, rng)
    events = [{"entry": rng.randrange(ENTRIES), "addr": rng.randrange(1 << 30) * 32,
               "offset": rng.randrange(1 << 20) * 32, "data": rng.getrandbits(config.data_width),
               "mask": rng.getrandbits(config.sector_bytes), "write": rng.randrange(2)}
              for _ in range(events_count)]
    pending = list(events)
    source = Source(dut.events, lambda: (pending.pop(0), None) if pending else None,
                    pause=pause, seed=seed + 1)
    outcomes = []       # per event, in the order taken: ("spawn", core, record) or ("drain",)
    spawns = []
    last_core = [0]     # after reset, as if sub-core 0 had been used last
    after_final = [False]   # the last µthread started was a finalizer's
    pipelined = config.engine.pipelined
    told = [None, None]     # what the spawner tells this cycle: (kind, entry) started, drained entry

    async def bench(ctx):
        ctx.set(dut.entry_config, [_entry_config(entry) for entry in range(ENTRIES)])
        for core in range(config.engine.sub_cores):
            ctx.set(dut.spawn[core].ready, 1)
        cycle = 0
        while len(outcomes) < events_count:
            cycle += 1
            assert cycle < 20000, "the spawner stopped taking events"
            world.drive(ctx, dut)
            source.drive(ctx)
            frees = [world.free(core) for core in range(config.engine.sub_cores)]
            offered = source.offer[0] if source.offer is not None else None
            valid = [ctx.get(dut.spawn[core].valid) for core in range(config.engine.sub_cores)]
            taken = source.sample(ctx, cycle)
            starting = [core for core, v in enumerate(valid) if v]
            assert len(starting) <= 1, f"cycle {cycle}: µthreads start in sub-cores {starting}"
            told_start, told_drain = told if pipelined else (None, None)
            if pipelined:       # last cycle's start and drain, told now
                assert ctx.get(dut.spawned) == (told_start is not None)
                if told_start is not None:
                    assert (ThreadKind(ctx.get(dut.spawned_kind)), ctx.get(dut.spawned_entry)) == \
                        told_start
                assert ctx.get(dut.drained) == (told_drain is not None)
                if told_drain is not None:
                    assert ctx.get(dut.drained_entry) == told_drain
            else:
                assert ctx.get(dut.spawned) == bool(starting)

            # Where a µthread would go: the first sub-core after the last used with a free slot.
            order = [(last_core[0] + 1 + step) % config.engine.sub_cores
                     for step in range(config.engine.sub_cores)]
            target = next((core for core in order if frees[core]), None)
            helpers = world.init_request | world.final_request
            if told_start is not None and told_start[0] is not ThreadKind.MAIN:
                helpers &= ~(1 << told_start[1])     # its count moves on only now
            event_goes = offered is not None and bool(
                (world.stopped | world.accepts) >> offered["entry"] & 1)
            if helpers and after_final[0] and event_goes and \
                    not world.init_request >> _lowest(helpers) & 1:
                helpers = 0     # the event's turn
            expected = None
            drain = offered is not None and not helpers and world.stopped >> offered["entry"] & 1
            if not pipelined:
                assert ctx.get(dut.drained) == drain, f"cycle {cycle}: drained {not drain}"
            if helpers and target is not None:
                entry = _lowest(helpers)
                is_init = world.init_request >> entry & 1
                expected = (ThreadKind.INIT if is_init else ThreadKind.FINAL, entry)
                assert taken is None, f"cycle {cycle}: an event taken while a helper waits"
            elif drain:
                assert taken is not None, f"cycle {cycle}: a stopped entry's event waits"
                if not pipelined:
                    assert ctx.get(dut.drained_entry) == offered["entry"]
                outcomes.append(("drain",))
            elif offered is not None and not helpers and world.accepts >> offered["entry"] & 1 \
                    and target is not None:
                expected = (ThreadKind.MAIN, offered["entry"])
                assert taken is not None, f"cycle {cycle}: an acceptable event waits"
            else:
                assert taken is None, f"cycle {cycle}: an event taken with nowhere to go"

            spawned = None
            if expected is None:
                assert not starting, f"cycle {cycle}: a µthread started unexpectedly"
            else:
                assert starting == [target], f"cycle {cycle}: started in {starting}, not {target}"
                record = ctx.get(dut.spawn[target].payload)
                kind, entry = expected
                assert (ThreadKind(record.kind), record.entry) == (kind, entry)
                if not pipelined:
                    assert (ThreadKind(ctx.get(dut.spawned_kind)), ctx.get(dut.spawned_entry)) == \
                        (kind, entry)
                assert record.slot == _lowest(frees[target])
                config_e = _entry_config(entry)
                assert record.arg_block == config_e["arg_block"]
                pc = {ThreadKind.MAIN: "main_pc", ThreadKind.INIT: "init_pc",
                      ThreadKind.FINAL: "final_pc"}[kind]
                assert record.pc == config_e[pc]
                if kind is not ThreadKind.MAIN:
                    assert record.seq == world.helper_seq[entry]
                else:
                    assert record.seq == world.seq[entry] + (told_start == (ThreadKind.MAIN, entry))
                    assert record.ordered == config_e["ordered"]
                    for field in ("addr", "offset", "mask", "write"):
                        assert getattr(record, field) == offered[field], field
                    assert record.data.as_value().value == offered["data"]
                    outcomes.append(("spawn", target, record))
                spawns.append((target, record))
                last_core[0] = target
                spawned = (target, record)
                after_final[0] = kind is ThreadKind.FINAL
            if drain:
                after_final[0] = False
            await ctx.tick()
            now = (None if spawned is None else (ThreadKind(spawned[1].kind), int(spawned[1].entry)),
                   offered["entry"] if drain else None)
            world.step(spawned, told[0] if pipelined else now[0])
            told[:] = now

    simulate(dut, bench)
    return events, outcomes, spawns, source.accepted


@pytest.mark.parametrize("sub_cores, seed, pipelined",
                         [(1, 1, False), (2, 2, False), (3, 3, False), (1, 4, True), (2, 5, True)])
def test_spawner_follows_its_contract_under_random_surroundings(sub_cores, seed, pipelined):
    config = _config(sub_cores, pipelined=pipelined)
    events, outcomes, spawns, accepted = run_spawner(config, seed)
    # Every event was taken once, in order, and either started a µthread or was drained.
    assert [record for _, (record, _) in accepted] == events
    assert len(outcomes) == len(events)
    # Each entry's main µthreads got consecutive sequence numbers from 0.
    seqs = {}
    for outcome, event in zip(outcomes, events):
        if outcome[0] == "spawn":
            seqs.setdefault(event["entry"], []).append(int(outcome[2].seq))
    for entry, numbers in seqs.items():
        assert numbers == list(range(len(numbers))), entry
    # The run saw every case: helpers of both kinds, finalizers of several µthreads, an
    # event started between two of a finalizer's µthreads, drained events, every sub-core.
    kinds = {ThreadKind(record.kind) for _, record in spawns}
    assert kinds == set(ThreadKind)
    finals = [int(record.seq) for _, record in spawns if ThreadKind(record.kind) is ThreadKind.FINAL]
    assert any(b == a + 1 for a, b in zip(finals, finals[1:]))
    kinds_in_order = [(ThreadKind(record.kind), int(record.entry)) for _, record in spawns]
    assert any(a[0] is ThreadKind.FINAL and b[0] is ThreadKind.MAIN and c == a
               for a, b, c in zip(kinds_in_order, kinds_in_order[1:], kinds_in_order[2:]))
    assert any(outcome[0] == "drain" for outcome in outcomes)
    assert {core for core, _ in spawns} == set(range(sub_cores))


def test_without_a_free_slot_nothing_starts_and_events_wait():
    config = _config(2, slots=2)
    dut = shared(Spawner, config)

    async def bench(ctx):
        ctx.set(dut.entry_config, [_entry_config(entry) for entry in range(ENTRIES)])
        ctx.set(dut.accepts, (1 << ENTRIES) - 1)
        ctx.set(dut.init_request, 0b0100)
        ctx.set(dut.events.valid, 1)
        ctx.set(dut.events.payload, {"entry": 1})
        for _ in range(5):
            assert not ctx.get(dut.spawned) and not ctx.get(dut.events.ready)
            await ctx.tick()
        # A stopped entry's event is drained even with every slot taken.
        ctx.set(dut.init_request, 0)
        ctx.set(dut.stopped, 0b0010)
        assert ctx.get(dut.events.ready) and ctx.get(dut.drained)
        assert ctx.get(dut.drained_entry) == 1 and not ctx.get(dut.spawned)

    simulate(dut, bench)


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None), EngineConfig()])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        Spawner(config)
