# amaranth: UnusedElaboratable=no
"""The GPU side's read path in Amaranth's simulator: random bursts (refused ones among them)
with random pauses on AR and R, a memory that answers sector reads out of order after
random waits with random statuses; R must carry, burst after burst in acceptance order,
each beat's sector as memory gave it with memory's status (SLVERR and zeros for refused
bursts), the burst's id and RLAST; requests must be the specification's sectors and lanes
with ids unique among outstanding reads."""

import random

import pytest
from amaranth.sim import Simulator

from matndp.hw.config import NDPConfig
from matndp.hw.fpga.config import AXIConfig
from matndp.hw.fpga.read_bridge import AXIReadBridge
from matndp.hw.layouts import ResponseStatus
from matndp.sim.golden.axi import INCR, WRAP, FIXED, beat_addresses, is_refused, lanes


CONFIG = NDPConfig(addr_width=32, engine=None)
AXI = AXIConfig(id_width=4, read_slots=8)
SB = CONFIG.sector_bytes


def _bursts(rng, count):
    bursts = []
    for number in range(count):
        burst = rng.choice([INCR, INCR, WRAP, FIXED, 3])
        size = rng.randint(0, 5)
        length = rng.choice([1, 3, 7]) if burst == WRAP else rng.randint(0, 9)
        addr = rng.randrange(0x1000, 0x8000)
        if burst == WRAP and rng.random() < 0.8:
            addr -= addr % (1 << size)
        bursts.append({"id": number % 16, "addr": addr, "len": length, "size": size, "burst": burst})
    return bursts


def _sector_data(sector):
    return int.from_bytes(bytes((sector * 7 + i) % 256 for i in range(SB)), "little")


def test_beats_leave_in_order_with_memory_statuses():
    rng = random.Random(2)
    bursts = _bursts(rng, 60)
    dut = AXIReadBridge(CONFIG, AXI)
    axi = dut.axi
    expected_beats = []
    for burst in bursts:
        refused = is_refused(burst["addr"], burst["len"], burst["size"], burst["burst"], SB)
        for index, address in enumerate(beat_addresses(burst["addr"], burst["len"], burst["size"],
                                                       burst["burst"])):
            expected_beats.append({"id": burst["id"], "last": index == burst["len"],
                                   "refused": refused, "sector": address - address % SB,
                                   "lanes": lanes(address, burst["size"], SB)})
    requests = []            # (id, addr, mask) in order of acceptance
    statuses = []            # the status memory gave each request
    beats = []
    outstanding = set()
    done = []

    async def address_source(ctx):
        pause = random.Random(3)
        for burst in bursts:
            while pause.random() < 0.3:
                await ctx.tick()
            for name, value in burst.items():
                ctx.set(getattr(axi, f"ar{name}"), value)
            ctx.set(axi.arvalid, 1)
            await ctx.tick().until(axi.arready)
            ctx.set(axi.arvalid, 0)

    async def memory(ctx):
        pause = random.Random(4)
        waiting = []
        while not done:
            ready = pause.random() >= 0.3
            ctx.set(dut.requests.ready, ready)
            answer = None
            if waiting and pause.random() < 0.5:
                answer = waiting.pop(pause.randrange(len(waiting)))
                ctx.set(dut.responses.payload, {"id": answer[0], "data": _sector_data(answer[1]),
                                                "status": answer[2]})
            ctx.set(dut.responses.valid, answer is not None)
            _, _, valid, payload = await ctx.tick().sample(dut.requests.valid, dut.requests.payload)
            if answer is not None:
                outstanding.discard(answer[0])
            if valid and ready:
                assert not payload.write and payload.id not in outstanding, "a read id reused"
                outstanding.add(payload.id)
                status = pause.choice(list(ResponseStatus))
                requests.append((payload.id, payload.addr, payload.mask))
                statuses.append(status)
                waiting.append((payload.id, payload.addr, status))

    async def response_sink(ctx):
        pause = random.Random(5)
        while len(beats) < len(expected_beats):
            ready = pause.random() >= 0.3
            ctx.set(axi.rready, ready)
            _, _, valid, rid, rdata, rresp, rlast = await ctx.tick().sample(
                axi.rvalid, axi.rid, axi.rdata, axi.rresp, axi.rlast)
            if valid and ready:
                beats.append((rid, rdata, rresp, rlast))
        done.append(True)

    async def time_limit(ctx):
        for _ in range(30 * len(expected_beats) + 1000):
            if done:
                return
            await ctx.tick()
        raise AssertionError(f"{len(beats)} of {len(expected_beats)} beats in time")

    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    simulator.add_testbench(address_source)
    simulator.add_testbench(memory, background=True)
    simulator.add_testbench(response_sink)
    simulator.add_testbench(time_limit)
    simulator.run()

    performed = [beat for beat in expected_beats if not beat["refused"]]
    assert [(addr, mask) for _, addr, mask in requests] == \
        [(beat["sector"], beat["lanes"]) for beat in performed]
    request_status = iter(statuses)
    request_sector = iter(addr for _, addr, _ in requests)
    for beat, (rid, rdata, rresp, rlast) in zip(expected_beats, beats, strict=True):
        assert (rid, rlast) == (beat["id"], beat["last"])
        if beat["refused"]:
            assert (rdata, rresp) == (0, ResponseStatus.SLAVE_ERROR)
        else:
            assert (rdata, rresp) == (_sector_data(next(request_sector)), next(request_status))
    assert any(beat["refused"] for beat in expected_beats)


def test_refuses_more_slots_than_read_tags():
    with pytest.raises(ValueError, match=r"read_slots \(32\) exceeds the 16 read tags"):
        AXIReadBridge(NDPConfig(id_width=4, engine=None), AXIConfig(read_slots=32))
