"""The instruction's checks alone where they differ from DISPATCH's view: the watchdog
compares the age the µthread will have a cycle later, at DISPATCH (saturating at the age
limit); the other checks and their precedence are in test_dispatch.py."""

import pytest
from amaranth.sim import Simulator

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.decoder import UnitCode
from matndp.hw.engine.layouts import ErrorCause
from matndp.hw.engine.pipeline.check import Check
from matndp.hw.engine.pipeline.slots import AGE_LIMIT


CONFIG = NDPConfig(engine=EngineConfig(sub_cores=1, slots=4, instruction_words=64))
SLOT = 2


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
    dut = Check(CONFIG)
    seen = []

    async def testbench(ctx):
        ctx.set(dut.slot, SLOT)
        ctx.set(dut.control.legal, 1)
        ctx.set(dut.control.unit, UnitCode.ALU)
        ctx.set(dut.age, [0, AGE_LIMIT, age, 0])
        ctx.set(dut.watchdog, watchdog)
        seen.append(ctx.get(dut.cause))

    simulator = Simulator(dut)
    simulator.add_testbench(testbench)
    simulator.run()
    assert seen == [ErrorCause.WATCHDOG if fails else ErrorCause.NONE]


@pytest.mark.parametrize("config, error, message", [
    (None, TypeError, "config must be an NDPConfig with an engine"),
    (NDPConfig(engine=None), TypeError, "config must be an NDPConfig with an engine"),
])
def test_constructor_errors(config, error, message):
    with pytest.raises(error, match=message):
        Check(config)
