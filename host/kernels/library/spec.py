"""What the library knows of a kernel, and a kernel applied to one problem.

A :class:`KernelSpec` is a library kernel: its assembly source, its tensors (name, role,
dtype, elements for a problem size), its parameters (PyTorch's names for the optimizers),
the tensor whose accesses trigger it and whether by writes or reads, the regions of
scratchpad it needs, and how its argument words get their values. What a kernel costs
per triggering sector (instructions, extra memory and scratchpad accesses) and whether it
is ordered (uses scratchpad atomics) come from its assembled image.

:meth:`KernelSpec.launch` turns a kernel and a problem into a :class:`KernelLaunch`: the
tensors to place (and their padded sizes), the argument block for given addresses, the
triggering accesses (sector offsets and byte enables) and their expected count, and the
tensors to read back. An op the host can offload is an :class:`OpSpec`: one kernel, or
phases run one after the other whose intermediate tensors (``internal``) pass through
memory.

A kernel's arguments are declared once, by the ``.arg`` lines of its source; each gets its
value by its name (:meth:`KernelLaunch.arguments`): a tensor's name in upper case is the
tensor's address, a scratchpad region's name its address, a float parameter's name in upper
case its value as FP32, a name of :data:`~.constants.CONSTANTS` that constant; the kernel's
``values`` give the rest (sizes, divisor descriptors, scalars derived from parameters).
"""

import enum
import math
import re
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from matndp.hw.config import NDPConfig
from matndp.hw.engine.isa import ARGUMENT_WORDS, Instruction, Unit
from matndp.host.kernels.divisor import divisor_descriptor
from matndp.host.kernels.image import Section, section_ranges
from matndp.host.kernels.library.constants import CONSTANTS
from matndp.host.kernels.library.sources import library_image


__all__ = ["SECTOR_BYTES", "LANES", "LibraryError", "DType", "Role", "Access", "TensorSpec",
           "Kind", "ParamSpec", "Region", "KernelSpec", "KernelLaunch", "Binding", "OpSpec"]


# The library is written for the slice's sectors: 8 FP32 (16 BF16) elements each.
SECTOR_BYTES = NDPConfig().sector_bytes
LANES = NDPConfig().lanes
_MASK64 = (1 << 64) - 1


class LibraryError(ValueError):
    """A request the library cannot serve: an unknown kernel or parameter, a shape the
    kernel does not support, a missing tensor address."""


class DType(enum.Enum):
    """Element types of library tensors; BF16 tensors are held as uint16 bit patterns."""
    FP32 = "fp32"
    BF16 = "bf16"
    U8 = "uint8"

    @property
    def itemsize(self):
        return {"fp32": 4, "bf16": 2, "uint8": 1}[self.value]

    @property
    def numpy(self):
        return np.dtype({"fp32": np.float32, "bf16": np.uint16, "uint8": np.uint8}[self.value])


class Role(enum.Enum):
    """What the kernel does with a tensor."""
    INPUT = "input"       # read
    OUTPUT = "output"     # written (the finalizer's results included)
    STATE = "state"       # read and written in place


class Access(enum.Enum):
    """The GPU access to the trigger tensor that starts a µthread."""
    WRITE = "write"
    READ = "read"


# How a summary names the triggering access: "... on the producer's writes of x",
# "... on reads of y", "... on the writes of a new gradient x" (the last word is the tensor).
_SUMMARY_TRIGGER = re.compile(r"\b(reads|writes) of (?:[\w' ]+? )?(\w+)(?:,|$)")


def summary_naming(summary, trigger):
    """``summary`` with the tensor of its triggering access (if it names one) ``trigger``."""
    named = _SUMMARY_TRIGGER.search(summary)
    return summary if named is None else summary[:named.start(2)] + trigger + summary[named.end(2):]


@dataclass(frozen=True)
class TensorSpec:
    """A tensor of a kernel.

    extent:   elements for a problem (a mapping of the kernel's dims to ints).
    layout:   how the elements are laid out, for the documentation.
    internal: passed between the phases of an op, not one of PyTorch's tensors.
    row_sectors: for per-row broadcast tensors, the sectors per row (each the same FP32
              value in every lane: a row's value is read as a whole sector); else 0.
    """
    name: str
    role: Role
    dtype: DType
    extent: object
    layout: str
    internal: bool = False
    row_sectors: int = 0

    def elements(self, problem):
        return int(self.extent(problem))


class Kind(enum.Enum):
    """What a parameter holds."""
    FLOAT = "float"
    BOOL = "bool"
    COUNT = "count"       # a positive integer


@dataclass(frozen=True)
class ParamSpec:
    """A scalar parameter of a kernel."""
    name: str
    default: object
    doc: str
    kind: Kind = Kind.FLOAT

    def resolve(self, kernel, value):
        """``value`` checked for this parameter (a clear LibraryError otherwise)."""
        if self.kind is Kind.BOOL:
            if not isinstance(value, (bool, np.bool_)):
                raise LibraryError(f"{kernel}: {self.name} must be a bool, not {value!r}")
            return bool(value)
        if self.kind is Kind.COUNT:
            return positive_int(kernel, self.name, value)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)) \
                or not math.isfinite(float(value)):
            raise LibraryError(f"{kernel}: {self.name} must be a finite number, not {value!r}")
        return float(value)


@dataclass(frozen=True)
class Region:
    """A part of a kernel's scratchpad: the argument of this name holds its address.
    ``size`` is a function (problem, partials) -> bytes, a multiple of the sector."""
    name: str
    size: object


def _unit_of(word):
    return Instruction.decode(word).spec.unit


@dataclass(frozen=True)
class KernelSpec:
    """One library kernel (see the module docstring).

    source:            its file in host/kernels/library/ (kernels may share one).
    dims:              the names of the problem's sizes.
    trigger, access:   the tensor whose accesses start µthreads, and which accesses.
    values:            {argument name: function of a :class:`Binding` giving its word}
                       for the arguments no naming rule fills (see the module docstring).
    scratchpad:        the :class:`Region` s of its scratchpad, in address order.
    partials:          function problem -> the number of partials K each accumulator of
                       its reductions is split into (1 for kernels without), see
                       docs/kernels.md.
    init_threads:      function (problem, partials) -> the µthreads its initializer runs
                       as, SEQ 0, 1, … (one per sector it clears or copies; 1 for kernels
                       without).
    final_threads:     function problem -> the µthreads its finalizer runs as, SEQ 0, 1, …
                       (one per channel group or row it finishes; 1 for kernels without).
    order:             the operation order, as docs/kernels.md states it.
    order_independent: whether the outputs are the same bits under any trigger order.
    ragged:            whether the trigger tensor may end in a partial sector.
    check:             function problem -> None, raising LibraryError for shapes the
                       kernel does not support.
    check_params:      function (kernel name, parameters) -> None, raising LibraryError
                       for parameter values it does not support.
    """
    name: str
    source: str
    summary: str
    dims: tuple
    tensors: tuple
    params: tuple
    trigger: str
    access: Access
    order: str
    values: object = field(default_factory=dict, hash=False)
    scratchpad: tuple = ()
    order_independent: bool = True
    ragged: bool = False
    partials: object = lambda problem: 1
    init_threads: object = lambda problem, partials: 1
    final_threads: object = lambda problem: 1
    check: object = lambda problem: None
    check_params: object = lambda name, params: None

    def __post_init__(self):
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))
        names = [t.name for t in self.tensors]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: tensor names repeat")
        if self.trigger not in names:
            raise ValueError(f"{self.name}: the trigger {self.trigger!r} is not one of its tensors")
        # The listing and the docs print the summary beside the trigger: they must agree.
        named = _SUMMARY_TRIGGER.search(self.summary)
        if named and (named[1], named[2]) != (f"{self.access.value}s", self.trigger):
            raise ValueError(f"{self.name}: the summary names {named[1]} of {named[2]}, the "
                             f"kernel triggers on {self.access.value}s of {self.trigger}")
        regions = [region.name for region in self.scratchpad]
        if len(set(regions)) != len(regions):
            raise ValueError(f"{self.name}: scratchpad region names repeat")
        rules = self.rules()
        for name in self.values:
            if name in rules:
                raise ValueError(f"{self.name}: a value for {name} hides its naming rule "
                                 f"({rules[name]})")

    # What the assembled image says --------------------------------------------------------

    @property
    def image(self):
        return library_image(self.source)

    @property
    def sections(self):
        return tuple(section for section in Section if section in self.image.sections)

    @property
    def ordered(self):
        """Whether its µthreads take the entry's ordering ticket (scratchpad atomics)."""
        return self.image.uses_atomics

    def _main_units(self):
        start, end = section_ranges(self.image)[Section.MAIN]
        words = self.image.words[start:end]
        units = [_unit_of(word) for word in words]
        if Unit.BRANCH in units:
            raise ValueError(f"{self.name}: .main must be straight-line so that every sector "
                             f"runs the same instructions")
        return words, units

    @property
    def instructions_per_sector(self):
        """Instructions a triggering sector executes (.main is straight-line)."""
        return len(self._main_units()[0])

    @property
    def memory_accesses_per_sector(self):
        """Memory accesses of one µthread besides the triggering one (loads and stores)."""
        return self._main_units()[1].count(Unit.MEMORY)

    @property
    def scratchpad_accesses_per_sector(self):
        return self._main_units()[1].count(Unit.SCRATCHPAD)

    @property
    def trigger_spec(self):
        return self.tensor(self.trigger)

    @property
    def elements_per_sector(self):
        return SECTOR_BYTES // self.trigger_spec.dtype.itemsize

    def describe(self):
        """The kernel's metadata as plain data (names, counts, flags)."""
        return {"name": self.name, "source": self.source, "summary": self.summary,
                "dims": list(self.dims), "trigger": self.trigger, "access": self.access.value,
                "trigger_dtype": self.trigger_spec.dtype.value,
                "elements_per_sector": self.elements_per_sector,
                "instructions_per_sector": self.instructions_per_sector,
                "memory_accesses_per_sector": self.memory_accesses_per_sector,
                "scratchpad_accesses_per_sector": self.scratchpad_accesses_per_sector,
                "ordered": self.ordered, "order_independent": self.order_independent,
                "ragged": self.ragged, "sections": [s.value for s in self.sections],
                "tensors": [{"name": t.name, "role": t.role.value, "dtype": t.dtype.value,
                             "layout": t.layout, "internal": t.internal} for t in self.tensors],
                "params": [{"name": p.name, "default": p.default, "kind": p.kind.value,
                            "doc": p.doc} for p in self.params],
                "order": self.order}

    def tensor(self, name):
        for spec in self.tensors:
            if spec.name == name:
                return spec
        raise LibraryError(f"kernel {self.name} has no tensor {name!r}; it has "
                           f"{', '.join(t.name for t in self.tensors)}")

    def rules(self):
        """{argument name: what fills it} of the names the naming rules give a value."""
        named = [(t.name.upper(), f"the address of tensor {t.name}") for t in self.tensors]
        named += [(region.name, "a scratchpad region") for region in self.scratchpad]
        named += [(p.name.upper(), f"parameter {p.name}") for p in self.params if p.kind is Kind.FLOAT]
        named += [(name, "a library constant") for name in CONSTANTS]
        rules = {}
        for name, what in named:
            if name in rules:
                raise ValueError(f"{self.name}: argument name {name} is both {rules[name]} and {what}")
            rules[name] = what
        return rules

    # Launches ------------------------------------------------------------------------------

    def launch(self, problem, partials=None, **params):
        """A :class:`KernelLaunch` of this kernel for ``problem`` ({dim: size}) and
        ``params`` (defaults filled in); ``partials`` overrides the number of partials."""
        problem = _checked_problem(self, problem)
        resolved = {}
        unknown = sorted(set(params) - {p.name for p in self.params})
        if unknown:
            raise LibraryError(f"kernel {self.name} has no parameter {', '.join(unknown)}; its "
                               f"parameters: {', '.join(p.name for p in self.params) or 'none'}")
        for spec in self.params:
            resolved[spec.name] = spec.resolve(self.name, params.get(spec.name, spec.default))
        if partials is None:
            partials = self.partials(problem)
        partials = positive_int(self.name, "partials", partials)
        launch = KernelLaunch(self, MappingProxyType(problem), MappingProxyType(resolved), partials)
        launch.validate_parameters()
        return launch


def positive_int(kernel, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise LibraryError(f"{kernel}: {name} must be a positive integer, not {value!r}")
    return int(value)


def _checked_problem(spec, problem):
    if not isinstance(problem, dict) and not hasattr(problem, "keys"):
        raise LibraryError(f"kernel {spec.name}: the problem is a mapping of "
                           f"{', '.join(spec.dims)} to sizes, not {problem!r}")
    problem = dict(problem)
    if set(problem) != set(spec.dims):
        raise LibraryError(f"kernel {spec.name} is sized by {', '.join(spec.dims)}, not "
                           f"{', '.join(sorted(problem)) or 'nothing'}")
    for name in spec.dims:
        problem[name] = positive_int(spec.name, name, problem[name])
    spec.check(problem)
    per_sector = spec.elements_per_sector
    extent = spec.trigger_spec.elements(problem)
    if not spec.ragged and extent % per_sector:
        raise LibraryError(f"kernel {spec.name}: its trigger tensor {spec.trigger!r} must fill "
                           f"whole sectors ({per_sector} elements), not {extent}")
    nbytes = extent * spec.trigger_spec.dtype.itemsize
    if nbytes >= 1 << 32:
        raise LibraryError(f"kernel {spec.name}: {nbytes} bytes of {spec.trigger!r} exceed the "
                           f"32-bit offsets divc/remc divide")
    return problem


@dataclass(frozen=True)
class KernelLaunch:
    """A kernel applied to one problem: what to place, program, trigger and read back."""
    kernel: KernelSpec
    problem: MappingProxyType
    params: MappingProxyType
    partials: int

    def validate_parameters(self):
        self.kernel.check_params(self.kernel.name, self.params)

    # Tensors -----------------------------------------------------------------------------

    @property
    def tensors(self):
        return self.kernel.tensors

    def elements(self, name):
        return self.kernel.tensor(name).elements(self.problem)

    def nbytes(self, name):
        spec = self.kernel.tensor(name)
        return spec.elements(self.problem) * spec.dtype.itemsize

    def allocation(self, name):
        """Bytes to reserve for tensor ``name`` (sector-aligned): whole sectors, and for
        tensors indexed like the trigger, as many elements as the trigger's sectors hold
        (a kernel may write the padding of the last sector of such a tensor)."""
        spec = self.kernel.tensor(name)
        elements = spec.elements(self.problem)
        trigger = self.kernel.trigger_spec
        if spec.extent is trigger.extent:
            per_sector = self.kernel.elements_per_sector
            elements = -(-elements // per_sector) * per_sector
        return -(-elements * spec.dtype.itemsize // SECTOR_BYTES) * SECTOR_BYTES

    @property
    def inputs(self):
        """Tensors the runner places before the kernel runs (inputs and states)."""
        return tuple(t.name for t in self.tensors if t.role is not Role.OUTPUT)

    @property
    def outputs(self):
        """Tensors to read back afterwards (outputs and states)."""
        return tuple(t.name for t in self.tensors if t.role is not Role.INPUT)

    # Triggering --------------------------------------------------------------------------

    @property
    def trigger(self):
        return self.kernel.trigger

    @property
    def access(self):
        return self.kernel.access

    @property
    def expected_triggers(self):
        """µthreads the entry expects (its finalizer runs after this many)."""
        return -(-self.nbytes(self.trigger) // SECTOR_BYTES)

    def trigger_access_columns(self):
        """The triggering sector accesses as two uint64 columns, in address order: byte
        offset in the trigger tensor and byte-enable mask; the last sector of a ragged
        tensor enables its valid bytes only."""
        nbytes = self.nbytes(self.trigger)
        offsets = np.arange(0, nbytes, SECTOR_BYTES, dtype=np.uint64)
        masks = np.full(len(offsets), (1 << SECTOR_BYTES) - 1, dtype=np.uint64)
        ragged = nbytes % SECTOR_BYTES
        if ragged:
            masks[-1] = (1 << ragged) - 1
        return offsets, masks

    def trigger_accesses(self):
        """(byte offset in the trigger tensor, byte-enable mask) of each triggering sector
        access, as :meth:`trigger_access_columns`, in Python ints."""
        offsets, masks = self.trigger_access_columns()
        return list(zip(offsets.tolist(), masks.tolist()))

    # Scratchpad and arguments ------------------------------------------------------------

    def regions(self, base=0):
        """{region name: its scratchpad address} for the kernel's scratchpad at ``base``."""
        addresses, address = {}, base
        for region in self.kernel.scratchpad:
            addresses[region.name] = address
            address += int(region.size(self.problem, self.partials))
        return addresses

    @property
    def scratchpad_bytes(self):
        return sum(int(region.size(self.problem, self.partials)) for region in self.kernel.scratchpad)

    @property
    def ordered(self):
        return self.kernel.ordered

    @property
    def init_threads(self):
        """µthreads the entry's initializer runs as (SEQ 0, 1, …)."""
        return positive_int(self.kernel.name, "init_threads",
                            self.kernel.init_threads(self.problem, self.partials))

    @property
    def final_threads(self):
        """µthreads the entry's finalizer runs as (SEQ 0, 1, …)."""
        return positive_int(self.kernel.name, "final_threads", self.kernel.final_threads(self.problem))

    def arguments(self, addresses, scratchpad_base=0):
        """The 16 argument words for tensors at ``addresses`` ({name: byte address}) and
        the kernel's scratchpad at ``scratchpad_base``: each argument the source declares,
        filled by its name (see the module docstring)."""
        binding = Binding(self, addresses, scratchpad_base)
        words = [0] * ARGUMENT_WORDS
        for name, index in self.kernel.image.arguments.items():
            words[index] = int(binding.value(name)) & _MASK64
        return tuple(words)


class Binding:
    """A launch with its tensors' addresses and its scratchpad's base: what an argument's
    value is computed from (:meth:`value`), with helpers for the kernels' ``values``."""

    def __init__(self, launch, addresses, scratchpad_base):
        self.launch, self.problem, self.params = launch, launch.problem, launch.params
        self.partials = launch.partials
        self._addresses = dict(addresses)
        if scratchpad_base < 0 or scratchpad_base % SECTOR_BYTES:
            raise LibraryError(f"scratchpad base {scratchpad_base:#x} is not a sector address")
        self._regions = launch.regions(scratchpad_base)

    def value(self, name):
        """The word of argument ``name``."""
        kernel = self.launch.kernel
        if name in kernel.values:
            return kernel.values[name](self)
        tensor = name.lower()
        if any(t.name == tensor for t in kernel.tensors):
            return self.address(tensor)
        if name in self._regions:
            return self._regions[name]
        for param in kernel.params:
            if param.kind is Kind.FLOAT and param.name.upper() == name:
                return self.f32(self.params[param.name])
        if name in CONSTANTS:
            return CONSTANTS[name]
        raise LibraryError(f"kernel {kernel.name}: nothing gives argument {name} its value (not "
                           f"a tensor, scratchpad region, float parameter or library constant, "
                           f"and not among the kernel's values)")

    def address(self, name):
        self.launch.kernel.tensor(name)
        if name not in self._addresses:
            raise LibraryError(f"kernel {self.launch.kernel.name}: no address for tensor {name!r}")
        address = int(self._addresses[name])
        if address < 0 or address % SECTOR_BYTES:
            raise LibraryError(f"tensor {name!r} at {address:#x} is not sector-aligned")
        return address

    def row_descriptor(self, dim, rows=1):
        """Divisor descriptor dividing any OFFSET of the trigger tensor by the bytes of
        ``rows`` rows of ``dim`` trigger elements (OFFSET ÷ it = the row, OFFSET mod it =
        the bytes into the row)."""
        divisor = self.launch.kernel.trigger_spec.dtype.itemsize * self.problem[dim] * rows
        limit = max(self.launch.expected_triggers * SECTOR_BYTES - 1, 0)
        return divisor_descriptor(divisor, limit).word

    @staticmethod
    def f32(value):
        return int(np.float32(value).view(np.uint32))

    @staticmethod
    def flag(value):
        return int(bool(value))


@dataclass(frozen=True)
class OpSpec:
    """An op the host model can place on NDP: one kernel, or phases run one after the
    other (each phase's entry programmed when the previous one completed), sharing tensors
    by name; ``internal`` tensors pass between phases through memory."""
    name: str
    kernels: tuple
    summary: str

    @property
    def phases(self):
        """The names of its kernels, in order."""
        return tuple(spec.name for spec in self.kernels)

    @property
    def tensors(self):
        """Every tensor of the op, first occurrence first (the phases' roles merged)."""
        seen = {}
        for spec in self.kernels:
            for tensor in spec.tensors:
                seen.setdefault(tensor.name, tensor)
        return tuple(seen.values())

    @property
    def instructions_per_sector(self):
        return tuple(spec.instructions_per_sector for spec in self.kernels)
