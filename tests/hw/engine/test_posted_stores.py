"""The per-entry count of posted stores on their way to memory, in Amaranth's simulator:
random stores sent and taken by the port (never more on their way than the load/store
unit can hold, and never taken before they were sent), ``pending`` checked every cycle
against the stores the testbench knows are on their way."""

import random

import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.engine.posted_stores import PostedStores, stores_on_the_way

from .harness import simulate
from ..streams import shared


CONFIG = NDPConfig(trigger=TriggerConfig(filter_entries=4),
                   engine=EngineConfig(slots=4, instruction_words=64, argument_blocks=4,
                                       memory_queue=2))


@pytest.mark.parametrize("seed", [1, 2])
def test_pending_follows_the_stores_on_their_way(seed):
    dut = shared(PostedStores, CONFIG)
    rng = random.Random(seed)
    entries = CONFIG.trigger.filter_entries
    capacity = stores_on_the_way(CONFIG)
    on_the_way = []                 # entries of the stores sent, oldest first
    seen = {"full": 0, "both": 0, "pending_only_by_sending": 0}

    async def bench(ctx):
        for cycle in range(3000):
            # The port takes the oldest store (they leave in order); one may be sent in
            # the same cycle, to any entry, while there is room for it.
            stored = bool(on_the_way) and rng.random() < 0.45
            sent = len(on_the_way) - stored < capacity and rng.random() < 0.5
            sent_entry = rng.randrange(entries)
            ctx.set(dut.stored_valid, stored)
            ctx.set(dut.stored_entry, on_the_way[0] if stored else rng.randrange(entries))
            ctx.set(dut.sent_valid, sent)
            ctx.set(dut.sent_entry, sent_entry)
            pending = ctx.get(dut.pending)
            for entry in range(entries):
                expected = entry in on_the_way or (sent and sent_entry == entry)
                assert pending >> entry & 1 == expected, f"cycle {cycle} entry {entry}"
                seen["pending_only_by_sending"] += (sent and sent_entry == entry and
                                                    entry not in on_the_way)
            seen["full"] += len(on_the_way) == capacity
            seen["both"] += stored and sent
            await ctx.tick()
            if stored:
                on_the_way.pop(0)
            if sent:
                on_the_way.append(sent_entry)

    simulate(dut, bench)
    assert all(seen.values()), seen


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None)])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        PostedStores(config)
