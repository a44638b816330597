"""The slice's counters in Amaranth's simulator, with random back-pressure on every stream
and a slow event consumer, read over the register bus and compared with expectations
formed from the ports alone:

- STALL_CYCLES: the cycles in which a request or a read response sits inside the slice
  (it entered and has not left) without being offered onward;
- EVENT_COUNT and each entry's HITS: the events that left on ``events``, which the
  reference matcher (tests/hw/trigger/reference.py) predicts from the requests;
- ID_REUSE stays clear: every read id is unique among the reads in flight.

The held cycles differ from the cycles in which the GPU offers a request that the slice
refuses, so a counter of the wrong condition cannot pass."""

import random

import pytest

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.csr_map import entry_register_name
from matndp.hw.layouts import request_layout, response_layout
from matndp.hw.ndp_slice import NDPSlice
from matndp.sim.drivers.packing import StructCodec
from amaranth.sim import Simulator
from tests.hw.bus.models import Initiator
from tests.hw.stream_bench import Monitor, Pause, Sink, Source
from tests.hw.trigger.reference import entry, matching_entry
from tests.hw.trigger.test_trigger import Memory


CONFIG = NDPConfig(engine=None, addr_width=16, sector_bytes=4, id_width=3,
                   trigger=TriggerConfig(filter_entries=2, event_queue_depth=2))
# Overlapping ranges (the lower index wins); entry 1 triggers on writes only.
TABLE = [entry(0x1000, 0x800), entry(0x1400, 0x1000, on_read=0)]


class Requests:
    """The GPU's requests, mostly in or near the table's ranges; a read's id is never one
    whose response the GPU has not yet received."""

    def __init__(self, count, seed):
        self.count, self.made = count, 0
        self.random = random.Random(seed)
        self.codec = StructCodec(request_layout(CONFIG))
        self.waiting_ids = set()
        self.expected = []              # the (entry, write) of each triggering request

    def __call__(self):
        if self.made == self.count:
            raise StopIteration
        rng = self.random
        write = rng.random() < 0.55
        free = [i for i in range(1 << CONFIG.id_width) if i not in self.waiting_ids]
        if not write and not free:
            return None
        request_id = rng.randrange(1 << CONFIG.id_width) if write else rng.choice(free)
        if not write:
            self.waiting_ids.add(request_id)
        addr = rng.choice([rng.randrange(0x0F00, 0x2500), rng.randrange(1 << CONFIG.addr_width)])
        match = matching_entry(TABLE, addr, write)
        if match is not None:
            self.expected.append(match[0])
        self.made += 1
        return self.codec.pack(dict(addr=addr, write=int(write), data=rng.getrandbits(32),
                                    mask=rng.getrandbits(CONFIG.sector_bytes), id=request_id))


class Occupancy:
    """Counts the cycles in which something that entered the slice at ``inbound`` and has
    not left at ``outbound`` is not offered on ``outbound`` (the slice passes requests and
    responses through one register stage each, one item deep)."""

    def __init__(self, inbound, outbound):
        self.inbound, self.outbound = inbound, outbound
        self.inside = 0
        self.held = 0

    def sample(self, ctx):
        held = self.inside and not ctx.get(self.outbound.valid)
        self.inside += bool(ctx.get(self.inbound.valid) and ctx.get(self.inbound.ready))
        self.inside -= bool(ctx.get(self.outbound.valid) and ctx.get(self.outbound.ready))
        assert 0 <= self.inside <= 1, f"{self.inside} items inside a one-deep stage"
        return held


def _run(count, pressure, events_pause, seed):
    dut = NDPSlice(CONFIG)
    registers = dut.register_map
    initiator = Initiator(dut.csr)
    requests = Requests(count, seed)
    gpu = Source(dut.gpu.req, requests, pause=Pause(pressure, seed + 1))
    gpu_responses = Sink(dut.gpu.resp, "gpu.resp", pause=Pause(pressure, seed + 2))
    memory = Memory(dut, CONFIG, request_pause=pressure, response_pause=pressure, seed=seed + 3)
    events = Sink(dut.events, "events", pause=Pause(events_pause, seed + 4))
    paths = [Occupancy(dut.gpu.req, dut.mem.req), Occupancy(dut.mem.resp, dut.gpu.resp)]
    offers = Monitor(dut.gpu.req, "gpu.req", rules=False)
    response_codec = StructCodec(response_layout(CONFIG))
    seen = {"held": 0, "refused": 0}
    counters = {}

    async def bench(ctx):
        for index, fields in enumerate(TABLE):
            for name in ("base", "size"):
                for register, word in registers.split(entry_register_name(index, name), fields[name]):
                    assert not await initiator.write(ctx, register.address, word)
            ctrl = registers[entry_register_name(index, "ctrl")]
            word = ctrl.pack(**{name: fields[name] for name in ("enable", "on_write", "on_read")})
            assert not await initiator.write(ctx, ctrl.address, word)
        participants = [gpu, gpu_responses, memory, events]
        cycle = 0
        while not (gpu.idle and memory.idle and len(gpu_responses.items) == len(memory.responses.sent)
                   and len(events.items) == len(requests.expected)):
            for participant in participants:
                participant.drive(ctx, cycle)
            for participant in participants:
                participant.sample(ctx, cycle)
            offers.sample(ctx, cycle)
            seen["held"] += any([path.sample(ctx) for path in paths])
            seen["refused"] += offers.valid and not offers.ready
            if gpu_responses.transfer:
                requests.waiting_ids.discard(response_codec.unpack(gpu_responses.items[-1])["id"])
            await ctx.tick()
            cycle += 1
            assert cycle < 300 * count, "the traffic did not drain"
        ctx.set(dut.gpu.req.valid, 0)
        ctx.set(dut.mem.resp.valid, 0)
        await initiator.idle(ctx, 4)
        names = ["stall_cycles", "event_count", "status",
                 *(entry_register_name(index, "hits") for index in range(len(TABLE)))]
        for name in names:
            word, error = await initiator.read(ctx, registers[name].address)
            assert not error, f"bus error reading {name}"
            counters[name] = registers[name].unpack(word)

    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    return requests, events, seen, counters


@pytest.mark.parametrize("pressure, events_pause, seed", [(0.3, 0.9, 1), (0.5, 0.7, 2)])
def test_counters_against_the_ports_under_random_back_pressure(pressure, events_pause, seed):
    requests, events, seen, counters = _run(300, pressure, events_pause, seed)
    assert seen["held"] > 20, f"only {seen['held']} held cycles: the queues hardly filled"
    assert seen["refused"] != seen["held"], "held cycles equal refused offers: the test cannot tell them apart"
    assert counters["stall_cycles"]["count"] == seen["held"]
    assert counters["event_count"]["count"] == len(events.items) == len(requests.expected)
    for index in range(len(TABLE)):
        assert counters[entry_register_name(index, "hits")]["count"] == requests.expected.count(index)
    assert set(requests.expected) == {0, 1}
    assert counters["status"]["id_reuse"] == 0
