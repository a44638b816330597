"""PICK alone: round robin among the eligible slots it prefers when there are any, else
among all eligible slots; none while held; the picked slot's pc to the instruction memory,
FETCH's record one cycle later."""

import random

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.pipeline.pick import Pick

from ..harness import simulate


CONFIG = NDPConfig(engine=EngineConfig(slots=8, instruction_words=64))


def test_every_eligible_slot_is_picked_in_turn_preferred_ones_first():
    dut = Pick(CONFIG)
    slots = CONFIG.engine.slots
    rng = random.Random(1)
    pcs = [rng.randrange(64) for _ in range(slots)]

    async def bench(ctx):
        ctx.set(dut.pc, pcs)
        last = 0                # after reset, as if slot 0 had been picked last
        previous = None
        waited = [0] * slots
        for cycle in range(600):
            eligible = rng.getrandbits(slots) if rng.random() < 0.8 else 0
            prefer = rng.getrandbits(slots) if rng.random() < 0.3 else 0
            hold = rng.random() < 0.2
            ctx.set(dut.eligible, eligible)
            ctx.set(dut.prefer, prefer)
            ctx.set(dut.hold, hold)
            picked = ctx.get(dut.picked)
            order = [(last + 1 + step) % slots for step in range(slots)]
            preferred = eligible & prefer
            candidates = preferred if preferred else eligible
            expected = None if hold else next((slot for slot in order if candidates >> slot & 1),
                                              None)
            if expected is None:
                assert picked == 0, f"cycle {cycle}"
            else:
                assert picked == 1 << expected, f"cycle {cycle}"
                assert ctx.get(dut.imem_addr) == pcs[expected]
            # FETCH's record is last cycle's pick.
            assert ctx.get(dut.o.valid) == (previous is not None)
            if previous is not None:
                assert (ctx.get(dut.o.payload.slot), ctx.get(dut.o.payload.pc)) == \
                    (previous, pcs[previous])
            # Round robin: no slot eligible all along waits more than `slots` cycles without
            # a hold or a preferred slot picked instead.
            for slot in range(slots):
                waiting = eligible >> slot & 1 and expected != slot
                counted = not hold and not (preferred and not preferred >> slot & 1)
                waited[slot] = waited[slot] + counted if waiting else 0
                assert waited[slot] < slots
            if expected is not None:
                last = expected
            previous = expected
            await ctx.tick()

    simulate(dut, bench)


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None)])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        Pick(config)
