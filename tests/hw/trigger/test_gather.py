# amaranth: UnusedElaboratable=no
"""The arrival-gathering table: for K = 2, 3, 4, K GPUs' writes of each sector in random
order under random back-pressure on both streams, only each sector's K-th passes, in
order, and the others of other entries pass untouched; arming clears an entry's slots;
writes outside an entry's layout are dropped with an error pulse and never hold the
stream; every constructor and configuration error."""

from dataclasses import replace
import random

import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.csr_map import entry_register_name, register_map
from matndp.hw.trigger.gather import CLEAR_SLOTS, MAX_GATHER_PORTS, ArrivalGather

from ..streams import receive, simulate


SLOTS = 64
CONFIG = NDPConfig(addr_width=20, trigger=TriggerConfig(filter_entries=4, gather_sectors=SLOTS))
SECTOR = CONFIG.sector_bytes


def reference(events, layouts, counts=None, slots=SLOTS):
    """The events that pass and the number dropped, from a count per slot (``counts``,
    updated)."""
    counts = {} if counts is None else counts
    passed, dropped = [], 0
    for event in events:
        layout = layouts.get(event["entry"])
        if layout is None or layout["ports"] < 2:
            passed.append(event)
            continue
        copy_bytes = 1 << layout["copy_log2"]
        copy, within = divmod(event["offset"], copy_bytes)
        slot = layout["slot"] + within // SECTOR
        if copy >= layout["ports"] or slot >= slots or copy_bytes < SECTOR or \
                layout["ports"] > MAX_GATHER_PORTS:
            dropped += 1
            continue
        counts[slot] = counts.get(slot, 0) + 1
        if counts[slot] == layout["ports"]:
            counts[slot] = 0
            passed.append(event)
    return passed, dropped


def _event(rng, entry, offset):
    return {"entry": entry, "addr": 0x4000 + offset, "offset": offset,
            "data": rng.getrandbits(256), "mask": rng.getrandbits(32), "write": 1}


def _arrivals(rng, entry, layout, steps):
    """Every copy's write of every sector of ``layout``, ``steps`` times, each step's in a
    random order (a step's writes all before the next step's)."""
    events = []
    copy_bytes = 1 << layout["copy_log2"]
    for _ in range(steps):
        step = [_event(rng, entry, copy * copy_bytes + sector * SECTOR)
                for copy in range(layout["ports"]) for sector in range(copy_bytes // SECTOR)]
        rng.shuffle(step)
        events += step
    return events


def _interleave(rng, streams):
    """The lists of ``streams`` merged at random, each keeping its order."""
    streams = [list(stream) for stream in streams if stream]
    merged = []
    while streams:
        stream = rng.choice(streams)
        merged.append(stream.pop(0))
        if not stream:
            streams.remove(stream)
    return merged


def _check(layouts, events, *, seed, arm=(), before=(), idle=0.3, stall=0.3, slots=SLOTS):
    dut = ArrivalGather(replace(CONFIG, trigger=replace(CONFIG.trigger, gather_sectors=slots)))
    counts = {}
    expected, dropped = reference(list(before), layouts, counts, slots)
    for entry in arm:
        layout = layouts[entry]
        for slot in range(layout["slot"], layout["slot"] + max(1, (1 << layout["copy_log2"]) // SECTOR)):
            counts.pop(slot, None)
    passed, dropped_after = reference(list(events), layouts, counts, slots)
    expected, dropped = expected + passed, dropped + dropped_after
    received, errors = [], []

    async def offer(ctx, events, rng):
        for event in events:
            while idle and rng.random() < idle:
                await ctx.tick()
            ctx.set(dut.i.payload, event)
            ctx.set(dut.i.valid, 1)
            while True:
                _, _, ready, error = await ctx.tick().sample(dut.i.ready, dut.error)
                if ready:
                    errors.append(int(error))
                    break
            ctx.set(dut.i.valid, 0)

    async def driver(ctx):
        rng = random.Random(seed)
        for entry in range(CONFIG.trigger.filter_entries):
            ctx.set(dut.gather[entry], layouts.get(entry, {"ports": 0, "copy_log2": 0, "slot": 0}))
        await offer(ctx, before, rng)
        for entry in arm:
            ctx.set(dut.arm, 1 << entry)
            await ctx.tick()
        ctx.set(dut.arm, 0)
        await offer(ctx, events, rng)

    async def sink(ctx):
        await receive(ctx, dut.o, len(expected), seed=seed + 2, stall=stall, into=received)
        ctx.set(dut.o.ready, 1)
        for _ in range(20):
            _, _, valid = await ctx.tick().sample(dut.o.valid)
            assert not valid, "an event passed that the reference consumes"

    simulate(dut, driver, sink, cycles=40 * (len(before) + len(events)) + 2000)
    got = [{key: int(getattr(event, key)) for key in ("entry", "addr", "offset", "data", "mask", "write")}
           for event in received]
    assert got == expected
    assert sum(errors) == dropped


@pytest.mark.parametrize("ports", [2, 3, 4])
def test_only_each_sectors_last_arrival_passes(ports):
    """Two gathering entries (one with copies of 8 sectors from slot 0, one of 4 from
    slot 40), two steps each, interleaved with an entry that does not gather."""
    rng = random.Random(ports)
    layouts = {0: {"ports": ports, "copy_log2": 8, "slot": 0},
               2: {"ports": ports, "copy_log2": 7, "slot": 40}}
    plain = [_event(rng, 1, rng.randrange(64) * SECTOR) for _ in range(30)]
    events = _interleave(rng, [_arrivals(rng, 0, layouts[0], 2), _arrivals(rng, 2, layouts[2], 2), plain])
    _check(layouts, events, seed=ports)


def test_full_rate_without_back_pressure():
    rng = random.Random(7)
    layouts = {3: {"ports": 4, "copy_log2": 9, "slot": SLOTS - 16}}
    _check(layouts, _arrivals(rng, 3, layouts[3], 3), seed=7, idle=0.0, stall=0.0)


def test_arming_clears_the_entrys_slots():
    """Arrivals left short of K before arming count for nothing after it; another
    entry's slots keep their counts."""
    rng = random.Random(3)
    layouts = {0: {"ports": 3, "copy_log2": 8, "slot": 8},
               1: {"ports": 2, "copy_log2": 6, "slot": 0}}
    short = [_event(rng, 0, copy * 256 + sector * SECTOR) for copy in (0, 2) for sector in range(8)]
    kept = [_event(rng, 1, 0)]
    after = _arrivals(rng, 0, layouts[0], 1) + [_event(rng, 1, 64)]
    _check(layouts, after, before=short + kept, arm=(0,), seed=3)


def test_arming_clears_a_range_across_the_tables_words_and_nothing_beside_it():
    """The table keeps its slots CLEAR_SLOTS to a word and clears a word at a time: a range
    that starts and ends inside words is cleared, its neighbours in those words keep their
    counts."""
    assert SLOTS >= 3 * CLEAR_SLOTS
    rng = random.Random(11)
    start = CLEAR_SLOTS - 3
    layouts = {0: {"ports": 2, "copy_log2": 5 + CLEAR_SLOTS.bit_length(), "slot": start},
               1: {"ports": 2, "copy_log2": 5, "slot": start - 1},
               2: {"ports": 3, "copy_log2": 5 + 3, "slot": start + 2 * CLEAR_SLOTS}}     # 8 sectors
    armed_copy = 1 << layouts[0]["copy_log2"]
    armed_end = start + armed_copy // SECTOR
    assert start % CLEAR_SLOTS and armed_end % CLEAR_SLOTS and layouts[2]["slot"] == armed_end
    # Short counts in the armed range's every word, and beside it on both sides.
    short = [_event(rng, 0, sector * SECTOR) for sector in range(armed_copy // SECTOR)]
    below = [_event(rng, 1, 0)]                                  # the slot before the range
    above = [_event(rng, 2, sector * SECTOR) for sector in range(8)]  # the slots after it
    after = (_arrivals(rng, 0, layouts[0], 1) + [_event(rng, 1, SECTOR)]
             + [_event(rng, 2, 256 + sector * SECTOR) for sector in range(8)]
             + [_event(rng, 2, 512 + sector * SECTOR) for sector in range(8)])
    _check(layouts, after, before=short + below + above, arm=(0,), seed=11)


@pytest.mark.parametrize("slots", [40, 12, 1])
def test_a_table_of_part_of_a_word_clears_to_its_end(slots):
    """A table whose slots end inside a word: an entry whose range runs past the table's
    end is cleared to that end, and the clearing ends (events flow again)."""
    rng = random.Random(slots)
    start = slots - 1 - (slots - 1) % 4
    layouts = {0: {"ports": 2, "copy_log2": 5 + 4, "slot": start}}           # 16 sectors
    inside = slots - start
    short = [_event(rng, 0, sector * SECTOR) for sector in range(inside)]
    after = [_event(rng, 0, copy * 512 + sector * SECTOR) for copy in (1, 0, 1)
             for sector in range(inside)]
    _check(layouts, after, before=short, arm=(0,), seed=slots, slots=slots)


def test_writes_outside_the_layout_are_dropped_with_an_error():
    rng = random.Random(5)
    layouts = {0: {"ports": 2, "copy_log2": 6, "slot": SLOTS - 1},     # sector 1 beyond the table
               1: {"ports": 3, "copy_log2": 4, "slot": 0},             # copies smaller than a sector
               2: {"ports": 2, "copy_log2": 5, "slot": 4},             # copy 2 of 2
               3: {"ports": MAX_GATHER_PORTS + 1, "copy_log2": 5, "slot": 8}}  # more than it counts
    events = [_event(rng, 0, 32), _event(rng, 0, 0), _event(rng, 0, 64), _event(rng, 1, 0),
              _event(rng, 2, 64), _event(rng, 2, 0), _event(rng, 3, 0), _event(rng, 2, 32)]
    passed, dropped = reference(events, layouts)
    assert dropped == 4 and len(passed) == 2
    _check(layouts, events, seed=5)


def test_constructor_and_configuration_errors():
    with pytest.raises(ValueError, match="gather_sectors > 0"):
        ArrivalGather(NDPConfig())
    with pytest.raises(ValueError, match="gather_sectors must be in 0..65536"):
        TriggerConfig(gather_sectors=-1)
    with pytest.raises(ValueError, match="gather_sectors must be in 0..65536"):
        TriggerConfig(gather_sectors=(1 << 16) + 1)
    with pytest.raises(TypeError, match="gather_sectors must be an int"):
        TriggerConfig(gather_sectors=2.0)
    with pytest.raises(ValueError, match="without an engine has no gathering table"):
        NDPConfig(engine=None, trigger=TriggerConfig(gather_sectors=8))


def test_registers_exist_only_with_a_table():
    fields = {field.name: field for field in
              register_map(CONFIG)[entry_register_name(0, "gather")].fields}
    assert fields["slot"].width == (SLOTS - 1).bit_length()
    assert (1 << fields["ports"].width) > MAX_GATHER_PORTS
    with pytest.raises(KeyError):
        register_map(NDPConfig(engine=EngineConfig()))[entry_register_name(0, "gather")]


def test_arming_an_entry_whose_copies_are_smaller_than_a_sector_clears_one_slot():
    """Its events are errors; its arming leaves the slots after its first alone."""
    rng = random.Random(9)
    layouts = {0: {"ports": 2, "copy_log2": 6, "slot": 0},
               1: {"ports": 2, "copy_log2": 4, "slot": 0}}
    _check(layouts, [_event(rng, 0, 64 + 32)], before=[_event(rng, 0, 32)], arm=(1,), seed=9)
