"""The instruction's checks alone: the window's comparisons, on random and boundary
addresses against a model of their meaning, with the comparisons beside the address's
adder (an address space of 40 bits) and after it (64); the watchdog compares the age the
µthread will have a cycle later, at DISPATCH (saturating at the age limit). The other
checks and their precedence are in test_dispatch.py."""

import random

import pytest
from amaranth.sim import Simulator

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.decoder import UnitCode
from matndp.hw.engine.isa import Opcode
from matndp.hw.engine.layouts import ErrorCause
from matndp.hw.engine.pipeline.check import Check
from matndp.hw.engine.pipeline.slots import AGE_LIMIT


CONFIG = NDPConfig(engine=EngineConfig(sub_cores=1, slots=4, instruction_words=64))
SLOT = 2


def _run(dut, cases):
    """``dut.cause`` for each case, a dict of input values."""
    causes = []

    async def testbench(ctx):
        for case in cases:
            for name, value in case.items():
                ctx.set(getattr(dut, name) if "." not in name else
                        getattr(dut.control, name.split(".")[1]), value)
            causes.append(ctx.get(dut.cause))

    simulator = Simulator(dut)
    simulator.add_testbench(testbench)
    simulator.run()
    return causes


@pytest.mark.parametrize("addr_width", [40, 64])
def test_the_window_holds_whole_sectors(addr_width):
    config = NDPConfig(addr_width=addr_width,
                       engine=EngineConfig(sub_cores=1, slots=4, instruction_words=64))
    sector, limit = config.sector_bytes, 1 << addr_width
    rng = random.Random(addr_width)
    cases, expected = [], []
    for _ in range(600):
        base = rng.randrange(0, limit, rng.choice([1, sector]))
        end = min(base + rng.randrange(8) * sector + rng.choice([0, 0, 1, sector // 2]), limit)
        target = rng.choice([base - sector, base, base + sector, end - sector, end - sector + 16,
                             end, rng.getrandbits(64), limit - sector, limit])
        target &= (1 << 64) - 1
        target -= target % sector
        if rng.random() < 0.1 and target < limit and addr_width < 64:
            # The registers' bounds reach past the address space: a window a whole space
            # above the address, narrower than a sector.
            base = target + limit + 1
            end = base + sector // 2
        imm = rng.choice([0, sector, -sector, rng.randrange(-4096, 4096) * sector])
        a = rng.getrandbits(64)
        b = (target - a - imm) % (1 << 64)
        cases.append({"control.unit": UnitCode.MEMORY, "control.opcode": Opcode.VLD,
                      "control.legal": 1, "control.address_a": 1, "control.address_b": 1,
                      "control.imm": imm % (1 << 32), "a": a, "b": b,
                      "window_base": base, "window_end": end, "watchdog": 1 << 20})
        inside = target < limit and base <= target and target + sector <= end
        expected.append(ErrorCause.NONE if inside else ErrorCause.OUT_OF_WINDOW)
    assert _run(Check(config), cases) == expected
    assert ErrorCause.NONE in expected and ErrorCause.OUT_OF_WINDOW in expected


@pytest.mark.parametrize("age, watchdog, fails", [
    (0, 1, True),                         # one cycle old at DISPATCH
    (0, 2, False),
    (98, 100, False),
    (99, 100, True),
    (AGE_LIMIT - 1, AGE_LIMIT, True),
    (AGE_LIMIT, AGE_LIMIT, True),         # saturated: still at the limit a cycle later
    (AGE_LIMIT - 2, AGE_LIMIT, False),
])
def test_the_watchdog_compares_the_age_at_dispatch(age, watchdog, fails):
    seen = _run(Check(CONFIG), [{"slot": SLOT, "control.legal": 1, "control.unit": UnitCode.ALU,
                                 "age": [0, AGE_LIMIT, age, 0], "watchdog": watchdog}])
    assert seen == [ErrorCause.WATCHDOG if fails else ErrorCause.NONE]


@pytest.mark.parametrize("config, error, message", [
    (None, TypeError, "config must be an NDPConfig with an engine"),
    (NDPConfig(engine=None), TypeError, "config must be an NDPConfig with an engine"),
])
def test_constructor_errors(config, error, message):
    with pytest.raises(error, match=message):
        Check(config)
