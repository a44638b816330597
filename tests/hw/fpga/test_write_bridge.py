# amaranth: UnusedElaboratable=no
"""The GPU side's write path in Amaranth's simulator: random bursts (refused ones among them)
with random pauses on AW, W and B, memory answering the sector writes in order after random
waits with random statuses; every beat must become the specification's sector write (lanes
AND strobes, the beat's data), and every burst be answered once, in acceptance order,
after all its writes were answered, with the first error among them (SLVERR for a refused
burst, after its data)."""

import random

import pytest
from amaranth.sim import Simulator

from matndp.hw.config import NDPConfig
from matndp.hw.fpga.config import AXIConfig
from matndp.hw.fpga.write_bridge import AXIWriteBridge
from matndp.hw.layouts import ResponseStatus
from matndp.sim.golden.axi import beat_addresses, is_refused, lanes

from .test_read_bridge import _bursts


CONFIG = NDPConfig(addr_width=32, engine=None)
AXI = AXIConfig(id_width=4, write_bursts=4)
SB = CONFIG.sector_bytes


def test_bursts_are_answered_in_order_after_their_writes():
    rng = random.Random(6)
    bursts = _bursts(rng, 50)
    dut = AXIWriteBridge(CONFIG, AXI)
    axi = dut.axi
    beats = []                     # (burst number, expected request or None when refused)
    for number, burst in enumerate(bursts):
        refused = is_refused(burst["addr"], burst["len"], burst["size"], burst["burst"], SB)
        for address in beat_addresses(burst["addr"], burst["len"], burst["size"], burst["burst"]):
            data, strobe = rng.getrandbits(8 * SB), rng.getrandbits(SB)
            request = None if refused else (address - address % SB,
                                            lanes(address, burst["size"], SB) & strobe, data)
            beats.append((number, data, strobe, request))
    requests, statuses, answers = [], [], []
    answered_writes = []           # writes answered so far, when each B arrived
    done = []

    async def address_source(ctx):
        pause = random.Random(7)
        for burst in bursts:
            while pause.random() < 0.3:
                await ctx.tick()
            for name, value in burst.items():
                ctx.set(getattr(axi, f"aw{name}"), value)
            ctx.set(axi.awvalid, 1)
            await ctx.tick().until(axi.awready)
            ctx.set(axi.awvalid, 0)

    async def data_source(ctx):
        pause = random.Random(8)
        for index, (number, data, strobe, _) in enumerate(beats):
            while pause.random() < 0.3:
                await ctx.tick()
            last = index + 1 == len(beats) or beats[index + 1][0] != number
            ctx.set(axi.wdata, data)
            ctx.set(axi.wstrb, strobe)
            ctx.set(axi.wlast, last)
            ctx.set(axi.wvalid, 1)
            await ctx.tick().until(axi.wready)
            ctx.set(axi.wvalid, 0)

    async def memory(ctx):
        pause = random.Random(9)
        waiting = []
        while not done:
            ctx.set(dut.requests.ready, pause.random() >= 0.3)
            answer = waiting[0] if waiting and pause.random() < 0.5 else None
            ctx.set(dut.completions.valid, answer is not None)
            if answer is not None:
                ctx.set(dut.completions.payload.status, answer)
            _, _, valid, ready, payload, taken = await ctx.tick().sample(
                dut.requests.valid, dut.requests.ready, dut.requests.payload, dut.completions.ready)
            if answer is not None and taken:
                waiting.pop(0)
                answered_writes.append(len(requests) - len(waiting))
            if valid and ready:
                assert payload.write and payload.id == 0
                enabled = sum(0xFF << 8 * byte for byte in range(SB) if payload.mask >> byte & 1)
                requests.append((payload.addr, payload.mask, payload.data & enabled))
                status = pause.choice(list(ResponseStatus))
                statuses.append(status)
                waiting.append(status)

    async def response_sink(ctx):
        pause = random.Random(10)
        while len(answers) < len(bursts):
            ready = pause.random() >= 0.3
            ctx.set(axi.bready, ready)
            _, _, valid, bid, bresp = await ctx.tick().sample(axi.bvalid, axi.bid, axi.bresp)
            if valid and ready:
                answers.append((bid, bresp, len(answered_writes) and answered_writes[-1]))
        done.append(True)

    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    for bench in (address_source, data_source, response_sink):
        simulator.add_testbench(bench)
    simulator.add_testbench(memory, background=True)

    async def time_limit(ctx):
        for _ in range(40 * len(beats) + 1000):
            if done:
                return
            await ctx.tick()
        raise AssertionError(f"{len(answers)} of {len(bursts)} bursts answered in time")
    simulator.add_testbench(time_limit)
    simulator.run()

    expected_requests = []
    for _, _, _, request in beats:
        if request is not None:
            sector, mask, data = request
            enabled = sum(0xFF << 8 * byte for byte in range(SB) if mask >> byte & 1)
            expected_requests.append((sector, mask, data & enabled))
    assert requests == expected_requests
    status = iter(statuses)
    writes_before = 0
    for number, burst in enumerate(bursts):
        writes = [request for n, _, _, request in beats if n == number and request is not None]
        refused = not writes
        met = [next(status) for _ in writes]
        writes_before += len(writes)
        bid, bresp, answered = answers[number]
        errors = [code for code in met if code.value & 2]
        expected = ResponseStatus.SLAVE_ERROR if refused else (errors[0] if errors else ResponseStatus.OKAY)
        assert (bid, bresp) == (burst["id"], expected), f"burst {number} {burst}"
        assert answered >= writes_before, f"burst {number} answered before its writes"


def test_refuses_more_slots_than_read_tags():
    with pytest.raises(ValueError, match=r"read_slots \(32\) exceeds the 16 read tags"):
        AXIWriteBridge(NDPConfig(id_width=4, engine=None), AXIConfig(read_slots=32))
