# amaranth: UnusedElaboratable=no
"""The write answer buffer: one port's requests pass unchanged and in order, its writes
only while it has a credit; memory's answers to them are never refused and reach the
write bridge in order, under random pauses on every stream; a bridge that takes no
answer holds the port's writes after ``depth`` of them, and nothing else; every
constructor error."""

import random

import pytest

from matndp.hw.config import NDPConfig
from matndp.hw.fpga.write_answers import MAX_WRITE_ANSWERS, WriteAnswerBuffer
from matndp.hw.layouts import ResponseStatus

from ..streams import simulate


CONFIG = NDPConfig(id_width=4, engine=None)
FIELDS = ("addr", "write", "data", "mask", "id")


def _requests(rng, count):
    requests = []
    for number in range(count):
        write = rng.random() < 0.6
        requests.append({"addr": rng.getrandbits(20) << 5, "write": int(write),
                         "data": rng.getrandbits(256) if write else 0,
                         "mask": rng.getrandbits(32) if write else 0, "id": number % 16})
    return requests


def run(requests, *, seed, cycles, depth, idle=0.3, memory_stall=0.3, answer=0.4,
        completion_stall=0.3, response_stall=0.3, completions_from=0):
    """Drive ``requests`` through a buffer of ``depth``; memory answers every write it
    took (in order, after a random wait) and every read (any order). The bridge takes
    completions from cycle ``completions_from`` on, pausing with ``completion_stall``."""
    dut = WriteAnswerBuffer(CONFIG, depth)
    rng = random.Random(seed)
    pending = list(requests)
    log = {"taken": [], "taken_at": [], "answers": [], "completions": [], "refused": 0, "responses": [],
           "returned": [], "withdrawn": 0, "most_unanswered": 0}
    owed_writes, owed_reads = [], []

    async def bench(ctx):
        offered = read_now = None
        waiting = None
        for cycle in range(cycles):
            if offered is None and pending and rng.random() >= idle:
                offered = pending.pop(0)
            if offered is not None:
                ctx.set(dut.gpu.req.payload, offered)
            ctx.set(dut.gpu.req.valid, offered is not None)
            ctx.set(dut.mem.req.ready, rng.random() >= memory_stall)
            answer_now = owed_writes[0] if owed_writes and rng.random() < answer else None
            if answer_now is not None:
                ctx.set(dut.answers.payload, {"status": answer_now})
            ctx.set(dut.answers.valid, answer_now is not None)
            if read_now is None and owed_reads and rng.random() < 0.5:
                read_now = owed_reads.pop(rng.randrange(len(owed_reads)))
            if read_now is not None:
                ctx.set(dut.mem.resp.payload, read_now)
            ctx.set(dut.mem.resp.valid, read_now is not None)
            ctx.set(dut.gpu.resp.ready, rng.random() >= response_stall)
            ctx.set(dut.completions.ready,
                    cycle >= completions_from and rng.random() >= completion_stall)
            (_, _, req_valid, req_ready, mem_valid, mem_ready, mem_payload, answers_ready,
             done_valid, done_ready, done_payload, resp_valid, resp_ready, resp_payload,
             back_ready) = await ctx.tick().sample(
                dut.gpu.req.valid, dut.gpu.req.ready, dut.mem.req.valid, dut.mem.req.ready,
                dut.mem.req.payload, dut.answers.ready, dut.completions.valid,
                dut.completions.ready, dut.completions.payload, dut.gpu.resp.valid,
                dut.gpu.resp.ready, dut.gpu.resp.payload, dut.mem.resp.ready)
            request = {key: int(getattr(mem_payload, key)) for key in FIELDS}
            if waiting is not None and (not mem_valid or request != waiting):
                log["withdrawn"] += 1
            waiting = request if mem_valid and not mem_ready else None
            if mem_valid and mem_ready:
                log["taken"].append(request)
                log["taken_at"].append(cycle)
                if request["write"]:
                    owed_writes.append(rng.choice(list(ResponseStatus)).value)
                else:
                    owed_reads.append({"id": request["id"], "data": rng.getrandbits(256),
                                       "status": rng.choice(list(ResponseStatus)).value})
            if req_valid and req_ready:
                offered = None
            if answer_now is not None:
                if answers_ready:
                    log["answers"].append(owed_writes.pop(0))
                else:
                    log["refused"] += 1
            if done_valid and done_ready:
                log["completions"].append(done_payload.status.value)
            if resp_valid and resp_ready:
                log["responses"].append({"id": int(resp_payload.id), "data": int(resp_payload.data),
                                         "status": resp_payload.status.value})
            if read_now is not None and back_ready:
                log["returned"].append(read_now)
                read_now = None
            unanswered = sum(r["write"] for r in log["taken"]) - len(log["completions"])
            log["most_unanswered"] = max(log["most_unanswered"], unanswered)
            if not pending and offered is None and not owed_writes and not owed_reads and \
                    read_now is None and \
                    len(log["completions"]) == len(log["answers"]) and \
                    len(log["responses"]) == len(log["returned"]):
                return

    simulate(dut, bench, cycles=cycles + 10)
    return log


@pytest.mark.parametrize("depth, seed", [(1, 1), (2, 2), (4, 3), (32, 4)])
def test_requests_pass_in_order_and_answers_reach_the_bridge_in_order(depth, seed):
    requests = _requests(random.Random(seed), 600)
    log = run(requests, seed=seed, cycles=20_000, depth=depth)
    assert log["taken"] == requests
    assert log["withdrawn"] == 0
    assert log["refused"] == 0, "memory's answer was refused"
    assert log["completions"] == log["answers"]
    assert len(log["answers"]) == sum(r["write"] for r in requests)
    assert log["most_unanswered"] <= depth
    # Read responses pass unchanged, with their handshake (the buffer does not touch them).
    assert log["responses"] == log["returned"]


def test_without_pauses_a_deep_buffer_lets_writes_flow_every_cycle():
    requests = [dict(r, write=1) for r in _requests(random.Random(5), 200)]
    log = run(requests, seed=5, cycles=2000, depth=64, idle=0, memory_stall=0, answer=1.0,
              completion_stall=0, response_stall=0)
    assert log["taken"] == requests and log["refused"] == 0
    assert log["completions"] == log["answers"]


def test_a_bridge_that_takes_no_answer_holds_the_port_after_depth_writes():
    depth, start = 4, 1500
    requests = _requests(random.Random(6), 40)
    held_write = [n for n, r in enumerate(requests) if r["write"]][depth]
    log = run(requests, seed=6, cycles=4000, depth=depth, completions_from=start)
    # Until the bridge took answers, the requests before the fifth write reached memory
    # (reads among them) and nothing after; then the rest flowed, in order.
    before = [n for n, at in enumerate(log["taken_at"]) if at < start]
    assert before == list(range(held_write))
    assert log["taken"] == requests
    assert log["refused"] == 0
    assert log["completions"] == log["answers"]
    assert log["most_unanswered"] == depth


def test_a_held_write_stops_at_depth_until_an_answer_leaves():
    depth = 3
    requests = [{"addr": n << 5, "write": 1, "data": n, "mask": 1, "id": 0} for n in range(6)]
    log = run(requests, seed=7, cycles=600, depth=depth, idle=0, memory_stall=0,
              completion_stall=0, completions_from=10 ** 9)
    assert log["taken"] == requests[:depth]
    assert log["refused"] == 0 and len(log["answers"]) == depth
    assert log["completions"] == []


@pytest.mark.parametrize("depth, error, message", [
    ("4", TypeError, "write_answers must be an int, not '4'"),
    (True, TypeError, "write_answers must be an int"),
    (0, ValueError, rf"write_answers must be in 1\.\.{MAX_WRITE_ANSWERS}, not 0"),
    (MAX_WRITE_ANSWERS + 1, ValueError, "write_answers must be in"),
])
def test_constructor_errors(depth, error, message):
    with pytest.raises(error, match=message):
        WriteAnswerBuffer(CONFIG, depth)
