"""WRITE-BACK alone: every unit's answers, offered with random pauses, are each taken once,
one a cycle; an in-order unit's answer writes the register DISPATCH named for that unit's
oldest instruction in flight, a shared unit's the one its slot noted (scalar or vector,
none on an error), and the scoreboard hears of it. The µthread ends with its last
instruction in flight when it carried ``exit``, failed or is dying, unless an instruction
of it is on its way to DISPATCH; a failure with more in flight leaves it dying."""

import collections
import dataclasses
import random

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.decoder import OperandClass
from matndp.hw.engine.layouts import ErrorCause, ThreadKind
from matndp.hw.engine.pipeline.layouts import IN_ORDER_UNITS, RESULT_SOURCES, SHARED_UNITS
from matndp.hw.engine.pipeline.writeback import WriteBack

from ..harness import Source, simulate


CONFIG = NDPConfig(engine=EngineConfig(slots=8, instruction_words=64))
# A pipelined engine's write-back chooses the answer to take a cycle ahead.
PIPELINED = dataclasses.replace(CONFIG, engine=dataclasses.replace(CONFIG.engine,
                                                                  pipelined=True))
UNSPILLED = dataclasses.replace(PIPELINED, engine=dataclasses.replace(PIPELINED.engine,
                                                                      writeback_spills=False))
SLOTS = CONFIG.engine.slots
LANES = CONFIG.lanes
KINDS = [OperandClass.SCALAR, OperandClass.VECTOR, OperandClass.NONE]


@pytest.mark.parametrize("config", [CONFIG, PIPELINED, UNSPILLED],
                         ids=["default", "pipelined", "pipelined-unspilled"])
def test_every_answer_is_written_where_its_instruction_said(config):
    dut = WriteBack(config)
    rng = random.Random(4)
    per_unit = 30
    in_order = list(IN_ORDER_UNITS.items())
    queued = {name: [] for name in RESULT_SOURCES}     # answers the units may give, in order
    to_dispatch = {name: per_unit for _, name in in_order}
    shared_left = {name: per_unit for name in SHARED_UNITS.values()}
    memory_dest = [{"rd_type": rng.choice(KINDS), "rd": rng.randrange(16),
                    "pc": rng.randrange(64)} for _ in range(SLOTS)]
    scratchpad_dest = [{"rd_type": rng.choice(KINDS), "rd": rng.randrange(16),
                        "pc": rng.randrange(64)} for _ in range(SLOTS)]
    shared_dest = {"memory": memory_dest, "scratchpad": scratchpad_dest}

    def next_answer(name):
        if name in SHARED_UNITS.values():
            if not shared_left[name]:
                return None
            shared_left[name] -= 1
            slot = rng.randrange(SLOTS)
            value = rng.getrandbits(32 * LANES)
            error = int(rng.random() < 0.15)
            dest = shared_dest[name][slot]
            payload = {"slot": slot, "error": error,
                       "value": [value >> 32 * lane & 0xFFFF_FFFF for lane in range(LANES)]}
            return payload, (name, slot, dest["rd_type"], dest["rd"], value, error, dest["pc"])
        if not queued[name]:
            return None
        slot, rd_type, rd = queued[name].pop(0)
        vector = name not in ("alu", "multiply")
        value = rng.getrandbits(32 * LANES if vector else 64)
        payload = {"slot": slot, "value": [value >> 32 * lane & 0xFFFF_FFFF
                                           for lane in range(LANES)] if vector else value}
        return payload, (name, slot, rd_type, rd, value, 0, None)

    sources = {name: Source(getattr(dut, name), lambda name=name: next_answer(name),
                            pause=0.4, seed=index)
               for index, name in enumerate(RESULT_SOURCES)}
    entries = [rng.randrange(16) for _ in range(SLOTS)]
    seen = {"ended": 0, "killed": 0, "held": 0}
    unwritten = {name: collections.deque() for name in RESULT_SOURCES}

    async def bench(ctx):
        ctx.set(dut.memory_dest, memory_dest)
        ctx.set(dut.scratchpad_dest, scratchpad_dest)
        ctx.set(dut.entry, entries)
        ctx.set(dut.kind, [ThreadKind.MAIN] * SLOTS)
        taken = 0
        for cycle in range(4000):
            # DISPATCH sends an instruction to an in-order unit now and then; it is queued
            # for its answer from the next cycle on.
            waiting = [(name, code) for position, (code, name) in enumerate(in_order)
                       if to_dispatch[name] and ctx.get(dut.room[position])]
            dispatched = None
            if waiting and rng.random() < 0.6:
                name, code = rng.choice(waiting)
                # Each unit's own registers, so that two units' answers for one slot that
                # write nothing (NONE) still tell which unit write-back took.
                rd = [unit for _, unit in in_order].index(name) + len(in_order) * rng.randrange(2)
                dispatched = (name, rng.randrange(SLOTS), rng.choice(KINDS), rd)
                ctx.set(dut.update_valid, 1)
                ctx.set(dut.update, {"slot": dispatched[1], "unit": code, "answered": 1,
                                     "rd_type": dispatched[2], "rd": dispatched[3]})
            else:
                ctx.set(dut.update_valid, 0)
            state = {name: rng.getrandbits(SLOTS) for name in
                     ("last", "exit_pending", "dying", "in_pipe", "killed", "decided")}
            for name, bits in state.items():
                ctx.set(getattr(dut, name), bits)
            for source in sources.values():
                source.drive(ctx)
            # A unit's answer taken may wait in its spill registers: what is written is the
            # oldest answer taken from one of the units and not yet written.
            for record in (source.sample(ctx, cycle) for source in sources.values()):
                if record is not None:
                    unwritten[record[1][0]].append(record)
            scalar, vector = ctx.get(dut.scalar_write), ctx.get(dut.vector_write)
            now = []
            if ctx.get(dut.answer_valid):
                answer = ctx.get(dut.answer)
                now = [queue[0] for name, queue in unwritten.items() if queue and
                       queue[0][1][1] == answer.slot and
                       (answer.memory, answer.scratchpad) == (name == "memory", name == "scratchpad")
                       and (OperandClass(queue[0][1][2]), queue[0][1][3]) ==
                       (OperandClass(answer.rd_type), answer.rd) and
                       (not scalar.en or scalar.data == queue[0][1][4] & (1 << 64) - 1) and
                       (not vector.en or vector.data.as_value().value == queue[0][1][4])]
                assert len(now) == 1, f"cycle {cycle}: the answer written is {len(now)} of those taken"
                unwritten[now[0][1][0]].popleft()
            if not now:
                assert not scalar.en and not vector.en and not ctx.get(dut.end) and \
                    not ctx.get(dut.kill)
            else:
                taken += 1
                name, slot, kind, rd, value, error, pc = now[0][1]
                kind = OperandClass(kind)
                writes = not error and kind is not OperandClass.NONE
                assert scalar.en == (writes and kind is OperandClass.SCALAR), cycle
                assert vector.en == (writes and kind is OperandClass.VECTOR), cycle
                if scalar.en:
                    assert (scalar.addr, scalar.data) == (rd + 16 * slot, value & (1 << 64) - 1)
                if vector.en:
                    assert vector.addr == rd + 16 * slot
                    assert vector.data.as_value().value == value
                answer = ctx.get(dut.answer)
                assert (answer.slot, answer.memory, answer.scratchpad) == \
                    (slot, name == "memory", name == "scratchpad")
                assert (OperandClass(answer.rd_type), answer.rd) == (kind, rd)
                bit = lambda name: state[name] >> slot & 1
                dying = bit("dying") or bit("killed")
                ahead = bit("in_pipe") and not bit("decided")
                ends = (error or bit("exit_pending") or dying) and bit("last") and not ahead
                kills = error and not ends
                assert ctx.get(dut.end) == (1 << slot if ends else 0), cycle
                assert ctx.get(dut.kill) == (1 << slot if kills else 0), cycle
                assert ctx.get(dut.retire_valid) == ends
                seen["ended"] += ends
                seen["killed"] += kills
                seen["held"] += bool(ahead and (error or dying) and bit("last"))
                if ends:
                    assert (ctx.get(dut.retire.entry), ctx.get(dut.retire.error)) == \
                        (entries[slot], int(bool(error or dying)))
                assert ctx.get(dut.error_valid) == bool(error)
                if error:
                    record = ctx.get(dut.error)
                    assert (record.entry, record.pc, ErrorCause(record.cause)) == \
                        (entries[slot], pc, ErrorCause.MEMORY_ERROR)
            await ctx.tick()
            if dispatched is not None:
                name = dispatched[0]
                queued[name].append(dispatched[1:])
                to_dispatch[name] -= 1
            if taken == per_unit * len(RESULT_SOURCES):
                return
        raise AssertionError("answers were left untaken")

    simulate(dut, bench)
    assert all(seen.values()), seen


@pytest.mark.parametrize("config", [CONFIG, PIPELINED], ids=["default", "pipelined"])
def test_a_shared_unit_s_completion_waits_while_the_units_answer(config):
    """The memory's completion, offered from the first cycle, is taken only after the ALU's
    and the multiplier's four answers each, offered back to back from the same cycle: a
    unit whose answer waits holds, a completion waits in its queue. (A registered choice
    counts an answer as waiting when it is not being taken, so one unit answering alone
    would let the completion in between its answers.)"""
    dut = WriteBack(config)
    codes = {name: code for code, name in IN_ORDER_UNITS.items() if name in ("alu", "multiply")}
    order = []

    async def bench(ctx):
        for slot in range(4):
            for name, code in codes.items():
                ctx.set(dut.update_valid, 1)
                ctx.set(dut.update, {"slot": slot, "unit": code, "answered": 1,
                                     "rd_type": OperandClass.SCALAR, "rd": 1})
                await ctx.tick()
        ctx.set(dut.update_valid, 0)
        ctx.set(dut.memory_dest, [{"rd_type": OperandClass.VECTOR, "rd": 2, "pc": 0}] * SLOTS)
        ctx.set(dut.memory.valid, 1)
        ctx.set(dut.memory.payload, {"slot": 7, "error": 0, "value": [0] * LANES})
        left = {name: 4 for name in codes}
        for cycle in range(30):
            for name in codes:
                port = getattr(dut, name)
                ctx.set(port.valid, left[name] > 0)
                ctx.set(port.payload, {"slot": 4 - left[name], "value": left[name]})
            taken = {name for name in codes if left[name] and ctx.get(getattr(dut, name).ready)}
            memory_taken = ctx.get(dut.memory.valid) and ctx.get(dut.memory.ready)
            if ctx.get(dut.answer_valid):
                order.append("memory" if ctx.get(dut.answer.memory) else "unit")
            await ctx.tick()
            for name in taken:
                left[name] -= 1
            if memory_taken:
                ctx.set(dut.memory.valid, 0)

    simulate(dut, bench)
    assert order == ["unit"] * 8 + ["memory"]


def test_a_unit_s_queue_of_destinations_fills():
    """With every answer held back, an in-order unit takes as many instructions as a
    sub-core has slots, then has no room."""
    dut = WriteBack(CONFIG)
    code, name = next(iter(IN_ORDER_UNITS.items()))

    async def bench(ctx):
        for count in range(SLOTS + 1):
            assert ctx.get(dut.room[0]) == (count < SLOTS), count
            ctx.set(dut.update_valid, 1)
            ctx.set(dut.update, {"slot": count % SLOTS, "unit": code, "answered": 1})
            await ctx.tick()

    simulate(dut, bench)


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None)])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        WriteBack(config)
