"""cocotb tests of the memory model (``sim/drivers/memory_model.py``) behind
:class:`~matndp.sim.designs.MemoryPortFIFOs`: a request source and a response sink on
the GPU side, the model on the memory side, monitors on the model's own port. Timing is
measured on that port, so the FIFOs' latency does not enter the numbers. Parameters:
those of :mod:`matndp.sim.tb.port_fixture`, and

MATNDP_SEED       seed of the traffic, the pause patterns and the model's reordering
"""

import os
import random

import cocotb

from matndp.sim.drivers.memory_port import ReadTagGate
from matndp.sim.drivers.pause import PAUSE_PATTERNS, CyclePause, RandomPause, pause_iterator
from matndp.sim.drivers.stream import SignalTrace, StreamMonitor, StreamSink, StreamSource
from matndp.sim.drivers.memory_model import MemoryModel, MemoryTiming
from matndp.sim.tb.port_fixture import PortBench


SEED = int(os.environ.get("MATNDP_SEED", "1"))


class MemoryBench(PortBench):
    def __init__(self, dut, timing, *, request_pause=PAUSE_PATTERNS["none"],
                 response_pause=PAUSE_PATTERNS["none"], unique_tags=True):
        super().__init__(dut)
        self.gpu = self.add(StreamSource(dut, "gpu__req", codec=self.requests, pause=request_pause, seed=SEED))
        self.gpu_responses = self.add(StreamSink(dut, "gpu__resp", codec=self.responses,
                                                 pause=response_pause, seed=SEED + 1))
        if unique_tags:
            self.gpu.gate = self.add(ReadTagGate(self.gpu, self.gpu_responses))
        self.memory = self.add(MemoryModel(dut, self.config, timing, seed=SEED + 2))
        self.issued = self.add(StreamMonitor(dut, "mem__req", codec=self.requests))
        self.returned = self.add(StreamMonitor(dut, "mem__resp", codec=self.responses))

    @property
    def sector(self):
        return self.config.sector_bytes

    @property
    def full_mask(self):
        return (1 << self.sector) - 1

    def read(self, addr, tag):
        return dict(addr=addr, write=0, data=0, mask=self.full_mask, id=tag)

    def write(self, addr, data, mask=None):
        return dict(addr=addr, write=1, data=data, mask=self.full_mask if mask is None else mask, id=0)

    def tags(self):
        """Round-robin read tags."""
        count = 1 << self.config.id_width
        tag = 0
        while True:
            yield tag
            tag = (tag + 1) % count

    async def run(self, requests, limit=5000):
        reads = sum(not request["write"] for request in requests)
        expected = len(self.gpu_responses.items) + reads
        await self.gpu.send(requests)
        await self.until(lambda: len(self.gpu_responses.items) >= expected and self.memory.idle,
                         limit, f"{reads} read responses")
        await self.wait(10)

    def check_records(self):
        """The model's own records agree with what its port did."""
        assert self.memory.requests == self.issued.items
        assert self.memory.request_cycles == self.issued.transfer_cycles
        assert self.memory.responses == self.returned.items
        assert self.memory.response_cycles == self.returned.transfer_cycles


def _read_pairs(bench):
    """(request cycle, response cycle, request, response) per read, pairing by tag in
    issue order, which unique outstanding tags make unambiguous."""
    waiting = {}
    for request, cycle in zip(bench.issued.items, bench.issued.transfer_cycles):
        if not request["write"]:
            waiting.setdefault(request["id"], []).append((cycle, request))
    pairs = []
    for response, cycle in zip(bench.returned.items, bench.returned.transfer_cycles):
        issued_at, request = waiting[response["id"]].pop(0)
        pairs.append((issued_at, cycle, request, response))
    assert not any(waiting.values()), "reads without a response"
    return pairs


@cocotb.test()
@cocotb.parametrize(latency=[1, 5, 17])
async def latency_is_exact(dut, latency):
    """Without back-pressure every read response is offered, and taken, exactly
    ``latency`` cycles after its request was accepted, in issue order."""
    bench = MemoryBench(dut, MemoryTiming(latency=latency))
    await bench.start()
    tags = bench.tags()
    requests = [bench.read(bench.sector * k, next(tags)) for k in range(40)]
    await bench.run(requests)
    bench.check_records()
    pairs = _read_pairs(bench)
    assert len(pairs) == len(requests)
    assert [response - request for request, response, *_ in pairs] == [latency] * len(pairs)
    assert [request for *_, request, _ in pairs] == [r for r in bench.issued.items]


@cocotb.test()
@cocotb.parametrize(("sectors_per_cycle", [0.25, 0.75, 1.0, 2.0]))
async def bandwidth_limits_the_request_rate(dut, sectors_per_cycle):
    """With requests always waiting, the model accepts them at its bandwidth: after the
    first, request k is accepted within a cycle of k / rate cycles later (never faster
    than one per cycle, the port's own limit)."""
    bench = MemoryBench(dut, MemoryTiming(latency=2, bytes_per_cycle=sectors_per_cycle * 8))
    assert bench.sector == 8, "the rates below assume 8-byte sectors"
    await bench.start()
    rng = random.Random(SEED)
    requests = [bench.write(bench.sector * k, rng.getrandbits(64)) for k in range(64)]
    await bench.run(requests)
    bench.check_records()
    cycles = bench.memory.request_cycles
    # The FIFO ahead of the model needs a few cycles to fill; count from then on.
    start = 8
    rate = min(sectors_per_cycle, 1.0)
    for k in range(start, len(cycles)):
        expected = (k - start) / rate
        assert abs((cycles[k] - cycles[start]) - expected) <= 1, (k, cycles[k] - cycles[start], expected)


@cocotb.test()
async def request_pauses_withhold_ready(dut):
    """``request_pause`` holds ``req.ready`` low in exactly its paused cycles."""
    pattern = CyclePause((1, 0, 0))
    bench = MemoryBench(dut, MemoryTiming(latency=2, request_pause=pattern))
    trace = bench.add(SignalTrace({"ready": dut.mem__req__ready}))
    await bench.start()
    rng = random.Random(SEED)
    await bench.run([bench.write(bench.sector * k, rng.getrandbits(64)) for k in range(30)])
    ready = trace.trace["ready"]
    expected = [int(not paused) for paused, _ in zip(pause_iterator(pattern, 0), ready)]
    assert ready == expected
    assert len(bench.memory.requests) == 30


@cocotb.test()
@cocotb.parametrize(reorder=[False, True])
async def reordering(dut, reorder):
    """Reads that wait together (the GPU side takes one response in four cycles) come back
    in issue order, or, with ``reorder``, in another order; each response no earlier than
    the latency after its request, and each with the data of its own address."""
    latency = 3
    bench = MemoryBench(dut, MemoryTiming(latency=latency, reorder=reorder),
                        response_pause=CyclePause((1, 1, 1, 0)))
    rng = random.Random(SEED)
    count = 1 << bench.config.id_width
    contents = {bench.sector * k: rng.getrandbits(64) for k in range(count)}
    for addr, data in contents.items():
        bench.memory.store.write(addr, data, bench.full_mask)
    await bench.start()
    await bench.run([bench.read(addr, tag) for tag, addr in enumerate(contents)])
    bench.check_records()
    pairs = _read_pairs(bench)
    assert len(pairs) == count
    assert all(response - request >= latency for request, response, *_ in pairs)
    assert all(response["data"] == contents[request["addr"]] for _, _, request, response in pairs)
    order = [response["id"] for response in bench.returned.items]
    if reorder:
        assert order != sorted(order), "reordering enabled, yet the responses came back in issue order"
    else:
        assert order == list(range(count))


@cocotb.test()
async def reads_return_what_was_written(dut):
    """Random writes (random byte masks) and reads over a few sectors, under random
    back-pressure on every stream and out-of-order responses: every read returns the
    bytes an independent byte model holds at the read's place in request order."""
    bench = MemoryBench(dut, MemoryTiming(latency=6, request_pause=RandomPause(0.3),
                                          response_pause=RandomPause(0.3), reorder=True),
                        request_pause=PAUSE_PATTERNS["random"], response_pause=PAUSE_PATTERNS["random"])
    await bench.start()
    rng = random.Random(SEED)
    sector = bench.sector
    tags = bench.tags()
    requests = []
    for _ in range(300):
        addr = sector * rng.randrange(6)
        if rng.random() < 0.55:
            requests.append(bench.write(addr, rng.getrandbits(8 * sector), rng.getrandbits(sector)))
        else:
            requests.append(bench.read(addr, next(tags)))
    await bench.run(requests, limit=20_000)
    bench.check_records()
    assert bench.memory.requests == requests

    memory = {}
    expected = []
    for request in requests:
        old = memory.get(request["addr"], bytes(sector))
        if request["write"]:
            new = request["data"].to_bytes(sector, "little")
            memory[request["addr"]] = bytes(new[b] if request["mask"] >> b & 1 else old[b] for b in range(sector))
        else:
            expected.append(int.from_bytes(old, "little"))
    pairs = _read_pairs(bench)
    issued_reads = [r for r in bench.issued.items if not r["write"]]
    position = {id(request): k for k, request in enumerate(issued_reads)}
    data = [None] * len(issued_reads)
    for _, _, request, response in pairs:
        data[position[id(request)]] = response["data"]
    assert data == expected
    order = [position[id(request)] for _, _, request, _ in pairs]
    assert order != sorted(order), "no response came back out of order"


@cocotb.test()
async def byte_masks(dut):
    """A partial write changes exactly the bytes its mask enables."""
    bench = MemoryBench(dut, MemoryTiming(latency=2))
    await bench.start()
    sector = bench.sector
    base = bytes(range(0x10, 0x10 + sector))
    ones = bytes([0xFF] * sector)
    writes = [bench.write(0, int.from_bytes(base, "little"))]
    masks = [0b1, 1 << (sector - 1), 0b0101_1010 & bench.full_mask, 0]
    for mask in masks:
        writes.append(bench.write(0, int.from_bytes(ones, "little"), mask))
    await bench.run(writes + [bench.read(0, 1)])
    merged = bytes(0xFF if any(mask >> b & 1 for mask in masks) else base[b] for b in range(sector))
    assert bench.gpu_responses.items == [{"id": 1, "data": int.from_bytes(merged, "little"), "status": 0}]


@cocotb.test()
async def reset_discards_reads_in_flight(dut):
    """Reads in flight when reset begins get no response and are counted as discarded;
    the stored data survives and is read back after the reset."""
    latency = 30
    bench = MemoryBench(dut, MemoryTiming(latency=latency))
    await bench.start()
    value = 0x0123_4567_89AB_CDEF
    await bench.run([bench.write(0, value)])
    bench.gpu.send_nowait([bench.read(bench.sector * k, k) for k in range(1, 6)])
    await bench.until(lambda: len(bench.memory.requests) == 6, 100, "the reads reaching memory")
    await bench.reset(2)
    assert bench.memory.discarded_reads == 5
    await bench.wait(latency + 10)
    assert not bench.gpu_responses.items and not bench.memory.responses
    await bench.run([bench.read(0, 7)])
    assert bench.gpu_responses.items == [{"id": 7, "data": value, "status": 0}]
