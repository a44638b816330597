"""Library launches on the instruction-set simulator: :func:`prepare_on_iss` places a
launch's tensors in a memory image and programs one filter entry, :func:`run_on_iss` runs
it and reads the outputs back, :func:`run_op_on_iss` runs an op's phases one after the
other on one memory image."""

from dataclasses import dataclass

import numpy as np

from matndp.host.kernels.iss import FilterEntry, InstructionSetSimulator, IssConfig, TriggerEvents
from matndp.host.kernels.library import op
from matndp.host.kernels.library.spec import SECTOR_BYTES, Access, KernelLaunch, LibraryError, Role
from matndp.host.kernels.memory import Memory


__all__ = ["IssRun", "prepare_on_iss", "run_on_iss", "run_op_on_iss"]


def _place(memory, launch, inputs):
    """Tensor addresses in ``memory``; inputs and states from ``inputs`` (a launch's
    trigger tensor with write access is written by the triggering accesses instead)."""
    addresses = {}
    for spec in launch.tensors:
        name = spec.name
        if name in memory.regions:
            addresses[name] = memory.address(name)
            continue
        addresses[name] = memory.reserve(name, launch.allocation(name), dtype=spec.dtype.numpy,
                                         shape=(launch.allocation(name) // spec.dtype.itemsize,))
        gpu_written = name == launch.trigger and launch.access is Access.WRITE
        if spec.role is not Role.OUTPUT and not gpu_written:
            memory.write(addresses[name], _tensor_values(launch, inputs, name))
    return addresses


def _tensor_values(launch, inputs, name):
    if name not in inputs:
        raise LibraryError(f"kernel {launch.kernel.name}: no values for tensor {name!r}")
    spec = launch.kernel.tensor(name)
    values = np.ascontiguousarray(inputs[name])
    if values.dtype != spec.dtype.numpy or values.size != launch.elements(name):
        raise LibraryError(f"tensor {name!r} must be {launch.elements(name)} elements of "
                           f"{spec.dtype.numpy}, not {values.size} of {values.dtype}")
    return values.reshape(-1)


def _trigger_events(launch, memory, addresses, inputs, order, entry):
    accesses = launch.trigger_accesses()
    count = len(accesses)
    index = np.arange(count) if order is None else np.asarray(order, dtype=np.int64)
    if sorted(index.tolist()) != list(range(count)):
        raise LibraryError(f"the trigger order must be a permutation of the {count} sectors")
    base = addresses[launch.trigger]
    padded = np.zeros(launch.allocation(launch.trigger), dtype=np.uint8)
    if launch.access is Access.WRITE:
        raw = _tensor_values(launch, inputs, launch.trigger).view(np.uint8)
        padded[:raw.size] = raw
    else:
        padded[:] = memory.read(base, np.uint8, padded.size)
    data = padded[:count * SECTOR_BYTES].reshape(count, SECTOR_BYTES)[index]
    masks = np.ones((count, SECTOR_BYTES), dtype=bool)
    last = accesses[-1][1]
    masks[-1] = [(last >> bit) & 1 for bit in range(SECTOR_BYTES)]
    masks = masks[index]
    return TriggerEvents(np.full(count, entry), base + index.astype(np.uint64) * np.uint64(SECTOR_BYTES),
                         data, masks, np.full(count, launch.access is Access.WRITE))


@dataclass(frozen=True)
class IssRun:
    """A launch set up on the instruction-set simulator: its memory image, the tensors'
    addresses, the programmed simulator (one entry, index 0) and the trigger events."""
    launch: KernelLaunch
    memory: object
    addresses: dict
    simulator: object
    events: object

    def outputs(self):
        """{name: array} of the launch's outputs and states, as memory holds them."""
        return {name: self.memory.read(self.addresses[name],
                                       self.launch.kernel.tensor(name).dtype.numpy,
                                       self.launch.elements(name))
                for name in self.launch.outputs}


def prepare_on_iss(launch, inputs, *, order=None, memory=None, expected=None):
    """Place ``launch``'s tensors (``inputs`` by name, numpy arrays of each tensor's dtype;
    a tensor already in ``memory`` — an earlier phase's — is used as it is), program an
    entry (``expected`` µthreads; the launch's count by default) and build the trigger
    events in ``order`` (a permutation of sector indices; address order by default)."""
    if memory is None:
        total = sum(launch.allocation(t.name) for t in launch.tensors) + SECTOR_BYTES
        memory = Memory(-(-total // SECTOR_BYTES) * SECTOR_BYTES)
    addresses = _place(memory, launch, inputs)
    scratchpad = max(launch.scratchpad_bytes, SECTOR_BYTES)
    config = IssConfig(scratchpad_bytes=-(-scratchpad // SECTOR_BYTES) * SECTOR_BYTES,
                       watchdog=1 << 30)
    entry = FilterEntry(addresses[launch.trigger], launch.allocation(launch.trigger),
                        launch.kernel.image, launch.arguments(addresses),
                        expected=launch.expected_triggers if expected is None else expected,
                        init_threads=launch.init_threads, final_threads=launch.final_threads)
    simulator = InstructionSetSimulator(memory, [entry], config)
    events = _trigger_events(launch, memory, addresses, inputs, order, 0)
    return IssRun(launch, memory, addresses, simulator, events)


def run_on_iss(launch, inputs, *, order=None, memory=None):
    """Run ``launch`` on the instruction-set simulator (set up by :func:`prepare_on_iss`)
    and return ({output name: array}, the simulator's RunResult)."""
    run = prepare_on_iss(launch, inputs, order=order, memory=memory)
    result = run.simulator.run(run.events)
    if result.errors:
        raise RuntimeError(f"{launch.kernel.name}: {result.errors[0]}")
    return run.outputs(), result


def run_op_on_iss(name, problem, inputs, *, orders=None, partials=None, **params):
    """Run op ``name``'s phases one after the other on one memory image (each phase a
    fresh engine: its entry is programmed after the previous one completed); returns
    ({tensor name: array} of every tensor a phase wrote, [RunResult per phase]).
    ``orders`` gives a trigger order per phase (None: address order); ``params`` go to
    every phase that takes them."""
    spec = op(name)
    launches = []
    for phase in spec.kernels:
        own = {key: value for key, value in params.items() if key in {p.name for p in phase.params}}
        launches.append(phase.launch(problem, partials=partials if phase.ordered else None, **own))
    unused = set(params) - {p.name for phase in spec.kernels for p in phase.params}
    if unused:
        raise LibraryError(f"op {name} has no parameter {', '.join(sorted(unused))}")
    sizes = {}
    for launch in launches:
        for tensor in launch.tensors:
            sizes[tensor.name] = max(sizes.get(tensor.name, 0), launch.allocation(tensor.name))
    memory = Memory(sum(sizes.values()) + SECTOR_BYTES)
    written, results = {}, []
    for position, launch in enumerate(launches):
        order = None if orders is None else orders[position]
        outputs, result = run_on_iss(launch, inputs, order=order, memory=memory)
        written.update(outputs)
        results.append(result)
    return written, results
