"""``rtl-bench``: one library kernel launch through the RTL of an NDP slice configuration,
under a simulator, checked against the instruction-set simulator.

The slice's parameters (lanes, µthread slots, sub-cores, filter entries, event queue
depth, scratchpad, divide units, arbiter share) are point parameters; every distinct
configuration is exported once (:mod:`matndp.sim.sweep.rtl_build`) and compiled once by the runner's
cache. The seed draws the kernel's inputs and the random back-pressure.
"""

import contextlib
import os
import sys
import time

from matndp.hw.config import ArbiterConfig, EngineConfig, NDPConfig, TriggerConfig
from matndp.host.kernels.library import KERNELS, SECTOR_BYTES, LibraryError

from matndp.sim.runner import SIMULATORS
from matndp.sim.sweep.interface import (Parameter, PointFunction, boolean, integer, number, one_of,
                                        optional, table)


__all__ = ["RtlBenchPoint", "ndp_config"]


_DEFAULT_ENGINE = EngineConfig()
_DEFAULT_TRIGGER = TriggerConfig()


def ndp_config(config):
    """The :class:`NDPConfig` of a point's configuration."""
    return NDPConfig(
        sector_bytes=4 * config["lanes"],
        trigger=TriggerConfig(filter_entries=config["filter_entries"],
                              event_queue_depth=config["event_queue_depth"]),
        engine=EngineConfig(sub_cores=config["sub_cores"], slots=config["slots"],
                            scratchpad_bytes=config["scratchpad_bytes"],
                            divide_units=config["divide_units"]),
        arbiter=ArbiterConfig(ndp_share_period=config["ndp_share_period"]))


@contextlib.contextmanager
def _output_to(path):
    """Standard output and error, of this process and the programs it starts, to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(path, "w") as log:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            try:
                yield
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
    finally:
        for descriptor in saved:
            os.close(descriptor)


def _probability(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        return f"must be a probability in [0, 1), not {value!r}"
    return None


class RtlBenchPoint(PointFunction):
    name = "rtl-bench"
    help = ("one library kernel launch through the RTL of a slice configuration, cycles "
            "and agreement with the instruction-set simulator")
    parameters = (
        Parameter("kernel", "relu_fwd", one_of(tuple(KERNELS), "library kernel"),
                  "library kernel"),
        Parameter("problem", {"elements": 1024}, table, "the kernel's sizes, {dim: size}"),
        Parameter("lanes", SECTOR_BYTES // 4, integer(2, 32),
                  "32-bit lanes (the sector is 4 x lanes bytes); the library is written "
                  f"for {SECTOR_BYTES // 4}"),
        Parameter("sub_cores", _DEFAULT_ENGINE.sub_cores, integer(1, 8), "engine sub-cores"),
        Parameter("slots", _DEFAULT_ENGINE.slots, integer(2, 64), "µthread slots per sub-core"),
        Parameter("scratchpad_bytes", _DEFAULT_ENGINE.scratchpad_bytes, integer(256),
                  "scratchpad bytes"),
        Parameter("divide_units", _DEFAULT_ENGINE.divide_units, optional(integer(1, 32)),
                  "divide / square-root units per sub-core (default one per lane)"),
        Parameter("filter_entries", _DEFAULT_TRIGGER.filter_entries, integer(1, 64),
                  "trigger filter entries"),
        Parameter("event_queue_depth", _DEFAULT_TRIGGER.event_queue_depth, integer(2, 1024),
                  "trigger events buffered per source"),
        Parameter("ndp_share_period", ArbiterConfig().ndp_share_period, integer(0),
                  "arbiter: one memory slot in this many is the engine's while it waits"),
        Parameter("simulator", "verilator", one_of(SIMULATORS, "simulator"), "HDL simulator"),
        Parameter("pressure", 0.0, _probability,
                  "probability of a pause on every stream each cycle"),
        Parameter("memory_latency", 20, integer(1), "memory latency, cycles"),
        Parameter("reorder", False, boolean, "memory answers reads out of order"),
        Parameter("unrelated_per_access", 0, integer(0),
                  "unrelated GPU accesses mixed in per triggering access"),
        Parameter("cycle_limit", 2_000_000, integer(1000), "cycles before the run gives up"),
    )
    headline = ("cycles", "cycles_per_trigger")

    def check_configuration(self, config):
        try:
            hardware = ndp_config(config)
        except (TypeError, ValueError) as error:
            return f"RTL configuration: {error}"
        if hardware.sector_bytes != SECTOR_BYTES:
            return (f"lanes: the kernel library is written for {SECTOR_BYTES}-byte sectors "
                    f"({SECTOR_BYTES // 4} lanes), not {config['lanes']}")
        try:
            launch = KERNELS[config["kernel"]].launch(config["problem"])
        except LibraryError as error:
            return f"problem: {error}"
        if launch.scratchpad_bytes > config["scratchpad_bytes"]:
            return (f"scratchpad_bytes: {config['kernel']} needs {launch.scratchpad_bytes} "
                    f"bytes of scratchpad for {config['problem']}, not {config['scratchpad_bytes']}")
        return None

    def run(self, config, seed):
        from matndp.host.kernels.library.iss_runner import run_on_iss
        from matndp.sim.flows.kernel_run import run_kernel_rtl
        from matndp.sim.sweep.rtl_build import rtl_build, rtl_build_key
        hardware = ndp_config(config)
        verilog, _ = rtl_build(hardware)
        seed = 1 if seed is None else seed
        log = verilog.parent / "logs" / f"{config['kernel']}-{os.getpid()}-{time.time_ns()}.log"
        try:
            # The simulator's build and run print a lot; a sweep shows only its progress.
            with _output_to(log):
                run = run_kernel_rtl(
                    config["kernel"], config["problem"], seed=seed,
                    simulator=config["simulator"], pressure=config["pressure"],
                    memory_latency=config["memory_latency"], reorder=config["reorder"],
                    unrelated_per_access=config["unrelated_per_access"], config=hardware,
                    cycle_limit=config["cycle_limit"], verilog=verilog)
        except Exception as error:
            raise type(error)(f"{error} (simulator output: {log})") from error
        launch = KERNELS[config["kernel"]].launch(config["problem"])
        expected, _ = run_on_iss(launch, run.inputs)
        mismatched = sorted(name for name, values in expected.items()
                            if values.tobytes() != run.outputs[name].tobytes())
        triggers = launch.expected_triggers
        measured = {key: value for key, value in run.measurements.items() if key != "wall_s"}
        return {**measured, "rtl_build": rtl_build_key(hardware), "triggers": triggers,
                "cycles_per_trigger": run.cycles / triggers if triggers else None,
                "matches_iss": not mismatched and run.complete, "mismatched_outputs": mismatched}
