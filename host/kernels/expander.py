"""The memory expander's kernels: K GPUs' gradients of a tensor reduced as they arrive,
then the optimizer step beside its state (docs/ndpxnet-rtl.md).

Each GPU ``k`` writes its gradient into its own copy ``grad[k]``; the K copies lie one after
the other, ``copy_bytes`` apart, so one ordered filter entry watches all of them. Each
sector of a copy has an arrival record in the scratchpad, one sector with lane ``k`` for
GPU ``k``. A write's µthread records its sequence number ``SEQ`` in its lane
(``samomax`` of a vector holding ``SEQ`` in lane ``k`` and −∞ elsewhere, marked ``.r``: the
entry's ticket passes on as the atomic leaves, so no arrival waits for another's load) and
loads the record back (a µthread's plain scratchpad loads wait for its own atomics). Atomics
are applied in trigger order, so the load sees every earlier arrival's lane; the last of
the K arrivals, and only it, finds all K lanes recorded and its own ``SEQ`` the largest (an
earlier arrival finds either a lane still −∞ or a later ``SEQ``). It loads the other K − 1
copies of its sector from memory and sums the K in GPU-index order,
((g0 + g1) + g2) + …, its own from the write's data. Whatever the order and timing of the K
writes, the sum is the same.

``library/expander_sum.s`` is that reduction, storing the sum. The optimizer kernels
(:func:`reduction_source`) are it with the library optimizer's ``.main`` in place of the
store: the library's own instructions, with the sum in place of ``DATA`` and the sector's
offset within one copy in place of ``OFFSET``, so an optimizer's order of operations is
written once. :class:`ReductionLaunch` gives what the runtime programs for one tensor: the
placement, the argument words, the expected count and the arrival records' initial
contents.
"""

from dataclasses import dataclass
import functools
import re

import numpy as np

from matndp.hw.engine.isa import ARGUMENT_WORDS, Instruction, OperandKind, OperandType
from matndp.host.kernels.assembler import assemble
from matndp.host.kernels.image import Section, section_ranges
from matndp.host.kernels.divisor import divisor_descriptor
from matndp.host.kernels.library import (LANES, SECTOR_BYTES, LibraryError, kernel as library_kernel,
                                         library_source)
from matndp.host.kernels.library.inputs import random_inputs
from matndp.host.kernels.library.sources import read_include


__all__ = ["OPTIMIZERS", "MAX_GPUS", "SUM_KERNEL", "KERNELS", "reduction_source", "reduction_image",
           "ReductionLaunch", "arrival_bytes", "run_on_iss"]


OPTIMIZERS = ("sgd_momentum", "adam", "adamw")
# An arrival record is one scratchpad sector, a lane per GPU.
MAX_GPUS = LANES
# The reduction alone; each optimizer kernel is it with the optimizer's .main in place of
# its store of the sum.
SUM_KERNEL = "sum"
KERNELS = (SUM_KERNEL, *OPTIMIZERS)
_SUM_SOURCE = "expander_sum.s"
_SUM_STORE = re.compile(r"^\s*vstm\.x\s+\[x2 \+ SUM\], v12\s*$")
# Registers the reduction keeps live into the optimizer: the sum and the offset in a copy,
# and its other scalars and vectors.
_SUM_REGISTER, _OFFSET_REGISTER = "v12", "x2"
_REDUCTION_REGISTERS = {(OperandType.SCALAR, index) for index in range(1, 10)} | {
    (OperandType.VECTOR, index) for index in range(10, 15)}


def _split(text):
    """(comment lines of the header, the declarations — the lines between .kernel and
    .main: arguments, included files, macro uses —, .main lines) of a library source."""
    comments, declarations, main, in_main = [], [], [], False
    for line in text.splitlines():
        code = line.split(";", 1)[0].strip()
        if code.startswith(".main"):
            in_main = True
        elif in_main:
            if code.startswith("."):
                raise ValueError(f"{code}: a section after .main")
            if line.strip():
                main.append(line.rstrip())
        elif code and not code.startswith(".kernel"):
            declarations.append(line.rstrip())
        elif not code and line.strip().startswith(";"):
            comments.append(line.strip())
    return comments, declarations, main


def _argument(line, index):
    """An .arg line renumbered to ``index``, its comment kept."""
    code, _, comment = line.partition(";")
    name = code.split()[1]
    text = f".arg {name} {index}"
    return f"{text:<25}; {comment.strip()}" if comment.strip() else text


def _registers(image, section):
    """(type, index) of every register the instructions of ``section`` of ``image`` name."""
    start, end = section_ranges(image)[section]
    found = set()
    for word in image.words[start:end]:
        instruction = Instruction.decode(word)
        spec = instruction.spec
        if spec.writes:
            found.add((spec.rd, instruction.rd))
        for name in ("a", "b", "c"):
            operand = instruction.operand(name)
            if getattr(spec, name) is not OperandType.NONE and operand.kind is OperandKind.REGISTER:
                found.add((getattr(spec, name), operand.index))
    return found


def reduction_source(optimizer):
    """The expander kernel of ``optimizer`` (one of :data:`KERNELS`), as assembly text:
    ``expander_sum.s`` itself for :data:`SUM_KERNEL`, else it with the optimizer's
    ``.main`` (``DATA`` the sum, ``OFFSET`` the offset in a copy) in place of its store of
    the sum, the optimizer's arguments first and the reduction's after them."""
    if optimizer not in KERNELS:
        raise LibraryError(f"no expander kernel for {optimizer!r}; kernels: {', '.join(KERNELS)}")
    reduction = library_source(_SUM_SOURCE)
    if optimizer == SUM_KERNEL:
        return reduction
    _, own_arguments, reduction_main = _split(reduction)
    spec = library_kernel(optimizer)
    comments, declarations, body = _split(library_source(spec.source))
    words = len(spec.image.arguments)
    kept = [line for line in own_arguments if line.split()[1] != "SUM"]
    if words + len(kept) > ARGUMENT_WORDS:
        raise ValueError(f"{optimizer} takes {words} argument words; with the "
                         f"reduction's {len(kept)} they exceed the block's {ARGUMENT_WORDS}")
    clash = _registers(spec.image, Section.MAIN) & _REDUCTION_REGISTERS
    if clash:
        raise ValueError(f"{optimizer}'s .main uses registers the reduction keeps: "
                         f"{', '.join(sorted(f'{kind.value}{index}' for kind, index in clash))}")
    body = [re.sub(r"\bOFFSET\b", _OFFSET_REGISTER, re.sub(r"\bDATA\b", _SUM_REGISTER, line))
            for line in body]
    stores = [n for n, line in enumerate(reduction_main) if _SUM_STORE.match(line.split(";", 1)[0])]
    if len(stores) != 1:
        raise ValueError(f"{_SUM_SOURCE} must store the sum once, as `vstm.x [x2 + SUM], v12`")
    main = reduction_main[:stores[0]] + body + reduction_main[stores[0] + 1:]
    lines = [f".kernel expander_{optimizer}",
             f"; Built from library/{_SUM_SOURCE} and library/{spec.source} (host/kernels/expander.py):",
             f"; the K gradients reduced as they arrive, then {optimizer}'s step on their sum:",
             *comments, *declarations,
             *(_argument(line, index) for index, line in enumerate(kept, start=words)),
             "", ".main", *main]
    return "\n".join(lines) + "\n"


@functools.cache
def reduction_image(optimizer):
    """The assembled expander kernel of ``optimizer``."""
    return assemble(reduction_source(optimizer), filename=f"expander_{optimizer}", include=read_include)


def arrival_bytes(copy_bytes):
    """Scratchpad bytes of the arrival records of a tensor of ``copy_bytes`` per copy: a
    sector per sector of a copy."""
    return -(-copy_bytes // SECTOR_BYTES) * SECTOR_BYTES


@dataclass(frozen=True)
class ReductionLaunch:
    """One gradient tensor of ``elements`` FP32 values reduced over ``ports`` GPUs by
    kernel ``optimizer`` (one of :data:`KERNELS`) with ``params`` (the library
    optimizer's, PyTorch's names; none for :data:`SUM_KERNEL`)."""
    optimizer: str
    elements: int
    ports: int
    params: dict = None

    def __post_init__(self):
        if self.optimizer not in KERNELS:
            raise LibraryError(f"no expander kernel for {self.optimizer!r}; kernels: "
                               f"{', '.join(KERNELS)}")
        for name in ("elements", "ports"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LibraryError(f"{name} must be a positive integer, not {value!r}")
        if self.ports < 2:
            raise LibraryError(f"an expander reduces over at least 2 GPUs, not {self.ports}")
        if self.ports > MAX_GPUS:
            raise LibraryError(f"an arrival record has a lane per GPU: at most {MAX_GPUS} GPUs, "
                               f"not {self.ports}")
        if self.copy_bytes * self.ports > 1 << 32:
            raise LibraryError(f"{self.ports} copies of {self.copy_bytes} bytes exceed the 32-bit "
                               f"offsets divc/remc divide")
        if self.optimizer == SUM_KERNEL and self.params:
            raise LibraryError(f"the sum takes no parameters, not {', '.join(self.params)}")
        if self.optimizer != SUM_KERNEL:
            self.optimizer_launch.validate_parameters()

    @property
    def optimizer_launch(self):
        """The library optimizer's launch on one copy (its tensors, parameters, goldens);
        None for the sum."""
        if self.optimizer == SUM_KERNEL:
            return None
        return library_kernel(self.optimizer).launch({"elements": self.elements}, **(self.params or {}))

    @property
    def copy_bytes(self):
        """Bytes of one GPU's copy of the gradient: whole sectors."""
        return -(-self.elements * 4 // SECTOR_BYTES) * SECTOR_BYTES

    @property
    def grad_bytes(self):
        """Bytes the filter entry watches: the K copies."""
        return self.copy_bytes * self.ports

    @property
    def expected(self):
        """µthreads of the entry: every sector of every copy."""
        return self.grad_bytes // SECTOR_BYTES

    @property
    def scratchpad_bytes(self):
        return arrival_bytes(self.copy_bytes)

    def input_tensors(self):
        """Tensors placed before the step: the optimizer's weights and state."""
        return () if self.optimizer == SUM_KERNEL else self.output_tensors()

    def output_tensors(self):
        """Tensors read back after the step: the weights and state, or the sum."""
        if self.optimizer == SUM_KERNEL:
            return ("sum",)
        return tuple(t.name for t in self.optimizer_launch.tensors if t.name != "grad")

    def arguments(self, addresses, arrivals):
        """The 16 argument words: ``addresses`` of the tensors ({name: byte address};
        ``grad`` the first copy's), the arrival records at scratchpad address ``arrivals``."""
        if self.optimizer == SUM_KERNEL:
            words = [0] * ARGUMENT_WORDS
            own = {"SUM": addresses["sum"]}
        else:
            words = list(self.optimizer_launch.arguments(addresses))
            own = {}
        own.update(COPY=divisor_descriptor(self.copy_bytes, self.grad_bytes - 1).word,
                   ARRIVALS=arrivals, PORTS=self.ports)
        declared = reduction_image(self.optimizer).arguments
        for name, value in own.items():
            words[declared[name]] = value
        return tuple(words)

    def layout(self, base):
        """({tensor name: byte address}, end): the K gradient copies from ``base`` (``grad``
        names the first), then the other tensors, each a copy's size."""
        if base % SECTOR_BYTES:
            raise LibraryError(f"base {base:#x} is not a sector address")
        addresses = {"grad": base}
        address = base + self.grad_bytes
        for name in self.output_tensors():
            addresses[name] = address
            address += self.copy_bytes
        return addresses, address

    def random_inputs(self, seed):
        """(the K gradients, {input tensor: values}) from ``seed``: the library's random
        inputs of the optimizer, the gradient drawn once per GPU."""
        launch = self.optimizer_launch or library_kernel("sgd_momentum").launch({"elements": self.elements})
        values = random_inputs(launch, seed)
        state = {name: values[name] for name in self.input_tensors()}
        grads = [random_inputs(launch, seed + 1 + gpu)["grad"] for gpu in range(self.ports)]
        return grads, state

    def sector_writes(self, grad):
        """One GPU's writes of its gradient ``grad`` (of any shape, its values in C order):
        (byte offset in its copy, the sector's bytes, byte enables) in address order; the
        last sector of a ragged tensor enables its valid bytes only."""
        raw = np.zeros(self.copy_bytes, dtype=np.uint8)
        values = np.ascontiguousarray(grad, dtype=np.float32).reshape(-1).view(np.uint8)
        if values.size != self.elements * 4:
            raise LibraryError(f"a gradient of {self.elements} elements, not {values.size // 4}")
        raw[:values.size] = values
        full = (1 << SECTOR_BYTES) - 1
        writes = []
        for offset in range(0, self.copy_bytes, SECTOR_BYTES):
            valid = min(SECTOR_BYTES, values.size - offset)
            writes.append((offset, bytes(raw[offset:offset + SECTOR_BYTES]),
                           full if valid == SECTOR_BYTES else (1 << valid) - 1))
        return writes

    def initial_arrivals(self):
        """The arrival records' scratchpad bytes before the first write: in each record −∞
        in the K GPUs' lanes (nothing recorded) and +0 in the others, which no ``SEQ``
        (a non-negative integer, as FP32 bits) is below."""
        records = np.zeros((self.scratchpad_bytes // SECTOR_BYTES, LANES), dtype=np.float32)
        records[:, :self.ports] = -np.inf
        return records.reshape(-1).view(np.uint8)


def run_on_iss(launch, grads, state, order, *, base=0x1000, batch=None):
    """Run ``launch`` on the instruction-set simulator: GPU ``k`` writes ``grads[k]``, the
    writes arriving in ``order`` ((gpu, sector index) pairs); returns ({output tensor:
    values after the step}, the simulator's RunResult). The records' loads are races to
    the simulator (a plain load of a sector later µthreads' atomics update); they are
    allowed, since a load that sees a later arrival's lane finds a larger ``SEQ`` than its
    own and leaves the sector to that arrival, as it would had it run first. Every other
    race is refused. ``batch`` (default the simulator's) is how many µthreads run
    together: 1 runs each to completion before the next starts, so no record load sees a
    later arrival; a batch of every write, all records' atomics before any of their
    loads."""
    from matndp.host.kernels.iss import FilterEntry, InstructionSetSimulator, IssConfig, TriggerEvents
    from matndp.host.kernels.memory import Memory
    addresses, end = launch.layout(base)
    memory = Memory(end - base + SECTOR_BYTES, base=base)
    for name, values in state.items():
        memory.write(addresses[name], np.ascontiguousarray(values, dtype=np.float32))
    records = 0
    config = IssConfig(scratchpad_bytes=max(launch.scratchpad_bytes, SECTOR_BYTES), watchdog=1 << 20,
                       **({} if batch is None else {"batch": batch}))
    entry = FilterEntry(base, launch.grad_bytes, reduction_image(launch.optimizer),
                        launch.arguments(addresses, records), expected=launch.expected)
    simulator = InstructionSetSimulator(memory, [entry], config)
    simulator.scratchpad[records:records + launch.scratchpad_bytes] = launch.initial_arrivals()
    writes = [launch.sector_writes(grad) for grad in grads]
    data, masks, addrs = [], [], []
    for gpu, sector in order:
        offset, sector_data, mask = writes[gpu][sector]
        addrs.append(base + gpu * launch.copy_bytes + offset)
        data.append(np.frombuffer(sector_data, dtype=np.uint8))
        masks.append([(mask >> bit) & 1 for bit in range(SECTOR_BYTES)])
    events = TriggerEvents(np.zeros(len(order)), addrs, np.array(data), np.array(masks, dtype=bool),
                           np.ones(len(order), dtype=bool))
    result = simulator.run(events, allow_races=True)
    for race in result.races:
        if race.space != "scratchpad" or not records <= race.address < records + launch.scratchpad_bytes:
            raise RuntimeError(f"expander_{launch.optimizer}: {simulator.describe_race(race)}")
    if result.errors:
        raise RuntimeError(f"expander_{launch.optimizer}: {result.errors[0]}")
    outputs = {}
    for name in launch.output_tensors():
        outputs[name] = memory.read(addresses[name], np.float32, launch.elements)
    return outputs, result
