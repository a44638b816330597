"""FETCH alone: the instruction word arrives and is registered with its slot and pc."""

import random

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.pipeline.fetch import Fetch

from ..harness import simulate


CONFIG = NDPConfig(engine=EngineConfig(slots=8, instruction_words=64))


def test_the_word_is_registered_with_its_slot_and_pc():
    dut = Fetch(CONFIG)
    rng = random.Random(2)

    async def bench(ctx):
        previous = None
        for _ in range(50):
            record = (rng.randrange(2), rng.randrange(8), rng.randrange(64), rng.getrandbits(64))
            ctx.set(dut.i.valid, record[0])
            ctx.set(dut.i.payload, {"slot": record[1], "pc": record[2]})
            ctx.set(dut.word.as_value(), record[3])
            if previous is not None:
                out = ctx.get(dut.o.payload)
                assert (ctx.get(dut.o.valid), out.slot, out.pc, out.word.as_value().value) == \
                    previous
            previous = record
            await ctx.tick()

    simulate(dut, bench)


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None)])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        Fetch(config)
