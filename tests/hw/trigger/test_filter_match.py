"""The filter matcher in Amaranth's simulator, against a plain-Python reference."""

import random

import pytest
from amaranth.sim import Simulator

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.trigger.filter_match import FilterMatcher


CONFIG = NDPConfig(trigger=TriggerConfig(filter_entries=4))
TOP = 1 << CONFIG.addr_width


def reference(table, addr, write):
    for index, entry in enumerate(table):
        direction = entry["on_write"] if write else entry["on_read"]
        if entry["enable"] and direction and entry["base"] <= addr < entry["base"] + entry["size"]:
            return True, index, addr - entry["base"]
    return False, None, None


def entry(base, size, enable=1, on_write=1, on_read=1):
    return dict(enable=enable, on_write=on_write, on_read=on_read, base=base, size=size)


def run_cases(table, cases):
    dut = FilterMatcher(CONFIG)
    mismatches = []

    async def bench(ctx):
        for index, fields in enumerate(table):
            for name, value in fields.items():
                ctx.set(getattr(dut.table[index], name), value)
        for addr, write in cases:
            ctx.set(dut.addr, addr)
            ctx.set(dut.write, write)
            hit, index, offset = reference(table, addr, write)
            got = (bool(ctx.get(dut.hit)), ctx.get(dut.entry), ctx.get(dut.offset))
            if got[0] != hit or (hit and got[1:] != (index, offset)):
                mismatches.append((hex(addr), write, got, (hit, index, offset)))

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
    "range from zero": ([entry(0, 0x40)], [(0, 1), (0x3F, 1), (0x40, 1), (TOP - 1, 1)]),
}


@pytest.mark.parametrize("name", CASES)
def test_directed(name):
    table, cases = CASES[name]
    assert run_cases(padded(table), cases) == []


def test_random_tables():
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
        assert run_cases(table, cases) == []
