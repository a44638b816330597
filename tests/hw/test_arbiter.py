"""The memory-side arbiter: priorities, the engine's minimum share, id tagging and
response routing, against a memory model that answers reads out of order."""

import random

import pytest

from matndp.hw.arbiter import MemoryArbiter
from matndp.hw.config import ArbiterConfig, NDPConfig
from matndp.hw.layouts import ResponseStatus

from .streams import simulate


def _requests(rng, count, id_bits, *, source):
    requests = []
    for index in range(count):
        write = rng.random() < 0.4
        requests.append({"addr": rng.getrandbits(20) << 5, "write": int(write),
                         "data": rng.getrandbits(256), "mask": rng.getrandbits(32),
                         "id": index % (1 << id_bits), "source": source, "number": index})
    return requests


def run(config, gpu_requests, ndp_requests, *, seed, gpu_idle=0.0, ndp_idle=0.0,
        memory_stall=0.0, cycles=None, share_slots=None, answered=None):
    """Returns the requests memory took, with their cycles, and the responses each source
    received; appends to ``share_slots`` the cycles in which ``ndp_slot`` was high and to
    ``answered`` every read response memory gave."""
    dut = MemoryArbiter(config)
    seen = []                 # (cycle, mem request) in order of acceptance
    gpu_responses, ndp_responses = [], []
    trace = {"gpu_ready": [], "ndp_waiting_and_gpu": [], "answered": []}
    done = {"sources": 0}

    def offer(port, requests, idle, rng_seed):
        async def source(ctx):
            rng = random.Random(rng_seed)
            for request in requests:
                while idle and rng.random() < idle:
                    await ctx.tick()
                ctx.set(port.req.payload, {key: request[key] for key in ("addr", "write", "data", "mask", "id")})
                ctx.set(port.req.valid, 1)
                await ctx.tick().until(port.req.ready)
                ctx.set(port.req.valid, 0)
            done["sources"] += 1
        return source

    async def memory(ctx):
        rng = random.Random(seed)
        reads = []
        cycle = 0
        expected = sum(1 for r in gpu_requests + ndp_requests if not r["write"])
        answered = 0
        waiting = None            # a request offered and not taken: it must stay as it is
        ctx.set(dut.gpu.resp.ready, 1)
        while done["sources"] < 2 or reads or answered < expected:
            cycle += 1
            ready = not (memory_stall and rng.random() < memory_stall)
            ctx.set(dut.mem.req.ready, ready)
            offered = None
            if reads and rng.random() < 0.5:
                offered = reads[rng.randrange(len(reads))]
                ctx.set(dut.mem.resp.payload, {"data": offered[1], "id": offered[0],
                                               "status": offered[2]})
                ctx.set(dut.mem.resp.valid, 1)
            else:
                ctx.set(dut.mem.resp.valid, 0)
            gpu_ready = rng.random() < 0.7
            ctx.set(dut.gpu.resp.ready, gpu_ready)
            (_, _, valid, payload, resp_ready, gvalid, gpayload, nvalid, npayload,
             gpu_req_valid, ndp_req_valid, ndp_req_ready, ndp_slot) = await ctx.tick().sample(
                dut.mem.req.valid, dut.mem.req.payload, dut.mem.resp.ready,
                dut.gpu.resp.valid, dut.gpu.resp.payload, dut.ndp.resp.valid, dut.ndp.resp.payload,
                dut.gpu.req.valid, dut.ndp.req.valid, dut.ndp.req.ready, dut.ndp_slot)
            if ndp_slot and share_slots is not None:
                share_slots.append(cycle)
            request = {key: int(getattr(payload, key)) for key in ("addr", "write", "data", "mask", "id")}
            if waiting is not None:
                assert valid and request == waiting, \
                    f"cycle {cycle}: the request offered toward memory was withdrawn or changed"
            waiting = request if valid and not ready else None
            if valid and ready:
                seen.append((cycle, request))
                if not payload.write:
                    reads.append((int(payload.id), rng.getrandbits(256),
                                  rng.choice(list(ResponseStatus)).value))
            if offered is not None and resp_ready:
                reads.remove(offered)
                answered += 1
                trace["answered"].append(offered)
            if gvalid and gpu_ready:
                gpu_responses.append((int(gpayload.id), int(gpayload.data),
                                      gpayload.status.value))
            if nvalid:
                ndp_responses.append((int(npayload.id), int(npayload.data),
                                      npayload.status.value))
            if offered is not None:
                trace["ndp_waiting_and_gpu"].append(offered)
            if ndp_req_valid and gpu_req_valid:
                trace["gpu_ready"].append(int(ndp_req_ready))

    simulate(dut, offer(dut.gpu, gpu_requests, gpu_idle, seed + 1),
             offer(dut.ndp, ndp_requests, ndp_idle, seed + 2), memory,
             cycles=cycles or 20 * (len(gpu_requests) + len(ndp_requests)) + 500)
    if answered is not None:
        answered.extend(trace["answered"])
    return seen, gpu_responses, ndp_responses


CONFIG = NDPConfig()
SOURCE = 1 << (CONFIG.mem_id_width - 1)


def _check_delivery(gpu, ndp, seen, gpu_responses, ndp_responses, answered):
    fields = ("addr", "write", "data", "mask")
    gpu_seen = [r for _, r in seen if not r["id"] & SOURCE]
    ndp_seen = [r for _, r in seen if r["id"] & SOURCE]
    # Each source's requests arrive once each, unchanged and in order, with the source bit.
    assert [{k: r[k] for k in fields} | {"id": r["id"]} for r in gpu_seen] == \
        [{k: q[k] for k in fields} | {"id": q["id"]} for q in gpu]
    assert [{k: r[k] for k in fields} | {"id": r["id"] & ~SOURCE} for r in ndp_seen] == \
        [{k: q[k] for k in fields} | {"id": q["id"]} for q in ndp]
    # Every read answered to its own source, with its own id.
    assert sorted(i for i, *_ in gpu_responses) == sorted(q["id"] for q in gpu if not q["write"])
    assert sorted(i for i, *_ in ndp_responses) == sorted(q["id"] for q in ndp if not q["write"])
    # ... with the data and the status memory gave it.
    assert sorted(gpu_responses) == sorted(r for r in answered if not r[0] & SOURCE)
    assert sorted(ndp_responses) == sorted((r[0] & ~SOURCE, *r[1:]) for r in answered if r[0] & SOURCE)
    assert {r[2] for r in answered} == {status.value for status in ResponseStatus}


@pytest.mark.parametrize("pressure", [0.0, 0.4])
def test_nothing_lost_duplicated_or_misrouted(pressure):
    rng = random.Random(3)
    gpu = _requests(rng, 300, CONFIG.id_width, source="gpu")
    ndp = _requests(rng, 200, CONFIG.ndp_id_width, source="ndp")
    answered = []             # (id, data, status) of every read response memory gave
    seen, gpu_responses, ndp_responses = run(CONFIG, gpu, ndp, seed=5, gpu_idle=pressure,
                                             ndp_idle=pressure, memory_stall=pressure,
                                             answered=answered)
    _check_delivery(gpu, ndp, seen, gpu_responses, ndp_responses, answered)


@pytest.mark.slow
def test_nothing_lost_duplicated_or_misrouted_over_a_hundred_thousand_cycles():
    rng = random.Random(11)
    gpu = _requests(rng, 36_000, CONFIG.id_width, source="gpu")
    ndp = _requests(rng, 24_000, CONFIG.ndp_id_width, source="ndp")
    answered = []
    seen, gpu_responses, ndp_responses = run(CONFIG, gpu, ndp, seed=13, gpu_idle=0.4,
                                             ndp_idle=0.4, memory_stall=0.4,
                                             answered=answered)
    assert seen[-1][0] >= 100_000
    _check_delivery(gpu, ndp, seen, gpu_responses, ndp_responses, answered)


@pytest.mark.parametrize("period", [4, 16])
def test_engine_gets_exactly_its_share_under_a_saturating_gpu(period):
    config = NDPConfig(arbiter=ArbiterConfig(ndp_share_period=period))
    rng = random.Random(9)
    gpu = [dict(r, write=1) for r in _requests(rng, 40 * period, config.id_width, source="gpu")]
    ndp = [dict(r, write=1) for r in _requests(rng, 400, config.ndp_id_width, source="ndp")]
    share_slots = []
    seen, _, _ = run(config, gpu, ndp, seed=2, share_slots=share_slots)
    source_bit = 1 << (config.mem_id_width - 1)
    # While both sources offer (the GPU never idles here), every period-th slot is the
    # engine's and the others the GPU's: exactly the minimum share, no more.
    order = "".join("N" if r["id"] & source_bit else "g" for _, r in seen)
    slots = 30 * period
    assert order[:slots] == ("g" * (period - 1) + "N") * 30
    # ndp_slot marks exactly the engine's requests taken while the GPU still offered.
    last_gpu = max(cycle for cycle, r in seen if not r["id"] & source_bit)
    assert share_slots == [cycle for cycle, r in seen if r["id"] & source_bit and cycle < last_gpu]
    assert len(share_slots) >= 39


def test_engine_takes_every_idle_cycle():
    rng = random.Random(4)
    ndp = [dict(r, write=1) for r in _requests(rng, 100, CONFIG.ndp_id_width, source="ndp")]
    seen, _, _ = run(CONFIG, [], ndp, seed=3)
    cycles = [cycle for cycle, _ in seen]
    assert cycles == list(range(cycles[0], cycles[0] + len(ndp)))


def test_without_engine_traffic_the_gpu_path_adds_nothing():
    rng = random.Random(6)
    gpu = _requests(rng, 100, CONFIG.id_width, source="gpu")
    seen, _, _ = run(CONFIG, gpu, [], seed=1)
    cycles = [cycle for cycle, _ in seen]
    # One request per cycle, from the first cycle the source offers.
    assert cycles == list(range(1, 1 + len(gpu)))


def test_configuration_errors():
    with pytest.raises(ValueError, match="ndp_share_period"):
        ArbiterConfig(ndp_share_period=1)
    with pytest.raises(TypeError, match="ndp_share_period"):
        ArbiterConfig(ndp_share_period=2.0)
