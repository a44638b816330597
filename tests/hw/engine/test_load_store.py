"""The load/store unit in Amaranth's simulator.

Every µthread of every sub-core issues random memory operations (one at a time, as a
sub-core does) with random back-pressure on ``ops``, ``mem.req`` and every completion
stream, against a Python memory answering reads after random latencies and out of order.
The reference is written from the ISA's semantics (bytes of a sector, words at an
address), not from the unit's request encoding; the memory behind the port must end up
as the reference, every op must complete exactly once to its sub-core and slot with the
reference's value, and no completion may ever be lost.
"""

import random
from collections import deque

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.isa import Opcode
from matndp.hw.engine.layouts import ndp_id_width
from matndp.hw.engine.load_store import LoadStoreUnit
from matndp.hw.export import export_verilog
from matndp.hw.layouts import ResponseStatus

from .harness import CompletionSinks, Source, overrun_seen, simulate
from ..streams import shared


CONFIGS = {
    "default": NDPConfig(),
    "no-memory-queue": NDPConfig(engine=EngineConfig(memory_queue=0)),
    "memory-queue-of-one": NDPConfig(engine=EngineConfig(memory_queue=1)),
    "two-sub-cores": NDPConfig(engine=EngineConfig(sub_cores=2)),
    "64-byte-sectors": NDPConfig(sector_bytes=64),
    "three-sub-cores-of-four-slots": NDPConfig(engine=EngineConfig(sub_cores=3, slots=4)),
}

VECTOR_OPS = (Opcode.VLD, Opcode.VST, Opcode.VSTM)
WORD_OPS = (Opcode.LW, Opcode.SW)
NOT_MEMORY_OPS = (Opcode.ILLEGAL, Opcode.ADD, Opcode.SLD, Opcode.SAMOADD)
STORE_OPS = (Opcode.VST, Opcode.VSTM, Opcode.SW)


def to_int(lanes):
    return sum(value << (32 * index) for index, value in enumerate(lanes))


def to_lanes(value, lanes):
    return [(value >> (32 * index)) & 0xFFFFFFFF for index in range(lanes)]


class ReferenceMemory:
    """Memory as the ISA describes it: bytes, sectors at sector-aligned addresses and
    32-bit words at 4-aligned ones."""

    def __init__(self, config):
        self.sector_bytes = config.sector_bytes
        self.lanes = config.lanes
        self.sectors = {}

    def _sector(self, addr):
        return self.sectors.setdefault(addr // self.sector_bytes, bytearray(self.sector_bytes))

    def execute(self, note):
        """The completion value (lanes) of the op, after applying it."""
        zero = [0] * self.lanes
        addr = note["addr"]
        sector = self._sector(addr)
        offset = addr % self.sector_bytes
        opcode = note["opcode"]
        if opcode is Opcode.VLD:
            return to_lanes(int.from_bytes(sector, "little"), self.lanes)
        if opcode is Opcode.LW:
            return [int.from_bytes(sector[offset:offset + 4], "little")] + zero[1:]
        if opcode is Opcode.VST:
            sector[:] = to_int(note["data"]).to_bytes(self.sector_bytes, "little")
        elif opcode is Opcode.VSTM:
            incoming = to_int(note["data"]).to_bytes(self.sector_bytes, "little")
            for byte in range(self.sector_bytes):
                if note["mask"] >> byte & 1:
                    sector[byte] = incoming[byte]
        elif opcode is Opcode.SW:
            sector[offset:offset + 4] = note["word"].to_bytes(4, "little")
        return zero

    def contents(self):
        return {index: int.from_bytes(sector, "little") for index, sector in self.sectors.items()}


class PortMemory:
    """What answers the unit's memory port: applies requests as they are accepted and
    answers reads after a random latency, any due response first."""

    def __init__(self, config, *, max_latency, seed, fail_rate=0.0):
        self.sector_bytes = config.sector_bytes
        self.sectors = {}
        self.random = random.Random(seed)
        self.max_latency = max_latency
        self.fail_rate = fail_rate
        self.pending = []          # (due cycle, id, data, status)
        self.reading = set()       # ids of reads not yet answered

    def accept(self, request, cycle):
        assert request.addr % self.sector_bytes == 0, f"unaligned request {request.addr:#x}"
        index = request.addr // self.sector_bytes
        old = self.sectors.get(index, 0)
        if request.write:
            enables = sum(0xFF << (8 * byte) for byte in range(self.sector_bytes)
                          if request.mask >> byte & 1)
            self.sectors[index] = (old & ~enables) | (request.data & enables)
        else:
            assert request.id not in self.reading, f"id {request.id} reused while outstanding"
            self.reading.add(request.id)
            status = ResponseStatus.OKAY
            if self.random.random() < self.fail_rate:
                status = self.random.choice([ResponseStatus.SLAVE_ERROR, ResponseStatus.DECODE_ERROR])
            self.pending.append((cycle + self.random.randint(1, self.max_latency),
                                 request.id, old, status))

    def response(self, cycle, pause):
        """A due response to offer this cycle, or None."""
        due = [item for item in self.pending if item[0] <= cycle]
        if not due or self.random.random() < pause:
            return None
        return self.random.choice(due)

    def delivered(self, item):
        self.pending.remove(item)
        self.reading.remove(item[1])

    def contents(self):
        return {index: value for index, value in self.sectors.items()}


def random_op(config, thread, rng, *, base, sectors):
    """(payload, note) of a random memory op of ``thread``; a few are ops the unit must
    refuse (misaligned, or not memory ops)."""
    lanes, sector_bytes = config.lanes, config.sector_bytes
    opcode = rng.choice(VECTOR_OPS + WORD_OPS)
    lane = rng.randrange(lanes)
    addr = base + sector_bytes * rng.randrange(sectors)
    if opcode in WORD_OPS:
        addr += 4 * lane
    data = [rng.getrandbits(32) for _ in range(lanes)]
    refused = True
    draw = rng.random()
    if draw < 0.03:
        addr += rng.randint(1, 3)
    elif draw < 0.05 and opcode in VECTOR_OPS and lanes > 1:
        addr += 4 * rng.randrange(1, lanes)
    elif draw < 0.07:
        opcode = rng.choice(NOT_MEMORY_OPS)
    else:
        refused = False
    # A sub-core posts only stores that passed its checks, never one the unit refuses.
    posted = opcode in STORE_OPS and not refused and rng.random() < 0.4
    payload = {"thread": thread, "opcode": opcode, "addr": addr, "data": data,
               "mask": rng.getrandbits(sector_bytes), "posted": posted,
               "entry": rng.randrange(config.trigger.filter_entries)}
    note = dict(payload, refused=refused, word=data[lane], lane=lane)
    return payload, note


def expected_request(config, note):
    """(addr, write, mask) the op's request must have, from the op's meaning."""
    sector_bytes = config.sector_bytes
    opcode, lane = note["opcode"], note["lane"]
    all_bytes = (1 << sector_bytes) - 1
    mask = {Opcode.VLD: all_bytes, Opcode.VST: all_bytes, Opcode.VSTM: note["mask"],
            Opcode.LW: 0xF << (4 * lane), Opcode.SW: 0xF << (4 * lane)}[opcode]
    write = opcode in (Opcode.VST, Opcode.VSTM, Opcode.SW)
    return note["addr"] - note["addr"] % sector_bytes, write, mask


def run_random(config, *, count, seed, op_pause=0.3, request_pause=0.3, completion_pause=0.3,
               response_pause=0.2, max_latency=12, sectors=12, fail_rate=0.0):
    """Runs ``count`` random ops; returns the statistics the tests look at. Memory answers
    a ``fail_rate`` share of the reads with an error status."""
    dut = shared(LoadStoreUnit, config)
    engine = config.engine
    rng = random.Random(seed)
    threads = engine.sub_cores * engine.slots
    base = (1 << config.addr_width) - 64 * config.sector_bytes   # addresses up to the top
    free = set(range(threads))
    offered = 0

    def next_record():
        nonlocal offered
        if offered == count or not free:
            return None
        thread = rng.choice(sorted(free))
        free.remove(thread)
        offered += 1
        return random_op(config, thread, rng, base=base, sectors=sectors)

    source = Source(dut.ops, next_record, pause=op_pause, seed=seed + 1)
    sinks = CompletionSinks(dut, pause=completion_pause, seed=seed + 10)
    memory = PortMemory(config, max_latency=max_latency, seed=seed + 2, fail_rate=fail_rate)
    reference = ReferenceMemory(config)
    failed = set()                   # threads whose read memory answered with an error
    request_random = random.Random(seed + 3)
    outstanding = {}                 # thread -> (note, expected value)
    to_request = deque()             # accepted ops that must still send a request
    request_cycle, response_cycle = {}, {}
    completed = []
    stats = dict(requests=0, loads=0, stores=0, posted=0, refused=0, failed=0, cycles=0)

    async def bench(ctx):
        cycle = 0
        while len(completed) < count:
            assert cycle < 40 * count + 200, f"stuck after {len(completed)} of {count} completions"
            source.drive(ctx)
            request_ready = request_random.random() >= request_pause
            ctx.set(dut.mem.req.ready, request_ready)
            response = memory.response(cycle, response_pause)
            ctx.set(dut.mem.resp.valid, response is not None)
            if response is not None:
                ctx.set(dut.mem.resp.payload, {"id": response[1], "data": response[2],
                                               "status": response[3]})
            sinks.drive(ctx)

            assert not ctx.get(dut.overrun), f"completion lost in cycle {cycle}"
            record = source.sample(ctx, cycle)
            if record is not None:
                note = record[1]
                expected = reference.execute(note) if not note["refused"] else [0] * config.lanes
                if note["posted"]:
                    # Its µthread goes on at once: the thread may issue again while the
                    # store still waits for the port.
                    free.add(note["thread"])
                else:
                    outstanding[note["thread"]] = (note, expected)
                if not note["refused"]:
                    to_request.append(note)
            stored = ctx.get(dut.stored_valid)
            if request_ready and ctx.get(dut.mem.req.valid):
                request = ctx.get(dut.mem.req.payload)
                assert to_request, f"a request {request} for no op"
                note = to_request.popleft()
                assert (request.addr, request.write, request.mask) == expected_request(config, note)
                assert request.id == note["thread"]
                if request.write:
                    enables = sum(0xFF << (8 * byte) for byte in range(config.sector_bytes)
                                  if request.mask >> byte & 1)
                    assert request.data & enables == to_int(note["data"]) & enables
                memory.accept(request, cycle)
                stats["requests"] += 1
                assert stored == note["posted"], f"stored_valid {stored} for {note}"
                if note["posted"]:
                    assert ctx.get(dut.stored_entry) == note["entry"]
                    stats["posted"] += 1
                    completed.append(note["thread"])
                else:
                    request_cycle[note["thread"]] = cycle
            else:
                assert not stored, f"stored_valid without a request taken in cycle {cycle}"
            if response is not None:
                assert ctx.get(dut.mem.resp.ready), "a response was not taken at once"
                memory.delivered(response)
                response_cycle[response[1]] = cycle
                if response[3] != ResponseStatus.OKAY:
                    failed.add(response[1])
            for thread, value, error in sinks.sample(ctx, cycle):
                assert thread in outstanding, f"completion for idle thread {thread} in cycle {cycle}"
                note, expected = outstanding.pop(thread)
                if thread in failed:
                    # A failed load completes with the error and no value.
                    expected, note = [0] * config.lanes, dict(note, refused=True)
                assert (value, error) == (expected, int(note["refused"])), \
                    f"thread {thread} {note['opcode'].name} at {note['addr']:#x}"
                if thread in failed:
                    failed.remove(thread)
                    assert response_cycle.pop(thread) < cycle
                    stats["failed"] += 1
                elif note["refused"]:
                    stats["refused"] += 1
                elif note["opcode"] in (Opcode.VLD, Opcode.LW):
                    assert response_cycle.pop(thread) < cycle
                    stats["loads"] += 1
                else:
                    assert request_cycle.pop(thread) < cycle
                    stats["stores"] += 1
                completed.append(thread)
                free.add(thread)
            await ctx.tick()
            cycle += 1
        stats["cycles"] = cycle

    simulate(dut, bench)
    assert not to_request and not outstanding and not memory.pending
    assert memory.contents() == {index: value for index, value in reference.contents().items()
                                 if value or index in memory.contents()}
    return stats


@pytest.mark.parametrize("name", CONFIGS)
def test_random_ops_with_back_pressure(name):
    stats = run_random(CONFIGS[name], count=600, seed=sum(map(ord, name)))
    # Every kind of outcome occurred.
    assert stats["loads"] > 100 and stats["stores"] > 50 and stats["posted"] > 50 and \
        stats["refused"] > 5


def test_long_memory_latency_and_hard_back_pressure():
    stats = run_random(CONFIGS["two-sub-cores"], count=400, seed=77, op_pause=0.1,
                       request_pause=0.6, completion_pause=0.6, max_latency=60)
    assert stats["loads"] > 100


def test_failed_reads_complete_with_an_error():
    """Memory answers 30 % of the reads with SLAVE_ERROR or DECODE_ERROR: those loads
    complete with ``error`` and no value, every other op as before."""
    stats = run_random(CONFIGS["default"], count=500, seed=31, fail_rate=0.3)
    assert stats["failed"] > 20 and stats["loads"] > 50 and stats["stores"] > 50


def _full_rate_run(config, ops):
    """Cycles of op acceptance and of requests for ``ops`` (thread, opcode, addr) offered
    back to back with everything else always ready and memory answering next cycle."""
    dut = shared(LoadStoreUnit, config)
    accepted, requested, completions = [], [], []
    memory = PortMemory(config, max_latency=1, seed=0)

    async def bench(ctx):
        for completion in dut.completions:
            ctx.set(completion.ready, 1)
        ctx.set(dut.mem.req.ready, 1)
        pending = deque(ops)
        cycle = 0
        while len(completions) < len(ops):
            assert cycle < 10 * len(ops) + 50
            ctx.set(dut.ops.valid, bool(pending))
            if pending:
                thread, opcode, addr = pending[0]
                ctx.set(dut.ops.payload, {"thread": thread, "opcode": opcode, "addr": addr})
            response = memory.response(cycle, 0.0)
            ctx.set(dut.mem.resp.valid, response is not None)
            if response is not None:
                ctx.set(dut.mem.resp.payload, {"id": response[1], "data": response[2]})
                memory.delivered(response)
            if pending and ctx.get(dut.ops.ready):
                accepted.append(cycle)
                pending.popleft()
            if ctx.get(dut.mem.req.valid):
                memory.accept(ctx.get(dut.mem.req.payload), cycle)
                requested.append(cycle)
            assert not ctx.get(dut.overrun)
            for sub_core, completion in enumerate(dut.completions):
                if ctx.get(completion.valid):
                    completions.append((cycle, sub_core, ctx.get(completion.payload.slot)))
            await ctx.tick()
            cycle += 1

    simulate(dut, bench)
    return accepted, requested, completions


def test_one_request_per_cycle():
    config = CONFIGS["default"]
    threads = config.engine.slots
    ops = [(index % threads, (Opcode.VST, Opcode.VLD, Opcode.LW, Opcode.SW)[index % 4],
            0x1000 + 4 * (index % 4 == 2 or index % 4 == 3) + 32 * index) for index in range(64)]
    # Each µthread's next op comes `threads` cycles after its last, later than its
    # completion (the run checks that no completion is lost).
    accepted, requested, _ = _full_rate_run(config, ops)
    assert accepted == list(range(len(ops)))
    assert requested == list(range(1, len(ops) + 1))


def test_documented_latencies():
    config = CONFIGS["default"]
    accepted, requested, completions = _full_rate_run(
        config, [(3, Opcode.VST, 0x40), (5, Opcode.VLD, 0x80), (6, Opcode.SW, 0x7)])
    assert accepted == [0, 1, 2]
    assert requested == [1, 2]
    # The store's request is taken in cycle 1: offered from 4. The load's request is taken
    # in cycle 2 and answered in cycle 3: offered from 6. The misaligned sw is refused in
    # cycle 2: offered from 5.
    assert completions == [(4, 0, 3), (5, 0, 6), (6, 0, 5)]


@pytest.mark.parametrize("depth", [0, 1, 4])
def test_ops_wait_behind_a_busy_port_in_order(depth):
    """While the port takes nothing, the unit accepts one op into its request register and
    ``memory_queue`` more, then refuses (and says it has no room); once the port takes
    again they leave in the order they came, one a cycle, and a refused op is still
    completed at once meanwhile."""
    config = NDPConfig(engine=EngineConfig(memory_queue=depth))
    dut = LoadStoreUnit(config)
    ops = [(thread, 0x1000 + 32 * thread) for thread in range(depth + 3)]
    accepted, requested, refused = [], [], []

    async def bench(ctx):
        for completion in dut.completions:
            ctx.set(completion.ready, 1)
        pending = deque(ops)
        for cycle in range(12):
            ctx.set(dut.ops.valid, 1)
            thread, addr = pending[0]
            ctx.set(dut.ops.payload, {"thread": thread, "opcode": Opcode.VST, "addr": addr})
            # `room` (PICK's preference) says whether an aligned op would be taken now.
            assert ctx.get(dut.room) == ctx.get(dut.ops.ready) == (len(accepted) <= depth)
            if ctx.get(dut.ops.ready):
                accepted.append(pending.popleft()[0])
            await ctx.tick()
        # A misaligned op is refused (completed with an error) although the port is busy.
        ctx.set(dut.ops.payload, {"thread": 12, "opcode": Opcode.VST, "addr": 0x1001})
        assert ctx.get(dut.ops.ready)
        assert not ctx.get(dut.room)
        await ctx.tick()
        ctx.set(dut.ops.valid, 0)
        for cycle in range(3):
            for completion in dut.completions:
                if ctx.get(completion.valid):
                    refused.append((ctx.get(completion.payload.slot), ctx.get(completion.payload.error)))
            await ctx.tick()
        ctx.set(dut.mem.req.ready, 1)
        for cycle in range(2 * len(ops) + 4):
            if ctx.get(dut.mem.req.valid):
                requested.append((cycle, ctx.get(dut.mem.req.payload.id), ctx.get(dut.mem.req.payload.addr)))
            await ctx.tick()

    simulate(dut, bench)
    assert accepted == list(range(depth + 1))
    assert refused == [(12, 1)]
    # In order, one a cycle from the first cycle the port takes.
    assert requested == [(cycle, thread, 0x1000 + 32 * thread) for cycle, thread in enumerate(accepted)]


def test_overrun_is_flagged_when_a_thread_breaks_the_one_access_rule():
    """Two ops of one µthread with its first completion not yet taken: the second's
    completion would be lost, and ``overrun`` says so."""
    dut = shared(LoadStoreUnit, CONFIGS["default"])
    # Refused ops complete without the memory port, which stays idle here.
    assert overrun_seen(dut, [{"thread": 4, "opcode": Opcode.SW, "addr": 0x41},
                              {"thread": 4, "opcode": Opcode.VST, "addr": 0x44}])


def test_id_width_covers_every_thread():
    config = NDPConfig(id_width=2, engine=EngineConfig(sub_cores=2, slots=16))
    dut = shared(LoadStoreUnit, config)
    assert ndp_id_width(config) == config.engine.thread_bits == 5
    assert len(dut.mem.req.payload.id) == len(dut.mem.resp.payload.id) == 5
    assert ndp_id_width(NDPConfig()) == NDPConfig().id_width
    assert len(dut.completions) == 2
    assert "module load_store" in export_verilog(dut, "load_store")


def test_exports_to_verilog():
    for config in (NDPConfig(), NDPConfig(sector_bytes=8)):
        assert "module load_store" in export_verilog(LoadStoreUnit(config), "load_store")


@pytest.mark.parametrize("config", [None, "default", EngineConfig()])
def test_constructor_refuses_what_is_not_a_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig"):
        LoadStoreUnit(config)
