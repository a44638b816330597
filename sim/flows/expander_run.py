"""Gradient tensors reduced through the expander slice's RTL: K simulated GPUs, each on its
own port with its own timing and back-pressure, write their gradients; the engine sums
them and runs the optimizer; the updated weights and state are read back
(docs/ndpxnet-rtl.md). The testbench is ``sim/tb/expander_tb.py`` for the expander slice
and ``sim/tb/axi_expander_tb.py`` for its FPGA top behind AXI.
"""

from dataclasses import asdict, dataclass, field
import json
import pathlib
import random
import tempfile

import numpy as np

from matndp.host.kernels.expander import reduction_image
from matndp.sim.designs import (AXI_EXPANDER_MODULE, EXPANDER_CONFIG, EXPANDER_MODULE,
                                axi_expander_verilog, expander_slice_verilog)
from matndp.sim.runner import build_root, run_cocotb


__all__ = ["GpuTiming", "ExpanderRun", "EXPANDER_TOPS", "run_expander_rtl"]


# The designs a run can go through: name -> (its Verilog, its module, its testbench).
EXPANDER_TOPS = {
    "slice": (expander_slice_verilog, EXPANDER_MODULE, "matndp.sim.tb.expander_tb"),
    "axi": (axi_expander_verilog, AXI_EXPANDER_MODULE, "matndp.sim.tb.axi_expander_tb"),
}
# The slice testbench's memory model answers after this many cycles unless told otherwise.
MEMORY_LATENCY = 20


_TENSOR_BASE = 0x10_0000
_UNRELATED_BASE = 0x08_0000
_UNRELATED_SECTORS = 64


@dataclass(frozen=True)
class GpuTiming:
    """One GPU's side of a run: ``pressure`` and ``response_pressure``, the probability
    of a pause on its request and response streams each cycle; ``delay``, cycles from the
    arming to its first request; ``stop``, the number of its accesses after which it
    stops (None: all of them); ``unrelated``, accesses of a region no entry watches mixed
    in per gradient write (reads and writes, on average); ``shuffled``, whether it writes
    each tensor's sectors in a random order of its own instead of address order."""
    pressure: float = 0.0
    response_pressure: float = 0.0
    delay: int = 0
    stop: int | None = None
    unrelated: float = 0.0
    shuffled: bool = False


@dataclass
class ExpanderRun:
    """What one RTL run gave: per tensor its output tensors after the step, and the
    testbench's measurements (``result``)."""
    launches: list
    outputs: list
    result: dict
    directory: pathlib.Path = None
    entries: list = field(default_factory=list)


def _accesses(launch_writes, copy_bases, port, timing, rng, config):
    """GPU ``port``'s accesses: its gradient writes of each tensor in turn, with unrelated
    accesses of its own region mixed in."""
    accesses = []
    region = _UNRELATED_BASE + port * _UNRELATED_SECTORS * config.sector_bytes
    for writes, base in zip(launch_writes, copy_bases):
        if timing.shuffled:
            writes = rng.sample(writes, len(writes))
        for offset, data, mask in writes:
            while timing.unrelated and rng.random() < timing.unrelated / (1 + timing.unrelated):
                write = rng.random() < 0.5
                accesses.append({"addr": region + rng.randrange(_UNRELATED_SECTORS) * config.sector_bytes,
                                 "write": write, "unrelated": True,
                                 "data": f"{rng.getrandbits(8 * config.sector_bytes) if write else 0:x}",
                                 "mask": (1 << config.sector_bytes) - 1 if write else 0})
            accesses.append({"addr": base + offset, "write": True, "unrelated": False,
                             "data": data[::-1].hex() or "0", "mask": mask})
    if timing.stop is not None:
        accesses = accesses[:timing.stop]
    return accesses


def run_expander_rtl(launches, grads, states, *, gpus, seed=1, simulator="verilator",
                     memory_latency=None, memory_pressure=0.0, reorder=False,
                     config=EXPANDER_CONFIG, cycle_limit=400_000, directory=None, top="slice"):
    """Run ``launches`` (:class:`~matndp.host.kernels.expander.ReductionLaunch`, one
    filter entry each, all over ``len(gpus)`` GPUs) through the expander slice's RTL
    (``top`` "slice") or its FPGA top behind AXI ("axi"). ``grads[t][k]`` is GPU k's
    gradient of tensor t, ``states[t]`` its optimizer state; ``gpus`` one
    :class:`GpuTiming` per GPU. ``memory_latency`` (default 20 cycles) and ``reorder``
    set the slice's memory model; the AXI top's memory (cocotbext-axi's ``AxiRam``)
    answers at its own pace, in order. Returns an :class:`ExpanderRun`."""
    ports = len(gpus)
    if top not in EXPANDER_TOPS:
        raise ValueError(f"top must be one of {', '.join(EXPANDER_TOPS)}, not {top!r}")
    if top == "axi" and (memory_latency is not None or reorder):
        raise ValueError("memory_latency and reorder set the slice's memory model; the AXI "
                         "top's memory (AxiRam) has neither")
    memory_latency = MEMORY_LATENCY if memory_latency is None else memory_latency
    if not launches:
        raise ValueError("run_expander_rtl needs at least one tensor")
    if len(launches) > config.trigger.filter_entries:
        raise ValueError(f"{len(launches)} tensors need as many filter entries; the "
                         f"configuration has {config.trigger.filter_entries}")
    for launch in launches:
        if launch.ports != ports:
            raise ValueError(f"a tensor reduced over {launch.ports} GPUs in a run of {ports}")
    if directory is None:
        root = build_root() / "expander_runs"
        root.mkdir(parents=True, exist_ok=True)
        directory = pathlib.Path(tempfile.mkdtemp(prefix=f"expander-{ports}-", dir=root))
    directory = pathlib.Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)

    tensors, layouts, all_writes, copy_bases = [], [], [], []
    base, slot = _TENSOR_BASE, 0
    for index, launch in enumerate(launches):
        addresses, end = launch.layout(base)
        layouts.append(addresses)
        image = reduction_image(launch.optimizer, launch.ports)
        gathering = launch.gathering(slot)
        place = []
        for name in launch.input_tensors():
            file = f"in{index}-{name}.npy"
            np.save(directory / file, np.ascontiguousarray(states[index][name], dtype=np.float32))
            place.append({"addr": addresses[name], "file": file})
        tensors.append({
            "kernel": {"name": image.name, "words": [f"{w:016x}" for w in image.words],
                       "sections": {s.name: start for s, start in image.sections.items()},
                       "uses_atomics": image.uses_atomics},
            "arguments": list(launch.arguments(addresses)),
            "entry": {"base": addresses["grad"], "size": launch.grad_bytes, "expected": launch.expected,
                      "gather": asdict(gathering)},
            "place": place,
            "read_back": [{"addr": addresses[name], "bytes": launch.elements * 4,
                           "file": f"out{index}-{name}.npy"} for name in launch.output_tensors()],
        })
        slot += gathering.slots(config)
        all_writes.append([launch.sector_writes(grads[index][k]) for k in range(ports)])
        copy_bases.append([addresses["grad"] + k * launch.copy_stride for k in range(ports)])
        base = -(-end // 4096) * 4096
    if slot > config.trigger.gather_sectors:
        raise ValueError(f"the tensors' arrival gathering needs {slot} table slots; the "
                         f"configuration has {config.trigger.gather_sectors}")
    rng = random.Random(seed)
    gpu_jobs = []
    for port, timing in enumerate(gpus):
        accesses = _accesses([writes[port] for writes in all_writes],
                             [bases[port] for bases in copy_bases], port, timing, rng, config)
        gpu_jobs.append({"pressure": timing.pressure, "response_pressure": timing.response_pressure,
                         "delay": timing.delay, "stop": timing.stop is not None, "accesses": accesses})
    job = {"config": asdict(config), "ports": ports, "seed": seed, "tensors": tensors,
           "gpus": gpu_jobs, "memory_latency": memory_latency, "memory_pressure": memory_pressure,
           "reorder": reorder, "watchdog": 1 << 24, "cycle_limit": cycle_limit}
    (directory / "job.json").write_text(json.dumps(job))
    verilog, module, testbench = EXPANDER_TOPS[top]
    run_cocotb(sources=[verilog(config, ports, simulator=simulator)],
               toplevel=module, test_module=testbench, simulator=simulator,
               extra_env={"MATNDP_JOB": str(directory)}, log_file=directory / "simulator.log")
    result = json.loads((directory / "result.json").read_text())
    outputs = []
    for index, launch in enumerate(launches):
        outputs.append({name: np.load(directory / f"out{index}-{name}.npy").view(np.float32)
                        for name in launch.output_tensors()})
    return ExpanderRun(list(launches), outputs, result, directory, result["entries"])
