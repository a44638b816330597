"""Run one library kernel end to end through the RTL: the slice with its engine under a
simulator, driven like hardware by the host runtime.

:func:`run_kernel_rtl` places a launch's tensors (random values from a seed, the same the
instruction-set simulator and the goldens get) in the memory model, has the runtime load
the kernel, write its argument block and program filter entry 0, issues the triggering
accesses from the GPU side (with unrelated traffic mixed in), waits for the entry's
completion and reads the outputs back. :func:`run_launches_rtl` does the same for several
launches at once, one filter entry each, their triggering accesses interleaved. The testbench is ``sim/tb/engine_tb.py``.
"""

from dataclasses import asdict, dataclass, field
import functools
from itertools import zip_longest
import json
import pathlib
import tempfile

import numpy as np

from matndp.host.kernels.library import Access, Role, kernel as library_kernel
from matndp.host.kernels.library.inputs import random_inputs
from matndp.sim.designs import KERNEL_CONFIG, ndp_slice_verilog
from matndp.sim.runner import build_root, run_cocotb


__all__ = ["KernelRun", "Launch", "LaunchPlan", "run_kernel_rtl", "run_launches_rtl", "plan_launches",
           "scratchpad_bases", "launch_layout", "reference_outputs", "golden_outputs",
           "differing_elements"]


_TENSOR_BASE = 0x10_0000
_UNRELATED_BASE = 0x0F_0000


@dataclass
class KernelRun:
    """What one RTL run gave: the output tensors by name, and the measurements."""
    kernel: str
    problem: dict
    inputs: dict
    outputs: dict
    addresses: dict
    complete: bool
    error: object
    cycles: int
    measurements: dict = field(default_factory=dict)
    directory: pathlib.Path = None


def launch_layout(launch, base=_TENSOR_BASE, sector_bytes=32):
    """Byte addresses of a launch's tensors, one after the other from ``base``, each
    starting on a sector."""
    addresses = {}
    address = base
    for tensor in launch.tensors:
        addresses[tensor.name] = address
        size = launch.allocation(tensor.name)
        address += -(-size // sector_bytes) * sector_bytes
    return addresses, address


def _raw(values):
    return np.ascontiguousarray(values).reshape(-1).view(np.uint8)


@dataclass(frozen=True)
class Launch:
    """One kernel launch of a run: library kernel ``name`` on ``problem``; ``inputs`` by
    tensor name (seeded random values when None); ``params`` its scalars."""
    name: str
    problem: dict
    params: dict = None
    inputs: dict = None


def run_kernel_rtl(name, problem, *, seed=1, params=None, inputs=None, **options):
    """Run kernel ``name`` of the library on ``problem`` (its sizes) through the RTL;
    returns a :class:`KernelRun`. The options are :func:`run_launches_rtl`'s."""
    return run_launches_rtl([Launch(name, problem, params, inputs)], seed=seed, **options)[0]


def run_launches_rtl(launches, *, seed=1, simulator="verilator", pressure=0.0,
                     memory_latency=20, reorder=False, unrelated_per_access=0,
                     config=KERNEL_CONFIG, waves=False, cycle_limit=2_000_000,
                     watchdog=1 << 24, directory=None, verilog=None, gpu_interval=1, gpu_delay=0):
    """Run several launches at once through the RTL, launch *i* on filter entry *i* and
    argument block *i*, the GPU interleaving their triggering accesses one by one; returns
    one :class:`KernelRun` per launch (the run's measurements shared). ``pressure`` is the
    probability of a pause on every stream each cycle; ``reorder`` lets memory answer reads
    out of order; ``waves`` records ``waves.fst`` in the run's directory. ``verilog`` is
    the slice's Verilog exported from ``config`` when the caller keeps its own copy.
    ``gpu_interval``: the GPU offers a request in one cycle of every ``gpu_interval``, the
    first in the cycle the last entry is armed (a write stream at that rate from the
    arming; only without ``pressure``); ``gpu_delay``: cycles from that arming to the GPU's
    first request. Per launch, the measurements hold ``first_write_stall_cycles`` (the
    GPU's stall cycles before its first triggering access was taken) and ``tail_cycles``
    (from the cycle the last was taken to the entry's completion; to the 64-cycle poll
    with several launches)."""
    if not launches:
        raise ValueError("run_launches_rtl needs at least one launch")
    if isinstance(gpu_interval, bool) or not isinstance(gpu_interval, int) or gpu_interval < 1:
        raise ValueError(f"gpu_interval must be a positive integer of cycles, not {gpu_interval!r}")
    if isinstance(gpu_delay, bool) or not isinstance(gpu_delay, int) or gpu_delay < 0:
        raise ValueError(f"gpu_delay must be a non-negative integer of cycles, not {gpu_delay!r}")
    if gpu_interval > 1 and pressure:
        raise ValueError("gpu_interval sets the GPU's pace; it cannot be combined with random "
                         f"back-pressure (pressure {pressure})")
    if len(launches) > config.trigger.filter_entries:
        raise ValueError(f"{len(launches)} launches need as many filter entries; the "
                         f"configuration has {config.trigger.filter_entries}")
    if directory is None:
        names = "-".join(launch.name for launch in launches)
        directory = pathlib.Path(tempfile.mkdtemp(prefix=f"kernel-{names}-", dir=_runs_root()))
    # The testbench runs in the simulator's own folder, so it is told the job's absolute
    # path: a relative one (``make sim``'s build/sim/engine_run) would name nothing there.
    directory = pathlib.Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)

    plans = plan_launches(launches, seed=seed, config=config)
    jobs = [_launch_job(index, plan, directory) for index, plan in enumerate(plans)]
    # The GPU interleaves the launches' triggering accesses, one of each in turn.
    streams = [plan.accesses() for plan in plans]
    accesses = [access for group in zip_longest(*streams) for access in group if access]

    job = {
        "config": asdict(config),
        "seed": seed,
        "pressure": pressure,
        "gpu_interval": gpu_interval,
        "gpu_delay": gpu_delay,
        "memory_latency": memory_latency,
        "reorder": reorder,
        "launches": jobs,
        "watchdog": watchdog,
        "accesses": accesses,
        "unrelated_per_access": unrelated_per_access,
        "unrelated_base": _UNRELATED_BASE,
        "cycle_limit": cycle_limit,
    }
    (directory / "job.json").write_text(json.dumps(job))
    run_cocotb(sources=[verilog or ndp_slice_verilog(config, simulator=simulator)], toplevel="ndp_slice",
               test_module="matndp.sim.tb.engine_tb", simulator=simulator, waves=waves,
               wave_file=directory / "waves.fst" if waves else None, per_cycle=True,
               extra_env={"MATNDP_JOB": str(directory)},
               log_file=directory / "simulator.log")
    result = json.loads((directory / "result.json").read_text())
    runs = []
    for index, plan in enumerate(plans):
        outputs = plan.outputs(lambda region: np.load(directory / f"out{index}-{region['tensor']}.npy"))
        entry = result["entries"][index]
        measurements = {**result, **entry}
        runs.append(KernelRun(plan.request.name, dict(plan.request.problem), plan.inputs, outputs,
                              plan.addresses, entry["complete"], entry["error"], entry["cycles"],
                              measurements, directory))
    return runs


@dataclass
class LaunchPlan:
    """One launch laid out for an RTL run: its tensors' addresses, the bytes to place in
    memory (``place``: tensor name, address, bytes), the regions to read back
    (``read_back``: address, bytes, tensor), the argument words (its scratchpad region at
    ``scratchpad_base``), the filter range and the triggering accesses (``trigger``:
    offset, byte mask, made when first asked for: a planner that takes the launch's columns
    does not make millions of tuples; ``trigger_bytes``: what a write-triggered launch
    writes)."""
    request: Launch
    spec: object
    launch: object
    inputs: dict
    addresses: dict
    scratchpad_base: int
    place: list
    read_back: list
    arguments: list
    entry: dict
    trigger_bytes: np.ndarray
    sector_bytes: int

    @functools.cached_property
    def trigger(self):
        return self.launch.trigger_accesses()

    @property
    def write_triggered(self):
        return self.entry["on_write"]

    def accesses(self):
        """The triggering accesses as the per-cycle testbench takes them."""
        sector = self.sector_bytes
        base = self.entry["base"]
        accesses = []
        for offset, mask in self.trigger:
            data = int.from_bytes(self.trigger_bytes[offset:offset + sector].tobytes(), "little")
            accesses.append({"addr": base + offset, "write": self.write_triggered,
                             "data": hex(data if self.write_triggered else 0),
                             "mask": mask if self.write_triggered else (1 << sector) - 1})
        return accesses

    def outputs(self, raw_bytes):
        """The output tensors, from ``raw_bytes(region)`` (the bytes of a read-back region)."""
        outputs = {}
        for region in self.read_back:
            tensor = self.launch.kernel.tensor(region["tensor"])
            raw = np.asarray(raw_bytes(region), dtype=np.uint8)
            outputs[region["tensor"]] = raw.view(tensor.dtype.numpy)[:self.launch.elements(region["tensor"])]
        return outputs


def plan_launches(launches, *, seed=1, config=KERNEL_CONFIG, base=_TENSOR_BASE):
    """Lay out ``launches`` (:class:`Launch` es) for one run: tensors one after the other
    from ``base``, scratchpad regions one after the other; launch *i*'s inputs are seeded
    with ``seed + i`` unless given."""
    specs = [library_kernel(request.name) for request in launches]
    built = [spec.launch(request.problem, **(request.params or {}))
             for spec, request in zip(specs, launches)]
    scratchpad = scratchpad_bases(built, config)
    plans = []
    for index, (request, spec, launch) in enumerate(zip(launches, specs, built)):
        inputs = random_inputs(launch, seed + index) if request.inputs is None else request.inputs
        addresses, base = launch_layout(launch, base, sector_bytes=config.sector_bytes)
        plans.append(_plan(request, spec, launch, inputs, addresses, scratchpad[index],
                           config.sector_bytes))
    return plans


def scratchpad_bases(launches, config=KERNEL_CONFIG):
    """The scratchpad address of each of ``launches`` (library launches) placed one after
    the other, sector-aligned, in the engine of ``config``; ``ValueError`` when they do not
    fit, before anything is built or run."""
    sector = config.sector_bytes
    bases, used = [], 0
    for launch in launches:
        bases.append(used)
        used += -(-launch.scratchpad_bytes // sector) * sector
    if used > config.engine.scratchpad_bytes:
        raise ValueError(f"the launches need {used} B of scratchpad; the engine has "
                         f"{config.engine.scratchpad_bytes} B")
    return bases


def _plan(request, spec, launch, inputs, addresses, scratchpad_base, sector):
    place, read_back = [], []
    trigger = launch.trigger
    write_triggered = launch.access is Access.WRITE
    for tensor in launch.tensors:
        tensor_name = tensor.name
        gpu_written = tensor_name == trigger and write_triggered
        if tensor.role is not Role.OUTPUT and not gpu_written:
            place.append((tensor_name, addresses[tensor_name], _raw(inputs[tensor_name])))
        if tensor.role is not Role.INPUT or tensor_name in launch.outputs:
            read_back.append({"addr": addresses[tensor_name], "bytes": launch.nbytes(tensor_name),
                              "tensor": tensor_name})
    trigger_bytes = np.zeros(launch.allocation(trigger), dtype=np.uint8)
    if write_triggered:
        raw = _raw(inputs[trigger])
        trigger_bytes[:raw.size] = raw
    entry = {"base": addresses[trigger], "size": launch.allocation(trigger),
             "on_write": write_triggered, "on_read": not write_triggered,
             "expected": launch.expected_triggers, "init_threads": launch.init_threads,
             "final_threads": launch.final_threads}
    return LaunchPlan(request, spec, launch, inputs, addresses, scratchpad_base, place, read_back,
                      [int(word) for word in launch.arguments(addresses, scratchpad_base)], entry,
                      trigger_bytes, sector)


def _launch_job(index, plan, directory):
    """The job's part for launch ``index`` (engine_tb's format): its regions to place,
    written as ``.npy`` files in ``directory``, and to read back; kernel, arguments and
    entry."""
    place = []
    for tensor_name, addr, raw in plan.place:
        file = f"in{index}-{tensor_name}.npy"
        np.save(directory / file, raw)
        place.append({"addr": addr, "file": file})
    read_back = [{**region, "file": f"out{index}-{region['tensor']}.npy"} for region in plan.read_back]
    image = plan.spec.image
    return {
        "kernel": {"name": image.name, "words": [int(word) for word in image.words],
                   "sections": {section.name: start for section, start in image.sections.items()},
                   "uses_atomics": bool(image.uses_atomics)},
        "arguments": plan.arguments,
        "entry": plan.entry,
        "place": place,
        "read_back": read_back,
    }


def reference_outputs(launch, inputs):
    """What ``launch`` on ``inputs`` must give: (the instruction-set simulator's outputs,
    the golden model's, the simulator's run result)."""
    from matndp.host.kernels.library.iss_runner import run_on_iss
    iss, result = run_on_iss(launch, inputs)
    return iss, golden_outputs(launch, inputs), result


def golden_outputs(launch, inputs, order=None):
    """What the numpy golden (``sim/golden/kernels.py``) says ``launch`` gives, its
    reductions accumulating the trigger tensor's sectors in ``order`` (sector indices;
    address order by default)."""
    from matndp.sim.golden.kernels import GOLDENS
    return GOLDENS[launch.kernel.name](inputs, dict(launch.params), dict(launch.problem),
                                      order=order, partials=launch.partials)


def differing_elements(got, expected):
    """{output: elements whose bits differ}, over the outputs of ``expected`` that differ."""
    found = {}
    for name, values in expected.items():
        a, b = np.asarray(got[name]), np.asarray(values)
        unsigned = np.uint32 if a.dtype.itemsize == 4 else np.uint16
        differing = int(np.count_nonzero(a.view(unsigned) != b.view(unsigned)))
        if differing:
            found[name] = differing
    return found


def _runs_root():
    root = build_root() / "kernel_runs"
    root.mkdir(parents=True, exist_ok=True)
    return root
