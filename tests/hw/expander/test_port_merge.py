# amaranth: UnusedElaboratable=no
"""The port merge: K ports' requests into one, in order per port and tagged with the port;
read responses back to their port with its own id, under random back-pressure on every
stream and a memory that answers out of order; a port that refuses its responses holds
no one else; every constructor error."""

import random

import pytest

from matndp.hw.config import NDPConfig
from matndp.hw.expander import PortMerge, merged_config, port_index_bits
from matndp.hw.layouts import ResponseStatus

from ..streams import simulate


CONFIG = NDPConfig(id_width=4)
FIELDS = ("addr", "write", "data", "mask", "id")


def _requests(rng, port, count, id_bits):
    requests = []
    for number in range(count):
        write = rng.random() < 0.4
        requests.append({"addr": rng.getrandbits(20) << 5, "write": int(write),
                         "data": rng.getrandbits(256) if write else 0,
                         "mask": rng.getrandbits(32) if write else 0,
                         "id": (number * 7 + port) % (1 << id_bits)})
    return requests


def run(ports, requests, *, seed, cycles, idle=0.3, response_stall=None, memory_stall=0.3,
        answer=0.5, depth=4, stop_after=None):
    """Drive ``requests`` (one list per port) through a PortMerge for at most ``cycles``
    cycles. ``response_stall[p]``: the probability port p refuses a response each cycle;
    ``stop_after``: (port, cycle) from which that port refuses every response.

    Returns what memory took (in order), what memory answered and what each port
    received, and the cycles memory's responses were refused."""
    dut = PortMerge(CONFIG, ports, response_depth=depth)
    response_stall = response_stall or [0.3] * ports
    rng = random.Random(seed)
    pending = [list(port_requests) for port_requests in requests]
    offered = [None] * ports
    taken, answered = [], []
    received = [[] for _ in range(ports)]
    refused, withdrawn = [], []
    reads = []                          # (merged id, data, status) memory owes
    state = {"cycle": 0}

    async def bench(ctx):
        waiting = None
        for cycle in range(cycles):
            state["cycle"] = cycle
            for port in range(ports):
                if offered[port] is None and pending[port] and rng.random() >= idle:
                    offered[port] = pending[port].pop(0)
                request = dut.gpu[port].req
                if offered[port] is not None:
                    ctx.set(request.payload, offered[port])
                ctx.set(request.valid, offered[port] is not None)
                stopped = stop_after is not None and stop_after[0] == port and cycle >= stop_after[1]
                ctx.set(dut.gpu[port].resp.ready,
                        not stopped and rng.random() >= response_stall[port])
            ctx.set(dut.mem.req.ready, rng.random() >= memory_stall)
            answer_now = None
            if reads and rng.random() < answer:
                answer_now = reads.pop(rng.randrange(len(reads)))
                ctx.set(dut.mem.resp.payload, {"id": answer_now[0], "data": answer_now[1],
                                               "status": answer_now[2]})
            ctx.set(dut.mem.resp.valid, answer_now is not None)
            sampled = await ctx.tick().sample(
                dut.mem.req.valid, dut.mem.req.ready, dut.mem.req.payload, dut.mem.resp.ready,
                *(value for port in range(ports) for value in (
                    dut.gpu[port].req.valid, dut.gpu[port].req.ready,
                    dut.gpu[port].resp.valid, dut.gpu[port].resp.ready,
                    dut.gpu[port].resp.payload)))
            valid, ready, payload, resp_ready = sampled[2:6]
            request = {key: int(getattr(payload, key)) for key in FIELDS}
            if waiting is not None and (not valid or request != waiting):
                withdrawn.append(cycle)
            waiting = request if valid and not ready else None
            if valid and ready:
                taken.append(request)
                if not request["write"]:
                    reads.append((request["id"], rng.getrandbits(256),
                                  rng.choice(list(ResponseStatus)).value))
            if answer_now is not None:
                if resp_ready:
                    answered.append(answer_now)
                else:
                    refused.append(cycle)
                    reads.append(answer_now)
            for port in range(ports):
                req_valid, req_ready, resp_valid, resp_ready_p, resp_payload = \
                    sampled[6 + 5 * port:11 + 5 * port]
                if req_valid and req_ready:
                    offered[port] = None
                if resp_valid and resp_ready_p:
                    received[port].append((int(resp_payload.id), int(resp_payload.data),
                                           resp_payload.status.value))
            if not any(pending) and not any(o is not None for o in offered) and not reads and \
                    sum(map(len, received)) == len(answered) and stop_after is None:
                return

    simulate(dut, bench, cycles=cycles + 10)
    return {"taken": taken, "answered": answered, "received": received, "refused": refused,
            "withdrawn": withdrawn, "left": [len(p) + (o is not None) for p, o in zip(pending, offered)],
            "owed": reads, "cycles": state["cycle"] + 1}


def _check_delivery(ports, requests, result):
    bits = port_index_bits(ports)
    width = CONFIG.id_width
    # Memory took each port's requests once each, unchanged and in order, the port above
    # the id.
    for port in range(ports):
        mine = [r for r in result["taken"] if r["id"] >> width == port]
        assert [dict(r, id=r["id"] & ((1 << width) - 1)) for r in mine] == requests[port]
    assert all(r["id"] >> width < ports for r in result["taken"])
    assert bits == (ports - 1).bit_length()
    # Every response went to the port that asked, with its own id, data and status.
    for port in range(ports):
        wanted = sorted((i & ((1 << width) - 1), d, s) for i, d, s in result["answered"]
                        if i >> width == port)
        assert sorted(result["received"][port]) == wanted
    assert result["refused"] == [] and result["withdrawn"] == []


# Each run takes half a minute in Amaranth's simulator: four ports (the expander's) in the
# default suite, two and three in the slow one.
@pytest.mark.parametrize("ports, seed", [(4, 1), pytest.param(2, 2, marks=pytest.mark.slow),
                                         pytest.param(3, 3, marks=pytest.mark.slow)])
def test_random_traffic_under_random_back_pressure(ports, seed):
    rng = random.Random(seed)
    count = {2: 5000, 3: 3500, 4: 2500}[ports]
    requests = [_requests(rng, port, count, CONFIG.id_width) for port in range(ports)]
    stalls = [rng.choice([0.1, 0.5, 0.8]) for _ in range(ports)]
    result = run(ports, requests, seed=seed, cycles=40_000, response_stall=stalls)
    assert result["left"] == [0] * ports and result["owed"] == []
    assert result["cycles"] >= 10_000          # the run is long enough to mean something
    _check_delivery(ports, requests, result)


def test_a_port_refusing_its_responses_holds_no_one_else():
    ports, depth = 4, 4
    rng = random.Random(7)
    requests = [_requests(rng, port, 300, CONFIG.id_width) for port in range(ports)]
    result = run(ports, requests, seed=8, cycles=12_000, depth=depth, stop_after=(0, 200))
    # The other ports finished everything; memory never saw a response refused.
    assert result["left"][1:] == [0] * (ports - 1)
    assert result["refused"] == [] and result["withdrawn"] == []
    # Port 0 stands at a read for which it has no credit: exactly `depth` of its reads are
    # answered and buffered, none of them passed on after it stopped.
    assert result["left"][0] > 0
    width = CONFIG.id_width
    port0_answered = [a for a in result["answered"] if a[0] >> width == 0]
    port0_reads = [r for r in result["taken"] if r["id"] >> width == 0 and not r["write"]]
    assert len(port0_reads) - len(result["received"][0]) == depth
    assert len(port0_answered) + len([o for o in result["owed"] if o[0] >> width == 0]) == len(port0_reads)
    for port in range(1, ports):
        wanted = sorted((i & ((1 << width) - 1), d, s) for i, d, s in result["answered"]
                        if i >> width == port)
        assert sorted(result["received"][port]) == wanted


def test_round_robin_among_ports_that_offer():
    ports = 4
    requests = [[{"addr": (port * 64 + n) << 5, "write": 1, "data": n, "mask": 1, "id": n % 16}
                 for n in range(20)] for port in range(ports)]
    result = run(ports, requests, seed=1, cycles=400, idle=0.0, memory_stall=0.0,
                 response_stall=[0.0] * ports)
    order = [r["id"] >> CONFIG.id_width for r in result["taken"]]
    assert order[:40] == [0, 1, 2, 3] * 10


def test_merged_id_width():
    for ports, bits in ((2, 1), (3, 2), (4, 2), (5, 3), (16, 4)):
        assert port_index_bits(ports) == bits
        assert merged_config(CONFIG, ports).id_width == CONFIG.id_width + bits
        assert PortMerge(CONFIG, ports).merged.id_width == CONFIG.id_width + bits


def test_constructor_errors():
    with pytest.raises(TypeError, match="ports must be an int"):
        PortMerge(CONFIG, 2.0)
    with pytest.raises(TypeError, match="ports must be an int"):
        PortMerge(CONFIG, True)
    with pytest.raises(ValueError, match="ports must be at least 2"):
        PortMerge(CONFIG, 1)
    with pytest.raises(ValueError, match=r"ports must be in 1\.\.16, not 0"):
        PortMerge(CONFIG, 0)
    with pytest.raises(ValueError, match=r"ports must be in 1\.\.16, not 17"):
        PortMerge(CONFIG, 17)
    with pytest.raises(ValueError, match="response_depth must be in"):
        PortMerge(CONFIG, 2, response_depth=0)
    with pytest.raises(ValueError, match="4 ports need 2 id bits above the ports' 12"):
        PortMerge(NDPConfig(id_width=12), 4)
