"""The register-bus drivers and the co-simulation adapter under both simulators (testbench:
sim/tb/csr_bus_tb.py): the runtime reaches every word of the slice's windows through the
decoder while the targets take 1..5 cycles, and an unanswered access times out by name."""

import re

import pytest

from matndp.hw.csr_map import register_map
from matndp.hw.export import export_verilog
from matndp.sim.designs import evaluate_at_time_zero
from matndp.sim.drivers.csr import CSRDriver, CSRTarget
from matndp.sim.runner import build_root, run_cocotb, write_if_changed
from matndp.sim.tb.csr_bus_tb import CONFIG, TOPLEVEL
from tests.hw.bus.models import DecoderHarness


SIMULATORS = ["verilator", "icarus"]


def _design(simulator):
    # Icarus needs the time-0 evaluation: the register file's per-block decode follows
    # registers that an access at offset 0 leaves at their reset value.
    text = export_verilog(DecoderHarness(register_map(CONFIG)), TOPLEVEL)
    if simulator == "icarus":
        text = evaluate_at_time_zero(text)
    return write_if_changed(build_root() / "designs" / f"{TOPLEVEL}-{simulator}.v", text)


@pytest.mark.parametrize("simulator", SIMULATORS)
@pytest.mark.parametrize("testcase", ["windows_through_the_runtime", "an_unanswered_access_times_out_by_name"])
def test_register_bus_with_wait_states(simulator, testcase):
    run_cocotb(sources=[_design(simulator)], toplevel=TOPLEVEL, test_module="matndp.sim.tb.csr_bus_tb",
               simulator=simulator, testcase=testcase, extra_env={"MATNDP_SEED": 3})


@pytest.mark.parametrize("timeout", [0, -1, 2.0, True])
def test_the_driver_refuses_a_timeout_that_is_not_a_number_of_cycles(timeout):
    with pytest.raises(ValueError, match=f"CSRDriver: timeout must be a positive number of cycles, not {timeout!r}"):
        CSRDriver(None, None, timeout=timeout)


@pytest.mark.parametrize("latency", [(0, 2), (3, 2), (-1, -1)])
def test_the_target_refuses_a_wait_of_less_than_a_cycle(latency):
    with pytest.raises(ValueError, match=re.escape(f"CSRTarget: latency must be a range of at least "
                                                   f"1 cycle, not {latency!r}")):
        CSRTarget(None, "windows__imem", 16, latency=latency)
