"""The trigger alone in Amaranth's simulator, against a model of its specification
(docs/trigger.md) kept by the testbench from the port handshakes:

- requests and read responses pass unchanged and in order, through one register stage
  each (one added cycle; a stage accepts whenever it is empty or emptying);
- a triggering write is held exactly when the write queue already holds
  ``event_queue_depth`` events, a triggering read exactly when as many places of the read
  queue are taken or reserved (a read reserves its place as it leaves for memory; an
  event taken from a queue frees its place the next cycle), a read response is never
  held, and ``stall`` is high exactly in the cycles something is held;
- events exactly for matching accesses: a write's when it leaves for memory, with its
  data; a read's when its response leaves for the GPU, with the returned data, so memory
  may answer out of order; the lowest matching entry wins, decided as the request enters;
- ``hit_pulse`` and ``produced`` count the events entering the queues each cycle;
- ``id_reuse`` pulses exactly when a read leaves for memory with the id of a read that
  has left and whose response memory has not yet handed back.

Pipelined (``TriggerConfig.pipelined``), the request side instead holds up to
``PIPELINED_REQUEST_PLACES`` requests and takes one exactly while it holds fewer; a request
is offered to memory ``PIPELINED_REQUEST_LATENCY`` cycles after it entered or, if later, the
cycle after the one before it left; its match is decided from the table of the cycle after
it entered; an event reaches ``hit_pulse`` and ``produced`` ``PIPELINED_EVENT_DELAY``
cycles after its transfer left (the hold rules count it from its transfer's cycle, as
above), and ``id_reuse`` pulses ``PIPELINED_REUSE_DELAY`` cycles after the read left.

Every stream runs with random back-pressure, the filter table is reprogrammed while
traffic flows, and the trigger is tested both forming its range ends itself and given
them precomputed, as the slice instantiates it, and both with one request stage and
pipelined.
"""

from collections import deque
from dataclasses import replace
import random

import pytest

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.layouts import request_layout, response_layout, trigger_event_layout
from matndp.hw.trigger.trigger import (PIPELINED_EVENT_DELAY, PIPELINED_REQUEST_LATENCY,
                                       PIPELINED_RESPONSE_LATENCY, PIPELINED_REUSE_DELAY,
                                       PIPELINED_REQUEST_PLACES, RESPONSE_BUFFER_PLACES, Trigger)
from matndp.sim.drivers.packing import StructCodec
from tests.hw.stream_bench import Pause, Sink, Source, run
from tests.hw.trigger.reference import entry, matching_entry


SMALL = NDPConfig(engine=None, addr_width=16, sector_bytes=4, id_width=3,
                  trigger=TriggerConfig(filter_entries=4, event_queue_depth=2))
DEFAULT = NDPConfig()
ENDS = [False, True]
ENDS_IDS = ["own ends", "precomputed ends"]
PIPELINED = [False, True]
PIPELINED_IDS = ["one stage", "pipelined"]


def pipelined(config, on=True):
    """``config`` with its trigger's request side pipelined (or not)."""
    return replace(config, trigger=replace(config.trigger, pipelined=on))


class Table:
    """Drives the filter table (and with precomputed ends, ``ends`` in step with it),
    reprogramming a random entry now and then."""

    def __init__(self, dut, config, table, *, reprogram=0.0, seed=0):
        self.dut, self.config = dut, config
        self.table = [dict(fields) for fields in table]
        self.reprogram = reprogram
        self.random = random.Random(seed)
        self.changes = 0
        self._dirty = True

    def random_entry(self):
        rng, top = self.random, 1 << self.config.addr_width
        base = rng.choice([rng.randrange(top), rng.randrange(top // 4), top - rng.randrange(1, 256)])
        size = rng.choice([0, 1, rng.randrange(1, 64), rng.randrange(top // 2), top - 1])
        return entry(base, size, enable=rng.random() < 0.85, on_write=rng.random() < 0.7,
                     on_read=rng.random() < 0.7)

    def drive(self, ctx, cycle):
        if self.reprogram and self.random.random() < self.reprogram:
            self.table[self.random.randrange(len(self.table))] = self.random_entry()
            self.changes += 1
            self._dirty = True
        if self._dirty:
            for index, fields in enumerate(self.table):
                for name, value in fields.items():
                    ctx.set(getattr(self.dut.table[index], name), value)
                if self.dut.precomputed_ends:
                    ctx.set(self.dut.ends[index], fields["base"] + fields["size"])
            self._dirty = False


class Traffic:
    """The GPU's requests: addresses near the table's range edges and at random, read ids
    unique among the reads whose responses the GPU has not yet received (unless
    ``reuse_ids``)."""

    def __init__(self, config, table, count, *, writes=0.5, reuse_ids=False, addresses=None, seed=0):
        self.config, self.table, self.count = config, table, count
        self.writes, self.reuse_ids = writes, reuse_ids
        if addresses is not None:
            self.address = lambda: addresses(self.random)
        self.random = random.Random(seed)
        self.codec = StructCodec(request_layout(config))
        self.made = 0
        self.waiting_ids = set()       # reads sent whose responses the GPU has not had

    def address(self):
        rng, top = self.random, 1 << self.config.addr_width
        fields = rng.choice(self.table.table)
        end = fields["base"] + fields["size"]
        return rng.choice([fields["base"], fields["base"] - 1, end - 1, end, end + 1,
                           fields["base"] + rng.randrange(fields["size"] + 1),
                           rng.randrange(top)]) % top

    def __call__(self):
        if self.made == self.count:
            raise StopIteration
        rng = self.random
        write = rng.random() < self.writes
        ids = range(1 << self.config.id_width)
        if write or self.reuse_ids:
            request_id = rng.choice(ids)
        else:
            free = [i for i in ids if i not in self.waiting_ids]
            if not free:
                return None
            request_id = rng.choice(free)
        self.made += 1
        return self.codec.pack(dict(addr=self.address(), write=int(write),
                                    data=rng.getrandbits(self.config.data_width),
                                    mask=rng.getrandbits(self.config.sector_bytes), id=request_id))


class Memory:
    """Takes requests at random and answers reads after a random latency, in any order
    among those due (an offered response stays offered until taken)."""

    def __init__(self, dut, config, *, request_pause, response_pause, latency=(1, 12), seed=0):
        self.requests = Sink(dut.mem.req, "mem.req", pause=Pause(request_pause, seed))
        self.responses = Source(dut.mem.resp, self._next_response, pause=Pause(response_pause, seed + 1))
        self.request_codec = StructCodec(request_layout(config))
        self.response_codec = StructCodec(response_layout(config))
        self.config, self.latency = config, latency
        self.random = random.Random(seed + 2)
        self.due = []                   # (cycle, response word)
        self.now = 0

    def _next_response(self):
        ready = [item for item in self.due if item[0] <= self.now]
        if not ready:
            return None
        chosen = self.random.choice(ready)
        self.due.remove(chosen)
        return chosen[1]

    @property
    def idle(self):
        return not self.due and self.responses.offered is None

    def drive(self, ctx, cycle):
        self.now = cycle
        self.requests.drive(ctx, cycle)
        self.responses.drive(ctx, cycle)

    def sample(self, ctx, cycle):
        self.requests.sample(ctx, cycle)
        self.responses.sample(ctx, cycle)
        if self.requests.transfer:
            request = self.request_codec.unpack(self.requests.items[-1])
            if not request["write"]:
                word = self.response_codec.pack(dict(
                    data=self.random.getrandbits(self.config.data_width), id=request["id"]))
                self.due.append((cycle + self.random.randint(*self.latency), word))


class Model:
    """The specification's view of the trigger, advanced from the handshakes each cycle;
    every check compares the RTL's outputs with it."""

    def __init__(self, dut, config, table, traffic):
        self.dut, self.config, self.table, self.traffic = dut, config, table, traffic
        self.depth = config.trigger.event_queue_depth
        self.pipelined = config.trigger.pipelined
        self.places = PIPELINED_REQUEST_PLACES if self.pipelined else 1
        self.response_places = RESPONSE_BUFFER_PLACES if self.pipelined else 1
        # Pipelined: the events of the last PIPELINED_EVENT_DELAY cycles, oldest first.
        self.produced_before = deque([[] for _ in range(PIPELINED_EVENT_DELAY)] if self.pipelined else [])
        # Pipelined: the id reuses of the last PIPELINED_REUSE_DELAY cycles, oldest first.
        self.reuse_before = deque([False] * PIPELINED_REUSE_DELAY if self.pipelined else [])
        self.requests = StructCodec(request_layout(config))
        self.responses = StructCodec(response_layout(config))
        self.events = StructCodec(trigger_event_layout(config))
        # Entered, not yet left: [request word, match, triggers a write event, cycle it
        # entered] and (response word, the read it answers or None, triggers a read event).
        self.request_stage = deque()
        self.response_stage = deque()
        self.outstanding = {}             # id -> (request, match): sent to memory, unanswered
        self.queued = {1: deque(), 0: deque()}   # by the write flag: events not yet taken
        self.read_places = 0              # read-queue places taken or reserved
        self.held_cycles = 0
        self.stall_cycles = 0
        self.id_reuses = 0
        self.write_events = self.read_events = 0

    def _event(self, request, match, data):
        index, offset = match
        return dict(entry=index, addr=request["addr"], offset=offset, data=data,
                    mask=request["mask"], write=request["write"])

    def _check_stage(self, ctx, where, name, stage, inbound, outbound, taken, accepts=None):
        """A register stage offers its item, unchanged, unless the item needs a place in
        an event queue (``taken(item)`` gives how many of its places are taken, or None if
        it needs none) and none is free; it accepts exactly when empty or emptying (or,
        when given, exactly when ``accepts``). Returns whether it holds an item back."""
        get = ctx.get
        valid = get(outbound.valid)
        if stage:
            word = stage[0][0]
            places = taken(stage[0])
            blocked = places is not None and places == self.depth
            assert valid == (not blocked), \
                f"{where}: {name} {'offered' if valid else 'held'} with {places} places taken"
            if valid:
                assert get(outbound.payload.as_value()) == word, f"{where}: {name} changed"
        else:
            assert not valid, f"{where}: a {name} left that never entered"
        leaving = valid and get(outbound.ready)
        if accepts is None:
            accepts = not stage or leaving
        assert get(inbound.ready) == accepts, \
            f"{where}: ready wrong with {len(stage)} {name}(s) inside"
        return bool(stage) and not valid

    def _check_pipelined_request_side(self, ctx, where, cycle, taken):
        """The pipelined request side offers its oldest request, unchanged, from
        ``PIPELINED_REQUEST_LATENCY`` cycles after it entered unless it needs a place in
        an event queue and none is free; it accepts exactly while it holds fewer than
        ``PIPELINED_REQUEST_PLACES``. Returns whether it holds a request back."""
        get, side = ctx.get, self.request_stage
        valid = get(self.dut.mem.req.valid)
        due = bool(side) and cycle >= side[0][3] + PIPELINED_REQUEST_LATENCY
        blocked = False
        if due:
            places = taken(side[0])
            blocked = places is not None and places == self.depth
            assert valid == (not blocked), \
                f"{where}: request {'offered' if valid else 'held'} with {places} places taken"
            if valid:
                assert get(self.dut.mem.req.payload.as_value()) == side[0][0], f"{where}: request changed"
        else:
            assert not valid, f"{where}: a request offered before it was due"
        assert get(self.dut.gpu.req.ready) == (len(side) < self.places), \
            f"{where}: ready wrong with {len(side)} requests inside"
        return blocked

    def _check_pipelined_response_side(self, ctx, where, cycle, taken):
        """The pipelined response side offers its oldest response, unchanged, from
        ``PIPELINED_RESPONSE_LATENCY`` cycles after it entered (a response is never held:
        its read reserved its event's place); it accepts exactly while it holds fewer than
        ``RESPONSE_BUFFER_PLACES``. Returns whether it holds a response back."""
        get, side = ctx.get, self.response_stage
        valid = get(self.dut.gpu.resp.valid)
        due = bool(side) and cycle >= side[0][3] + PIPELINED_RESPONSE_LATENCY
        if due:
            places = taken(side[0])
            assert valid and not (places is not None and places == self.depth), \
                f"{where}: a read response held with {places} places taken"
            assert get(self.dut.gpu.resp.payload.as_value()) == side[0][0], f"{where}: response changed"
        else:
            assert not valid, f"{where}: a response offered before it was due"
        assert get(self.dut.mem.resp.ready) == (len(side) < RESPONSE_BUFFER_PLACES), \
            f"{where}: ready wrong with {len(side)} responses inside"
        return False

    def check(self, ctx, cycle):
        dut, get = self.dut, ctx.get
        gpu_req = get(dut.gpu.req.valid) and get(dut.gpu.req.ready)
        mem_req = get(dut.mem.req.valid) and get(dut.mem.req.ready)
        mem_resp = get(dut.mem.resp.valid) and get(dut.mem.resp.ready)
        gpu_resp = get(dut.gpu.resp.valid) and get(dut.gpu.resp.ready)
        event = get(dut.events.valid) and get(dut.events.ready)
        where = f"cycle {cycle}"

        produced = []
        def request_places(item):
            _, match, write, _ = item
            if match is None:
                return None
            return len(self.queued[1]) if write else self.read_places

        def response_places(item):
            return len(self.queued[0]) if item[2] else None

        if self.pipelined:
            for item in self.request_stage:
                if item[3] == cycle - 1:
                    # Matched against the table of the cycle after it entered.
                    request = self.requests.unpack(item[0])
                    item[1] = matching_entry(self.table.table, request["addr"], request["write"])
            held = self._check_pipelined_request_side(ctx, where, cycle, request_places)
        else:
            held = self._check_stage(ctx, where, "request", self.request_stage, dut.gpu.req,
                                     dut.mem.req, request_places)
        if self.pipelined:
            held |= self._check_pipelined_response_side(ctx, where, cycle, response_places)
        else:
            held |= self._check_stage(ctx, where, "response", self.response_stage, dut.mem.resp,
                                      dut.gpu.resp, response_places)
            assert not (self.response_stage and not get(dut.gpu.resp.valid)), \
                f"{where}: a read response held"
        assert get(dut.stall) == held, f"{where}: stall {get(dut.stall)}, held {held}"
        self.held_cycles += held
        self.stall_cycles += get(dut.stall)

        # --- events leaving, before this cycle's enter the queues -----------------------------
        if event:
            got = self.events.unpack(get(dut.events.payload.as_value()))
            queue = self.queued[got["write"]]
            assert queue, f"{where}: event {got} was never produced (or was produced twice)"
            expected = queue.popleft()
            assert got == expected, f"{where}: event {got}, expected {expected}"
            if not got["write"]:
                self.read_places -= 1

        # --- what crosses the edge ------------------------------------------------------------
        issued_read = None
        if mem_req:
            word, match, _, _ = self.request_stage.popleft()
            request = self.requests.unpack(word)
            if not request["write"]:
                issued_read = (request, match)
                self.read_places += match is not None
            elif match is not None:
                produced.append(self._event(request, match, request["data"]))
        reuse = issued_read is not None and issued_read[0]["id"] in self.outstanding
        if self.pipelined:
            self.reuse_before.append(reuse)
            reuse = self.reuse_before.popleft()
        assert get(dut.id_reuse) == reuse, f"{where}: id_reuse {get(dut.id_reuse)}, expected {reuse}"
        self.id_reuses += reuse
        if gpu_resp:
            word, read, triggers, _ = self.response_stage.popleft()
            response = self.responses.unpack(word)
            self.traffic.waiting_ids.discard(response["id"])
            if triggers:
                produced.append(self._event(read[0], read[1], response["data"]))
        # A response taken in the cycle its id is reused answers the earlier read.
        if mem_resp:
            word = get(dut.mem.resp.payload.as_value())
            answered = self.outstanding.pop(self.responses.unpack(word)["id"], None)
            self.response_stage.append((word, answered, answered is not None and answered[1] is not None,
                                        cycle))
        if issued_read is not None:
            self.outstanding[issued_read[0]["id"]] = issued_read
        if gpu_req:
            word = get(dut.gpu.req.payload.as_value())
            request = self.requests.unpack(word)
            match = None if self.pipelined else \
                matching_entry(self.table.table, request["addr"], request["write"])
            self.request_stage.append([word, match, bool(request["write"]), cycle])
            if not request["write"]:
                self.traffic.waiting_ids.add(request["id"])

        for new in produced:
            self.queued[new["write"]].append(new)
            self.write_events += new["write"]
            self.read_events += not new["write"]
        if self.pipelined:
            self.produced_before.append(produced)
            produced = self.produced_before.popleft()
        pulses = [0] * self.config.trigger.filter_entries
        for new in produced:
            pulses[new["entry"]] += 1
        assert get(dut.produced) == len(produced), f"{where}: produced {get(dut.produced)}, expected {len(produced)}"
        assert [get(dut.hit_pulse[index]) for index in range(len(pulses))] == pulses, \
            f"{where}: hit_pulse {[get(dut.hit_pulse[i]) for i in range(len(pulses))]}, expected {pulses}"
        assert len(self.request_stage) <= self.places and len(self.response_stage) <= self.response_places

    @property
    def empty(self):
        return not (self.request_stage or self.response_stage or self.queued[0] or self.queued[1]
                    or any(self.produced_before) or any(self.reuse_before))


class Bench:
    def __init__(self, config, table, *, precomputed_ends, count, pressure, events_pause=None,
                 writes=0.5, reprogram=0.0, reuse_ids=False, addresses=None, latency=(1, 12), seed=1):
        self.dut = dut = Trigger(config, precomputed_ends=precomputed_ends)
        self.table = Table(dut, config, table, reprogram=reprogram, seed=seed)
        self.traffic = Traffic(config, self.table, count, writes=writes, reuse_ids=reuse_ids,
                               addresses=addresses, seed=seed + 1)
        self.gpu = Source(dut.gpu.req, self.traffic, pause=Pause(pressure, seed + 2))
        self.gpu_responses = Sink(dut.gpu.resp, "gpu.resp", pause=Pause(pressure, seed + 3))
        self.memory = Memory(dut, config, request_pause=pressure, response_pause=pressure,
                             latency=latency, seed=seed + 4)
        self.events = Sink(dut.events, "events",
                           pause=Pause(pressure if events_pause is None else events_pause, seed + 5))
        self.model = Model(dut, config, self.table, self.traffic)
        self.count = count

    def done(self):
        return (self.gpu.idle and self.memory.idle and self.model.empty
                and len(self.gpu_responses.items) == len(self.memory.responses.sent))

    def run(self, *, until=None, limit=None):
        participants = [self.table, self.gpu, self.gpu_responses, self.memory, self.events]
        self.cycles = run(self.dut, participants, until=until or self.done, check=self.model.check,
                          limit=limit or 200 * self.count + 1000)
        # Pass-through, end to end: everything arrived once, unchanged, in order.
        assert self.memory.requests.items == self.gpu.sent
        assert self.gpu_responses.items == self.memory.responses.sent
        assert len(self.gpu.sent) == self.count
        return self


def random_table(config, seed):
    rng = random.Random(seed)
    top = 1 << config.addr_width
    table = []
    for index in range(config.trigger.filter_entries):
        base = rng.randrange(top // 2)
        table.append(entry(base, rng.randrange(1, top // 8), on_write=rng.random() < 0.8,
                           on_read=rng.random() < 0.8))
    # Overlaps on purpose: the lowest index must win.
    table[-1] = entry(table[0]["base"] + table[0]["size"] // 2, table[0]["size"])
    return table


@pytest.mark.parametrize("with_pipeline", PIPELINED, ids=PIPELINED_IDS)
@pytest.mark.parametrize("precomputed_ends", ENDS, ids=ENDS_IDS)
@pytest.mark.parametrize("pressure, events_pause, seed", [
    (0.0, 0.0, 1), (0.3, 0.3, 2), (0.5, 0.8, 3), (0.2, 0.95, 4)])
def test_random_traffic_with_back_pressure(with_pipeline, precomputed_ends, pressure, events_pause, seed):
    config = pipelined(SMALL, with_pipeline)
    bench = Bench(config, random_table(config, seed), precomputed_ends=precomputed_ends, count=400,
                  pressure=pressure, events_pause=events_pause, reprogram=0.02, seed=seed).run()
    model = bench.model
    assert model.write_events > 20 and model.read_events > 20
    assert model.stall_cycles == model.held_cycles
    if events_pause >= 0.8:
        assert model.held_cycles > 50     # the queues did fill
    assert bench.table.changes > 5 and model.id_reuses == 0


@pytest.mark.parametrize("seed", [11, 12])
def test_the_lowest_of_overlapping_entries_wins_across_groups_of_entries(seed):
    """Seven entries (the pipelined side chooses the winner within groups of four, then
    among the groups): entries 0-3 overlap each other, 4-6 overlap all of them and reach
    further, so each of the seven wins somewhere and the lowest always must."""
    config = pipelined(replace(SMALL, trigger=replace(SMALL.trigger, filter_entries=7)))
    table = ([entry(0x1000 * index, 0x2000) for index in range(4)] +
             [entry(0, 0x6000 + 0x800 * index) for index in range(3)])
    bench = Bench(config, table, precomputed_ends=True, count=400, pressure=0.3,
                  events_pause=0.3, addresses=lambda rng: rng.randrange(0x7400), seed=seed).run()
    codec = StructCodec(trigger_event_layout(config))
    winners = {codec.unpack(word)["entry"] for word in bench.events.items}
    assert winners == set(range(7))


@pytest.mark.parametrize("with_pipeline", PIPELINED, ids=PIPELINED_IDS)
@pytest.mark.parametrize("precomputed_ends", ENDS, ids=ENDS_IDS)
def test_default_configuration(with_pipeline, precomputed_ends):
    config = pipelined(DEFAULT, with_pipeline)
    bench = Bench(config, random_table(config, 7), precomputed_ends=precomputed_ends, count=150,
                  pressure=0.3, events_pause=0.7, reprogram=0.02, seed=7).run()
    assert bench.model.write_events > 10 and bench.model.read_events > 10


# One stage: a queue of three or more and the merge keep up. Pipelined, events reach their
# queue two cycles later and leave through two buffers, so a queue of seven or more does.
@pytest.mark.parametrize("with_pipeline, depth, latency, back", [
    (False, 3, 1, 1), (True, 7, PIPELINED_REQUEST_LATENCY, PIPELINED_RESPONSE_LATENCY)],
    ids=PIPELINED_IDS)
def test_one_transfer_per_cycle_without_back_pressure(with_pipeline, depth, latency, back):
    """Every write triggers, no read does: up to one event per cycle, which a queue of
    ``depth`` keeps up with, so nothing may stall; requests ``latency`` cycles late,
    responses one."""
    config = NDPConfig(engine=None, addr_width=16, sector_bytes=4, id_width=3,
                       trigger=TriggerConfig(filter_entries=4, event_queue_depth=depth,
                                             pipelined=with_pipeline))
    table = [entry(0, 1 << 15, on_read=0)] + [entry(0, 0, enable=0)] * 3
    bench = Bench(config, table, precomputed_ends=True, count=200, pressure=0.0, writes=0.6,
                  addresses=lambda rng: rng.randrange(1 << 15), latency=(1, 1), seed=5).run()
    gpu, memory = bench.gpu, bench.memory
    assert gpu.cycles == list(range(200))
    assert memory.requests.cycles == [cycle + latency for cycle in gpu.cycles]
    assert bench.gpu_responses.cycles == [cycle + back for cycle in memory.responses.cycles]
    assert bench.model.stall_cycles == 0 and bench.model.write_events > 100


@pytest.mark.parametrize("with_pipeline", PIPELINED, ids=PIPELINED_IDS)
@pytest.mark.parametrize("precomputed_ends", ENDS, ids=ENDS_IDS)
def test_a_stopped_event_consumer_holds_only_what_the_queues_need(with_pipeline, precomputed_ends):
    config = pipelined(SMALL, with_pipeline)
    places = PIPELINED_REQUEST_PLACES if with_pipeline else 1
    table = [entry(0x1000, 0x1000)] + [entry(0, 0, enable=0)] * 3
    bench = Bench(config, table, precomputed_ends=precomputed_ends, count=40, pressure=0.0,
                  writes=1.0, addresses=lambda rng: 0x1000 + rng.randrange(0x1000), seed=6)
    bench.events.pause.hold = True
    cycles = 0

    def release():
        nonlocal cycles
        cycles += 1
        if cycles == 60:
            # The queue holds its depth, the request side what it has places for.
            assert len(bench.gpu.sent) == config.trigger.event_queue_depth + places
            assert len(bench.memory.requests.items) == config.trigger.event_queue_depth
            bench.events.pause.hold = False
        return bench.done()

    bench.run(until=release)
    assert bench.model.stall_cycles == bench.model.held_cycles >= 55
    assert len(bench.events.items) == 40


@pytest.mark.parametrize("with_pipeline", PIPELINED, ids=PIPELINED_IDS)
def test_out_of_order_read_responses_carry_their_own_reads(with_pipeline):
    table = [entry(0x100, 0x100), entry(0x200, 0x100)] + [entry(0, 0, enable=0)] * 2
    bench = Bench(pipelined(SMALL, with_pipeline), table, precomputed_ends=True, count=300, pressure=0.2, writes=0.0,
                  latency=(1, 40), seed=8).run()
    order = [StructCodec(response_layout(SMALL)).unpack(w)["id"] for w in bench.memory.responses.sent]
    issued = [StructCodec(request_layout(SMALL)).unpack(w)["id"] for w in bench.memory.requests.items]
    assert order != issued                      # memory did reorder
    assert bench.model.read_events > 50


@pytest.mark.parametrize("with_pipeline", PIPELINED, ids=PIPELINED_IDS)
def test_lowest_index_wins_where_entries_overlap(with_pipeline):
    table = [entry(0x1000, 0x100, on_read=0), entry(0x1000, 0x200), entry(0x1080, 0x100),
             entry(0, (1 << 16) - 1)]
    bench = Bench(pipelined(SMALL, with_pipeline), table, precomputed_ends=True, count=300, pressure=0.3, seed=9).run()
    entries = {StructCodec(trigger_event_layout(SMALL)).unpack(w)["entry"] for w in bench.events.items}
    assert entries == {0, 1, 3}                 # entry 2 lies wholly under entries 0 and 1
    assert bench.model.write_events > 50 and bench.model.read_events > 50


@pytest.mark.parametrize("with_pipeline", PIPELINED, ids=PIPELINED_IDS)
@pytest.mark.parametrize("pressure", [0.0, 0.4])
def test_a_reused_read_id_is_flagged_exactly_when_it_happens(with_pipeline, pressure):
    """Reads may reuse ids of reads still in memory: each such issue pulses ``id_reuse``
    and pass-through stays exact; which read a reused id's response is attributed to is
    not specified, so no read triggers here."""
    config = NDPConfig(engine=None, addr_width=16, sector_bytes=4, id_width=1,
                       trigger=TriggerConfig(filter_entries=2, event_queue_depth=2,
                                             pipelined=with_pipeline))
    # No read triggers, so whether a response may leave does not depend on the attribution.
    table = [entry(0x0, 0x8000, on_read=0), entry(0x8000, 0x8000, on_read=0)]
    bench = Bench(config, table, precomputed_ends=True, count=200, pressure=pressure, writes=0.2,
                  reuse_ids=True, latency=(2, 20), seed=10).run()
    assert bench.model.id_reuses > 10
