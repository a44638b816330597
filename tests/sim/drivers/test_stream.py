"""The stream drivers under both simulators, on a FIFO per direction of a memory port
(testbench: sim/tb/stream_tb.py)."""

import pytest

from matndp.sim.runner import SIMULATORS
from tests.sim.drivers.port import run_port_testbench


@pytest.mark.parametrize("simulator", SIMULATORS)
def test_stream_drivers(simulator):
    run_port_testbench("matndp.sim.tb.stream_tb", simulator, seed=5)
