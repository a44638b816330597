"""WRITE-BACK alone: every unit's answers, offered with random pauses, are each taken
once, one a cycle, every unit in turn; an answer writes the register its slot's
instruction in flight names (scalar or vector, none on an error), and the slot is picked
again, or its µthread ends (``exit`` in flight, or a failed access)."""

import random

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.decoder import OperandClass
from matndp.hw.engine.layouts import ErrorCause, ThreadKind
from matndp.hw.engine.pipeline.layouts import RESULT_SOURCES, SHARED_UNITS
from matndp.hw.engine.pipeline.writeback import WriteBack

from ..harness import Source, simulate


CONFIG = NDPConfig(engine=EngineConfig(slots=8, instruction_words=64))
SLOTS = CONFIG.engine.slots
LANES = CONFIG.lanes


def test_every_answer_is_written_back_once():
    dut = WriteBack(CONFIG)
    rng = random.Random(4)
    per_source = 40
    answers = {}
    for name in RESULT_SOURCES:
        vector = name not in ("alu", "multiply")
        items = []
        for _ in range(per_source):
            value = rng.getrandbits(32 * LANES if vector else 64)
            payload = {"slot": rng.randrange(SLOTS),
                       "value": [value >> 32 * lane & 0xFFFF_FFFF for lane in range(LANES)]
                       if vector else value}
            error = 0
            if name in SHARED_UNITS.values():
                error = int(rng.random() < 0.1)
                payload["error"] = error
            items.append(((payload, (name, payload["slot"], value, error)), None))
        answers[name] = items
    sources = {name: Source(getattr(dut, name),
                            lambda name=name: answers[name].pop(0)[0] if answers[name] else None,
                            pause=0.4, seed=index)
               for index, name in enumerate(RESULT_SOURCES)}
    dest_type = [rng.choice([OperandClass.SCALAR, OperandClass.VECTOR, OperandClass.NONE])
                 for _ in range(SLOTS)]
    dest_index = [rng.randrange(16) for _ in range(SLOTS)]
    exit_pending = rng.getrandbits(SLOTS)
    entries = [rng.randrange(16) for _ in range(SLOTS)]
    pcs = [rng.randrange(64) for _ in range(SLOTS)]
    taken = []

    async def bench(ctx):
        ctx.set(dut.dest_type, dest_type)
        ctx.set(dut.dest_index, dest_index)
        ctx.set(dut.exit_pending, exit_pending)
        ctx.set(dut.entry, entries)
        ctx.set(dut.kind, [ThreadKind.MAIN] * SLOTS)
        ctx.set(dut.inflight_pc, pcs)
        for cycle in range(3000):
            for source in sources.values():
                source.drive(ctx)
            now = [record for record in (source.sample(ctx, cycle) for source in sources.values())
                   if record is not None]
            assert len(now) <= 1, f"cycle {cycle}: {len(now)} answers taken"
            scalar, vector = ctx.get(dut.scalar_write), ctx.get(dut.vector_write)
            if not now:
                assert not scalar.en and not vector.en and not ctx.get(dut.clear) and \
                    not ctx.get(dut.end)
            else:
                _, (name, slot, value, error) = now[0]
                taken.append(name)
                kind = dest_type[slot]
                writes = not error and kind is not OperandClass.NONE
                assert scalar.en == (writes and kind is OperandClass.SCALAR)
                assert vector.en == (writes and kind is OperandClass.VECTOR)
                register = dest_index[slot] + 16 * slot
                if scalar.en:
                    assert (scalar.addr, scalar.data) == (register, value & (1 << 64) - 1)
                if vector.en:
                    assert vector.addr == register
                    assert vector.data.as_value().value == value
                ends = bool(error or exit_pending >> slot & 1)
                assert ctx.get(dut.end) == (1 << slot if ends else 0)
                assert ctx.get(dut.clear) == (0 if ends else 1 << slot)
                assert ctx.get(dut.retire_valid) == ends
                assert ctx.get(dut.error_valid) == bool(error)
                if error:
                    record = ctx.get(dut.error)
                    assert (record.entry, record.pc, ErrorCause(record.cause)) == \
                        (entries[slot], pcs[slot], ErrorCause.MEMORY_ERROR)
                if ends:
                    assert (ctx.get(dut.retire.entry), ctx.get(dut.retire.error)) == \
                        (entries[slot], error)
            if len(taken) == per_source * len(RESULT_SOURCES):
                return
            await ctx.tick()
        raise AssertionError("answers were left untaken")

    simulate(dut, bench)
    assert sorted(set(taken)) == sorted(RESULT_SOURCES)


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None)])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        WriteBack(config)
