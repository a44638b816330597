"""The memory expander's kernels: K GPUs' gradients of a tensor reduced as they arrive,
then the optimizer step beside its state (docs/ndpxnet-rtl.md).

Each GPU ``k`` writes its gradient into its own copy ``grad[k]``; the K copies lie
``copy_stride`` bytes apart (a power of two), so one filter entry watches all of them and
the trigger's arrival-gathering table (docs/trigger.md, "Arrival gathering") counts each
sector's K writes: only the K-th starts a µthread. That µthread loads the other K − 1
copies of its sector and sums the K in GPU-index order, ((g0 + g1) + g2) + …, its own
from the write's data. Which write completes a sector changes nothing: the sum's order is
the GPU index.

The reduction is generated per K (:func:`sum_source`): straight-line code for each
``k``, chosen once, so a µthread runs no loop. The optimizer kernels
(:func:`reduction_source`) are it with the library optimizer's ``.main`` in place of the
store of the sum: the library's own instructions, with the sum in place of ``DATA`` and
the sector's offset within one copy in place of ``OFFSET``, so an optimizer's order of
operations is written once. :class:`ReductionLaunch` gives what the runtime programs for
one tensor: the placement, the argument words, the expected count and the gathering.
"""

from dataclasses import dataclass
import functools
import re

import numpy as np

from matndp.hw.engine.isa import ARGUMENT_WORDS, Instruction, OperandKind, OperandType
from matndp.hw.trigger.gather import MAX_GATHER_PORTS
from matndp.host.kernels.assembler import assemble
from matndp.host.kernels.image import Section, section_ranges
from matndp.host.kernels.library import (SECTOR_BYTES, LibraryError, kernel as library_kernel,
                                         library_source)
from matndp.host.kernels.library.inputs import random_inputs
from matndp.host.kernels.library.sources import read_include
from matndp.host.runtime import Gathering


__all__ = ["OPTIMIZERS", "MAX_GPUS", "SUM_KERNEL", "KERNELS", "sum_source", "reduction_source",
           "reduction_image", "ReductionLaunch", "run_on_iss"]


OPTIMIZERS = ("sgd_momentum", "adam", "adamw")
# The sectors of copies 0, 2, 4, 6 (copy 2m + 1 is COPY bytes above copy 2m's): as many
# pointers as the reduction's registers leave, so K ≤ 8 (the table counts up to 16).
_POINTERS = ("x7", "x8", "x9", "x4")
MAX_GPUS = min(MAX_GATHER_PORTS, 2 * len(_POINTERS))
# The reduction alone; each optimizer kernel is it with the optimizer's .main in place of
# its store of the sum.
SUM_KERNEL = "sum"
KERNELS = (SUM_KERNEL, *OPTIMIZERS)
_SUM_STORE = "    vstm.x  [x2 + SUM], v12"
# Registers the reduction keeps live into the optimizer: the sum and the offset in a copy,
# and its other scalars and vectors.
_SUM_REGISTER, _OFFSET_REGISTER = "v12", "x2"
_REDUCTION_REGISTERS = {(OperandType.SCALAR, index) for index in range(1, 10)} | {
    (OperandType.VECTOR, index) for index in range(10, 15)}
# Where the other copies' sectors are loaded, in turn; v12 holds the sum.
_LOAD_REGISTERS = ("v10", "v11", "v13", "v14")


def _checked_ports(ports):
    if isinstance(ports, bool) or not isinstance(ports, int) or not 2 <= ports <= MAX_GPUS:
        raise LibraryError(f"an expander reduces over 2 to {MAX_GPUS} GPUs, not {ports!r}")
    return ports


def _copy_address(copy):
    pointer = _POINTERS[copy // 2]
    return f"[{pointer} + COPY]" if copy % 2 else f"[{pointer}]"


def _sum_of(ports, own):
    """The lines summing the K copies in GPU-index order when copy ``own`` is the
    µthread's write (DATA): the other copies' loads go ahead of the additions, as many at
    once as there are load registers, a register loaded again once its addition is issued."""
    pending = [copy for copy in range(ports) if copy != own]
    free, held, lines = list(_LOAD_REGISTERS), {}, []

    def load_ahead():
        while free and pending:
            copy = pending.pop(0)
            held[copy] = free.pop(0)
            lines.append(f"    vld     {held[copy]}, {_copy_address(copy)}")

    def term(copy):
        return "DATA" if copy == own else held[copy]

    def added(*copies):
        free.extend(held.pop(copy) for copy in copies if copy != own)
        load_ahead()

    load_ahead()
    lines.append(f"    vadd    v12, {term(0)}, {term(1)}")
    added(0, 1)
    for copy in range(2, ports):
        lines.append(f"    vadd    v12, v12, {term(copy)}")
        added(copy)
    return lines


def sum_source(ports):
    """The reduction over ``ports`` GPUs (``expander_sum``), as assembly text."""
    ports = _checked_ports(ports)
    lines = [
        ".kernel expander_sum",
        f"; The {ports} GPUs' gradients of one tensor, reduced in the memory expander as they",
        "; arrive (docs/ndpxnet-rtl.md). GPU k writes grad[k]; the copies lie COPY bytes apart",
        "; (a power of two), one entry watching them all; the trigger's gathering table starts",
        "; this kernel on each sector's last write only. It loads the other copies of its sector",
        "; and sums them in GPU-index order, ((g0 + g1) + g2) + …, its own from the write's data,",
        "; whichever write came last. Generated per K (host/kernels/expander.py): one",
        "; straight-line sum per k, chosen once.",
        ".arg SUM 0               ; the reduced gradient",
        ".arg COPY_LOG2 1         ; log2 of COPY: OFFSET >> it = k",
        ".arg COPY_MASK 2         ; COPY − 1: OFFSET & it = the offset in a copy",
        ".arg COPY 3              ; bytes from one copy to the next",
        "",
        ".main",
        "    shr     x1, OFFSET, COPY_LOG2            ; the writing GPU, k",
        "    and     x2, OFFSET, COPY_MASK            ; the sector's offset within a copy",
        "    sub     x7, ADDR, OFFSET",
        "    add     x7, x7, x2                       ; the sector in grad[0]",
    ]
    if ports > 2:
        lines.append(f"{'    shl     x5, COPY, 1':<45}; from one pointer to the next")
    for pair in range(1, (ports + 1) // 2):
        code = f"    add     {_POINTERS[pair]}, {_POINTERS[pair - 1]}, x5"
        lines.append(f"{code:<45}; the sector in grad[{2 * pair}]")
    # k = 0, 1, …, K − 2 branch to their sums; K − 1 falls through to its own.
    for own in range(ports - 1):
        if own == 0:
            lines.append("    beq     x1, x0, own0")
        else:
            lines.append(f"    sub     x3, {'x1' if own == 1 else 'x3'}, 1")
            lines.append(f"    beq     x3, x0, own{own}")
    order = [ports - 1, *range(ports - 1)]
    for position, own in enumerate(order):
        lines.append(f"own{own}:")
        lines += _sum_of(ports, own)
        if position < len(order) - 1:
            lines.append("    jump    summed")
    lines += ["summed:", _SUM_STORE]
    return "\n".join(lines) + "\n"


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


def reduction_source(optimizer, ports):
    """The expander kernel of ``optimizer`` (one of :data:`KERNELS`) over ``ports`` GPUs,
    as assembly text: :func:`sum_source` itself for :data:`SUM_KERNEL`, else it with the
    optimizer's ``.main`` (``DATA`` the sum, ``OFFSET`` the offset in a copy) in place of
    its store of the sum, the optimizer's arguments first and the reduction's after them."""
    if optimizer not in KERNELS:
        raise LibraryError(f"no expander kernel for {optimizer!r}; kernels: {', '.join(KERNELS)}")
    reduction = sum_source(ports)
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
    store = reduction_main.index(_SUM_STORE)
    main = reduction_main[:store] + body + reduction_main[store + 1:]
    lines = [f".kernel expander_{optimizer}",
             f"; Built from the reduction over {ports} GPUs and library/{spec.source} "
             f"(host/kernels/expander.py):",
             f"; the K gradients reduced as they arrive, then {optimizer}'s step on their sum:",
             *comments, *declarations,
             *(_argument(line, index) for index, line in enumerate(kept, start=words)),
             "", ".main", *main]
    return "\n".join(lines) + "\n"


@functools.cache
def reduction_image(optimizer, ports):
    """The assembled expander kernel of ``optimizer`` over ``ports`` GPUs."""
    return assemble(reduction_source(optimizer, ports), filename=f"expander_{optimizer}",
                    include=read_include)


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
            raise LibraryError(f"the reduction keeps a pointer per two copies in its "
                               f"registers: at most {MAX_GPUS} GPUs, not {self.ports}")
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
    def copy_stride(self):
        """Bytes from one GPU's copy to the next: :attr:`copy_bytes` rounded up to a power
        of two, so the gathering table finds a write's copy and sector by a shift and a
        mask of its offset."""
        return 1 << self.copy_log2

    @property
    def copy_log2(self):
        """log2 of :attr:`copy_stride`: a write's copy is its offset shifted right by it."""
        return (self.copy_bytes - 1).bit_length()

    @property
    def grad_bytes(self):
        """Bytes the filter entry watches: the K copies, ``copy_stride`` apart."""
        return self.copy_stride * self.ports

    @property
    def expected(self):
        """µthreads of the entry: one per sector of a copy, started by its K-th write."""
        return self.copy_bytes // SECTOR_BYTES

    def gathering(self, slot):
        """The entry's :class:`~matndp.host.runtime.Gathering`, its slots from ``slot``."""
        return Gathering(self.ports, self.copy_log2, slot)

    def input_tensors(self):
        """Tensors placed before the step: the optimizer's weights and state."""
        return () if self.optimizer == SUM_KERNEL else self.output_tensors()

    def output_tensors(self):
        """Tensors read back after the step: the weights and state, or the sum."""
        if self.optimizer == SUM_KERNEL:
            return ("sum",)
        return tuple(t.name for t in self.optimizer_launch.tensors if t.name != "grad")

    def arguments(self, addresses):
        """The 16 argument words: ``addresses`` of the tensors ({name: byte address};
        ``grad`` the first copy's)."""
        if self.optimizer == SUM_KERNEL:
            words = [0] * ARGUMENT_WORDS
            own = {"SUM": addresses["sum"]}
        else:
            words = list(self.optimizer_launch.arguments(addresses))
            own = {}
        own.update(COPY_LOG2=self.copy_log2, COPY_MASK=self.copy_stride - 1,
                   COPY=self.copy_stride)
        declared = reduction_image(self.optimizer, self.ports).arguments
        for name, value in own.items():
            words[declared[name]] = value
        return tuple(words)

    def layout(self, base):
        """({tensor name: byte address}, end): the K gradient copies from ``base`` (``grad``
        names the first), ``copy_stride`` apart, then the other tensors, each a copy's size."""
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


def run_on_iss(launch, grads, state, order, *, base=0x1000, batch=None):
    """Run ``launch`` on the instruction-set simulator: GPU ``k`` writes ``grads[k]``, the
    writes arriving in ``order`` ((gpu, sector index) pairs), the entry gathering them as
    the trigger's table does; returns ({output tensor: values after the step}, the
    simulator's RunResult). ``batch`` (default the simulator's) is how many events run
    together; any race is refused (the µthreads of a tensor share no sector)."""
    from matndp.host.kernels.iss import FilterEntry, InstructionSetSimulator, IssConfig, TriggerEvents
    from matndp.host.kernels.memory import Memory
    addresses, end = launch.layout(base)
    memory = Memory(end - base + SECTOR_BYTES, base=base)
    for name, values in state.items():
        memory.write(addresses[name], np.ascontiguousarray(values, dtype=np.float32))
    config = IssConfig(watchdog=1 << 20, **({} if batch is None else {"batch": batch}))
    entry = FilterEntry(base, launch.grad_bytes, reduction_image(launch.optimizer, launch.ports),
                        launch.arguments(addresses), expected=launch.expected,
                        gather=launch.gathering(0))
    simulator = InstructionSetSimulator(memory, [entry], config)
    writes = [launch.sector_writes(grad) for grad in grads]
    data, masks, addrs = [], [], []
    for gpu, sector in order:
        offset, sector_data, mask = writes[gpu][sector]
        addrs.append(base + gpu * launch.copy_stride + offset)
        data.append(np.frombuffer(sector_data, dtype=np.uint8))
        masks.append([(mask >> bit) & 1 for bit in range(SECTOR_BYTES)])
    events = TriggerEvents(np.zeros(len(order)), addrs, np.array(data), np.array(masks, dtype=bool),
                           np.ones(len(order), dtype=bool))
    result = simulator.run(events)
    if result.errors:
        raise RuntimeError(f"expander_{launch.optimizer}: {result.errors[0]}")
    outputs = {}
    for name in launch.output_tensors():
        outputs[name] = memory.read(addresses[name], np.float32, launch.elements)
    return outputs, result
