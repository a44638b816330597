"""The filter matcher in Amaranth's simulator, against a plain-Python reference, forming
the ends of the ranges itself and given them precomputed (as the slice does)."""

import random

import pytest
from amaranth.sim import Simulator

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.trigger.filter_match import FilterMatcher
from tests.hw.trigger.reference import entry, matching_entry


CONFIG = NDPConfig(trigger=TriggerConfig(filter_entries=4))
TOP = 1 << CONFIG.addr_width


def reference(table, addr, write):
    found = matching_entry(table, addr, write)
    return (True, *found) if found else (False, None, None)


def run_cases(table, cases, *, precomputed_ends=False, config=CONFIG):
    dut = FilterMatcher(config, precomputed_ends=precomputed_ends)
    top = 1 << config.addr_width
    mismatches = []

    async def bench(ctx):
        for index, fields in enumerate(table):
            for name, value in fields.items():
                ctx.set(getattr(dut.table[index], name), value)
            if precomputed_ends:
                ctx.set(dut.ends[index], fields["base"] + fields["size"])
        for addr, write in cases:
            ctx.set(dut.addr, addr)
            ctx.set(dut.write, write)
            hit, index, offset = reference(table, addr, write)
            got = (bool(ctx.get(dut.hit)), ctx.get(dut.entry), ctx.get(dut.offset))
            if got[0] != hit or (hit and got[1:] != (index, offset)):
                mismatches.append((hex(addr), write, got, (hit, index, offset)))
            # The registered form: the winner one-hot, and every entry's offset.
            winner = ctx.get(dut.winner)
            if winner != (1 << index if hit else 0):
                mismatches.append((hex(addr), write, f"winner {winner:#b}", index))
            for other, fields in enumerate(table):
                if ctx.get(dut.offsets[other]) != (addr - fields["base"]) % top:
                    mismatches.append((hex(addr), write, f"offset of entry {other}"))

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    return mismatches


def padded(table):
    return table + [entry(0, 0, enable=0)] * (CONFIG.trigger.filter_entries - len(table))


# Each row: the table, then (address, write) probes whose outcome the reference decides.
CASES = {
    "edges": ([entry(0x1000, 0x100)],
              [(0xFFF, 1), (0x1000, 1), (0x10FF, 1), (0x1100, 1), (0x1080, 0)]),
    "direction flags": ([entry(0x1000, 0x100, on_write=1, on_read=0), entry(0x2000, 0x100, on_write=0, on_read=1)],
                        [(0x1010, 1), (0x1010, 0), (0x2010, 1), (0x2010, 0)]),
    "disabled entry": ([entry(0x1000, 0x100, enable=0)], [(0x1000, 1), (0x1000, 0)]),
    "lowest index wins": ([entry(0x1000, 0x1000), entry(0x1800, 0x1000)],
                          [(0x17E0, 1), (0x1800, 1), (0x2000, 1), (0x2800, 1)]),
    "lower index with the other direction does not shadow": (
        [entry(0x1000, 0x1000, on_write=0), entry(0x1000, 0x1000, on_read=0)], [(0x1400, 1), (0x1400, 0)]),
    "zero size matches nothing": ([entry(0x1000, 0)], [(0x1000, 1), (0xFFF, 1)]),
    "top of the address space": ([entry(TOP - 0x40, 0x40)], [(TOP - 0x40, 1), (TOP - 1, 1), (0, 1)]),
    # base + size needs the end's spare bit; the range must not wrap round to address 0.
    "range reaching past the top": ([entry(TOP - 0x40, 0x80)],
                                    [(TOP - 0x41, 1), (TOP - 0x40, 1), (TOP - 1, 0), (0, 1), (0x3F, 0)]),
    "largest range": ([entry(TOP - 1, TOP - 1)], [(TOP - 2, 1), (TOP - 1, 1), (0, 0), (TOP - 3, 0)]),
    "largest range from zero": ([entry(0, TOP - 1)], [(0, 1), (TOP - 2, 0), (TOP - 1, 1)]),
    "range from zero": ([entry(0, 0x40)], [(0, 1), (0x3F, 1), (0x40, 1), (TOP - 1, 1)]),
    "one-byte range": ([entry(0x2000, 1)], [(0x1FFF, 1), (0x2000, 1), (0x2000, 0), (0x2001, 1)]),
    "no direction set": ([entry(0x1000, 0x100, on_write=0, on_read=0)], [(0x1000, 1), (0x1000, 0)]),
    "last entry alone": ([entry(0, 0, enable=0)] * 3 + [entry(0x1000, 0x10)],
                         [(0x1000, 1), (0x100F, 0), (0x1010, 1)]),
    "a disabled lower entry does not shadow": ([entry(0x1000, 0x100, enable=0), entry(0x1000, 0x100)],
                                               [(0x1000, 1), (0x10FF, 0)]),
    "every entry matches: the lowest wins": ([entry(0, TOP - 1)] * 4, [(0x1234, 1), (0, 0)]),
}


@pytest.mark.parametrize("precomputed_ends", [False, True], ids=["own ends", "precomputed ends"])
@pytest.mark.parametrize("name", CASES)
def test_directed(name, precomputed_ends):
    table, cases = CASES[name]
    assert run_cases(padded(table), cases, precomputed_ends=precomputed_ends) == []


def test_one_entry_table():
    config = NDPConfig(addr_width=16, trigger=TriggerConfig(filter_entries=1))
    table = [entry(0xFF00, 0x200)]
    assert run_cases(table, [(0xFEFF, 1), (0xFF00, 1), (0xFFFF, 0), (0, 1)], config=config) == []


@pytest.mark.parametrize("precomputed_ends", [False, True], ids=["own ends", "precomputed ends"])
def test_random_tables(precomputed_ends):
    rng = random.Random(5)
    for _ in range(20):
        table = []
        for _ in range(CONFIG.trigger.filter_entries):
            base = rng.randrange(0, 1 << 16) * 32
            table.append(entry(base, rng.randrange(0, 1 << 12) * 32, enable=rng.random() < 0.8,
                               on_write=rng.random() < 0.7, on_read=rng.random() < 0.7))
        cases = []
        for _ in range(50):
            chosen = rng.choice(table)
            addr = chosen["base"] + rng.randrange(-64, chosen["size"] + 64) if rng.random() < 0.8 \
                else rng.randrange(TOP)
            cases.append((addr % TOP, rng.random() < 0.5))
        assert run_cases(table, cases, precomputed_ends=precomputed_ends) == []
