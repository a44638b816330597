"""The NDP kernel library: the one list of kernel names, and everything a runner needs to
use a kernel without knowing it.

Each library kernel is an assembly source in ``host/kernels/library/`` and a
:class:`KernelSpec` here: its tensors (name, role, dtype, elements for a problem size),
its parameters (PyTorch's names for the optimizers), the tensor whose accesses trigger it
and whether by writes or reads, the scratchpad it needs and a function from tensor
addresses, parameters and shape to its 16 argument words. What a kernel costs per
triggering sector (instructions, extra memory and scratchpad accesses) and whether it is
ordered (uses scratchpad atomics) come from its assembled image.

:meth:`KernelSpec.launch` turns a kernel and a problem into a :class:`KernelLaunch`: the
tensors to place (and their padded sizes), the argument block for given addresses, the
triggering accesses (sector offsets and byte enables) and their expected count, and the
tensors to read back. An op the host can offload is an :class:`OpSpec`: one kernel, or a
sequence of kernels (phases) whose intermediate tensors (``internal``) pass through memory,
as batch-norm forward = ``bn_stats`` then ``bn_apply``. :func:`run_on_iss` and
:func:`run_op_on_iss` run launches on the instruction-set simulator.

The library is written for 32-byte sectors (8 FP32 or 16 BF16 elements); docs/kernels.md
describes every kernel (generated table from this module, and the operation orders).
"""

import enum
import functools
import importlib.resources
import math
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np

from matndp.hw.engine.isa import ARGUMENT_WORDS, Instruction, Unit
from matndp.host.kernels.assembler import assemble
from matndp.host.kernels.divisor import divisor_descriptor
from matndp.host.kernels.image import Section, section_ranges


__all__ = ["SECTOR_BYTES", "DType", "Role", "Access", "TensorSpec", "ParamSpec", "KernelSpec",
           "Kind", "OpSpec", "KernelLaunch", "KERNELS", "OPS", "LibraryError", "kernel", "op",
           "library_source", "IssRun", "prepare_on_iss", "run_on_iss", "run_op_on_iss", "EXP_ARGUMENTS", "EXPM1_ARGUMENTS"]


SECTOR_BYTES = 32
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


@dataclass(frozen=True)
class TensorSpec:
    """A tensor of a kernel.

    extent:   elements for a problem (a mapping of the kernel's dims to ints).
    layout:   how the elements are laid out, for the documentation.
    internal: passed between the phases of an op, not one of PyTorch's tensors.
    row_sectors: for per-row broadcast tensors, the sectors per row (each 8 copies of
              one FP32 value: a row's value is read as a whole sector); else 0.
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
            return _positive_int(kernel, self.name, value)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)) \
                or not math.isfinite(float(value)):
            raise LibraryError(f"{kernel}: {self.name} must be a finite number, not {value!r}")
        return float(value)


_ELEMENTS = ("elements",)
_CHANNELS = ("rows", "channels")      # channels innermost: rows = N·H·W (or tokens)
_ROWS = ("rows", "columns")           # the op reduces along a row of `columns`


def _per_element(problem):
    return problem["elements"]


def _matrix(problem):
    return problem["rows"] * (problem["channels"] if "channels" in problem else problem["columns"])


def _per_channel(problem):
    return problem["channels"]


def _per_column(problem):
    return problem["columns"]


def _per_row(problem):
    return problem["rows"]


@functools.cache
def library_source(filename):
    """The text of a library source file."""
    return importlib.resources.files("matndp.host.kernels").joinpath("library", filename).read_text()


@functools.cache
def _image(filename):
    return assemble(library_source(filename), filename=f"library/{filename}")


def _unit_of(word):
    return Instruction.decode(word).spec.unit


@dataclass(frozen=True)
class KernelSpec:
    """One library kernel (see the module docstring).

    source:            its file in host/kernels/library/ (kernels may share one).
    dims:              the names of the problem's sizes.
    trigger, access:   the tensor whose accesses start µthreads, and which accesses.
    arguments:         function of a :class:`_Binding` giving {argument name: 64-bit word}
                       for every ``.arg`` of the source.
    scratchpad:        function (problem, partials) -> scratchpad bytes it needs.
    partials:          function problem -> the number of accumulator copies K of its
                       reductions (1 for kernels without), see docs/kernels.md.
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
    arguments: object
    order: str
    order_independent: bool = True
    ragged: bool = False
    scratchpad: object = lambda problem, partials: 0
    partials: object = lambda problem: 1
    check: object = lambda problem: None
    check_params: object = lambda name, params: None

    def __post_init__(self):
        names = [t.name for t in self.tensors]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: tensor names repeat")
        if self.trigger not in names:
            raise ValueError(f"{self.name}: the trigger {self.trigger!r} is not one of its tensors")

    # What the assembled image says --------------------------------------------------------

    @property
    def image(self):
        return _image(self.source)

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

    # Launches ------------------------------------------------------------------------------

    def launch(self, problem, partials=None, **params):
        """A :class:`KernelLaunch` of this kernel for ``problem`` ({dim: size}) and
        ``params`` (defaults filled in); ``partials`` overrides the accumulator copies."""
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
        partials = _positive_int(self.name, "partials", partials)
        launch = KernelLaunch(self, MappingProxyType(problem), MappingProxyType(resolved), partials)
        launch.validate_parameters()
        return launch


def _positive_int(kernel, name, value):
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
        problem[name] = _positive_int(spec.name, name, problem[name])
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

    def trigger_accesses(self):
        """(byte offset in the trigger tensor, byte-enable mask) of each triggering sector
        access, in address order; the last sector of a ragged tensor enables its valid
        bytes only."""
        nbytes = self.nbytes(self.trigger)
        full = (1 << SECTOR_BYTES) - 1
        accesses = []
        for offset in range(0, nbytes, SECTOR_BYTES):
            valid = min(SECTOR_BYTES, nbytes - offset)
            accesses.append((offset, full if valid == SECTOR_BYTES else (1 << valid) - 1))
        return accesses

    # Scratchpad and arguments ------------------------------------------------------------

    @property
    def scratchpad_bytes(self):
        return int(self.kernel.scratchpad(self.problem, self.partials))

    @property
    def ordered(self):
        return self.kernel.ordered

    def arguments(self, addresses, scratchpad_base=0):
        """The 16 argument words for tensors at ``addresses`` ({name: byte address}) and
        the kernel's scratchpad region at ``scratchpad_base``."""
        binding = _Binding(self, addresses, scratchpad_base)
        named = self.kernel.arguments(binding)
        declared = self.kernel.image.arguments
        if set(named) != set(declared):
            raise RuntimeError(f"{self.kernel.name}: the registry sets arguments "
                               f"{sorted(named)}, the source declares {sorted(declared)}")
        words = [0] * ARGUMENT_WORDS
        for name, value in named.items():
            words[declared[name]] = int(value) & _MASK64
        return tuple(words)


class _Binding:
    """What an argument function reads: addresses, parameters, sizes and helpers."""

    def __init__(self, launch, addresses, scratchpad_base):
        self.launch, self.problem, self.params = launch, launch.problem, launch.params
        self.partials = launch.partials
        self._addresses = dict(addresses)
        if scratchpad_base < 0 or scratchpad_base % SECTOR_BYTES:
            raise LibraryError(f"scratchpad base {scratchpad_base:#x} is not a sector address")
        self._scratchpad = scratchpad_base

    def address(self, name):
        self.launch.kernel.tensor(name)
        if name not in self._addresses:
            raise LibraryError(f"kernel {self.launch.kernel.name}: no address for tensor {name!r}")
        address = int(self._addresses[name])
        if address < 0 or address % SECTOR_BYTES:
            raise LibraryError(f"tensor {name!r} at {address:#x} is not sector-aligned")
        return address

    def scratchpad(self, offset=0):
        return self._scratchpad + offset

    def row_descriptor(self, dim, copies=1):
        """Divisor descriptor dividing any OFFSET of the trigger tensor by the bytes of
        ``copies`` rows of ``dim`` trigger elements (OFFSET ÷ it = the row, OFFSET mod
        it = the bytes into the row)."""
        divisor = self.launch.kernel.trigger_spec.dtype.itemsize * self.problem[dim] * copies
        limit = max(self.launch.expected_triggers * SECTOR_BYTES - 1, 0)
        return divisor_descriptor(divisor, limit).word

    @staticmethod
    def f32(value):
        return int(np.float32(value).view(np.uint32))

    @staticmethod
    def flag(value):
        return int(bool(value))


# Constants of the library's exponential sequences (docs/kernels.md, "Exponential") that
# the kernels take as argument words, because an instruction has only one immediate.
EXP_ARGUMENTS = MappingProxyType({
    "EXP_MAGIC": 0x4B4000BF,      # 1.5·2^23 + 191: t's low 9 bits are n + 64 + 127
    "EXP_C4": 0x1D2B9DA5,         # c4·2^-64
})
EXPM1_ARGUMENTS = MappingProxyType({
    "EXPM1_MAGIC": 0x4B400180,    # 1.5·2^23 + 384: t << 23 is −2^(n+1)
    "EXPM1_Q3": 0x3E0905CE,       # Q3
    "ONE": 0x3F800000,
})
_BETA = np.float32(math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5)   # PyTorch's kBeta
_GELU_ARGUMENTS = {
    "NEG_2BETA": int((np.float32(-2.0) * _BETA).view(np.uint32)),
    "TWO_BETA": int((np.float32(2.0) * _BETA).view(np.uint32)),
}


# Parameter checks ------------------------------------------------------------------------

def _check_dropout(name, params):
    if not 0.0 <= params["p"] < 1.0:
        raise LibraryError(f"{name}: p must be in [0, 1), not {params['p']}")


def _check_adam(name, params):
    for beta in ("beta1", "beta2"):
        if not 0.0 <= params[beta] < 1.0:
            raise LibraryError(f"{name}: {beta} must be in [0, 1), not {params[beta]}")
    for positive in ("lr", "eps", "weight_decay"):
        if params[positive] < 0.0:
            raise LibraryError(f"{name}: {positive} must be >= 0, not {params[positive]}")


def _check_sgd(name, params):
    if params["momentum"] <= 0.0:
        raise LibraryError(f"{name}: momentum must be > 0 (sgd_momentum keeps a momentum "
                           f"buffer), not {params['momentum']}")
    if params["lr"] < 0.0 or params["weight_decay"] < 0.0:
        raise LibraryError(f"{name}: lr and weight_decay must be >= 0")
    if params["nesterov"] and params["dampening"] != 0.0:
        raise LibraryError(f"{name}: Nesterov momentum requires zero dampening (as torch.optim.SGD)")


# Shape checks ----------------------------------------------------------------------------

def _multiple(dim, of):
    def check(problem):
        if problem[dim] % of:
            raise LibraryError(f"{dim} = {problem[dim]} must be a multiple of {of}: a sector "
                               f"holds {of} consecutive elements of one row")
    return check


def _both(*checks):
    def check(problem):
        for one in checks:
            one(problem)
    return check


def _at_least(dim, minimum, why):
    def check(problem):
        if problem[dim] < minimum:
            raise LibraryError(f"{dim} = {problem[dim]} must be at least {minimum} ({why})")
    return check


# Accumulator copies ----------------------------------------------------------------------

# A reduction into one scratchpad address waits for the atomic latency between updates; the
# library spreads each accumulator over copies so that consecutive sectors update different
# addresses: at least _SPREAD distinct addresses per statistic.
_SPREAD = 8
_ROW_SPREAD = 4


def _channel_copies(problem, lanes=8):
    groups = problem["channels"] // lanes
    return max(1, -(-_SPREAD // groups))


def _row_copies(problem, lanes=8):
    copies = 1
    while copies * 2 <= min(_ROW_SPREAD, problem["columns"] // lanes):
        copies *= 2
    return copies


def _power_of_two(kernel, partials):
    if partials & (partials - 1):
        raise LibraryError(f"{kernel}: row reductions need a power-of-two number of copies, "
                           f"not {partials}")
    return partials.bit_length() - 1


# Argument blocks -------------------------------------------------------------------------

def _args_unary(out):
    return lambda b: {"Y": b.address(out)}


def _args_binary(other, out, other_arg, out_arg):
    return lambda b: {other_arg: b.address(other), out_arg: b.address(out)}


def _args_gelu_fwd(b):
    return {"Y": b.address("y"), "NEG_2BETA": _GELU_ARGUMENTS["NEG_2BETA"], **EXP_ARGUMENTS}


def _args_gelu_bwd(b):
    return {"X": b.address("x"), "DX": b.address("dx"), **_GELU_ARGUMENTS, **EXP_ARGUMENTS}


def _args_tanh_fwd(b):
    return {"Y": b.address("y"), **EXPM1_ARGUMENTS}


def _args_scale(source, out):
    return lambda b: {"Y": b.address(out), "SCALE": b.f32(b.params["scale"])}


def _dropout_scale(p):
    # PyTorch: noise.div_(1 − p), a float32 division of the kept 1.0 by float32(1 − p).
    return np.float32(1.0) / np.float32(1.0 - p)


def _args_dropout(source, out):
    return lambda b: {"Y": b.address(out), "KEEP": b.address("mask"),
                      "SCALE": b.f32(_dropout_scale(b.params["p"]))}


def _args_where(source, out, fill):
    return lambda b: {"Y": b.address(out), "CONDITION": b.address("condition"),
                      "FILL": b.f32(fill(b.params))}


def _args_axpy(b):
    return {"Y": b.address("y"), "ALPHA": b.f32(b.params["alpha"])}


def _args_bias_relu(b):
    row = 4 * b.problem["channels"]
    return {"Y": b.address("y"), "BIAS": b.address("bias"), "CHANNELS": b.row_descriptor("channels"),
            "BIAS_SP": b.scratchpad(), "ROW_BYTES": row}


def _args_bn_stats(b):
    row = 4 * b.problem["channels"]
    copies = row * b.partials
    return {"MEAN": b.address("mean"), "INVSTD": b.address("invstd"),
            "SCALE": b.address("scale"), "SHIFT": b.address("shift"),
            "RUNNING_MEAN": b.address("running_mean"), "RUNNING_VAR": b.address("running_var"),
            "WEIGHT": b.address("weight"), "BIAS": b.address("bias"),
            "GROUPS": b.row_descriptor("channels", b.partials), "SQUARES_SP": b.scratchpad(),
            "COPY_BYTES": copies, "ROW_BYTES": row, "COUNT": b.f32(b.problem["rows"]),
            "EPS": b.f32(b.params["eps"]), "MOMENTUM": b.f32(b.params["momentum"])}


def _args_bn_apply(b):
    row = 4 * b.problem["channels"]
    return {"Y": b.address("y"), "SCALE": b.address("scale"), "SHIFT": b.address("shift"),
            "CHANNELS": b.row_descriptor("channels"), "SCALE_SP": b.scratchpad(),
            "SHIFT_SP": b.scratchpad(row), "ROW_BYTES": row}


def _args_bn_bwd_stats(b):
    row = 4 * b.problem["channels"]
    copies = row * b.partials
    return {"X": b.address("x"), "GROUPS": b.row_descriptor("channels", b.partials),
            "DOTS_SP": b.scratchpad(), "COPY_BYTES": copies, "ROW_BYTES": row,
            "MEAN": b.address("mean"), "INVSTD": b.address("invstd"),
            "WEIGHT": b.address("weight"), "GRAD_WEIGHT": b.address("grad_weight"),
            "GRAD_BIAS": b.address("grad_bias"), "COEF_A": b.address("coef_a"),
            "COEF_B": b.address("coef_b"), "COEF_C": b.address("coef_c"),
            "COUNT": b.f32(b.problem["rows"])}


def _args_bn_bwd_apply(b):
    row = 4 * b.problem["channels"]
    return {"DX": b.address("dx"), "X": b.address("x"), "COEF_A": b.address("coef_a"),
            "COEF_B": b.address("coef_b"), "COEF_C": b.address("coef_c"),
            "CHANNELS": b.row_descriptor("channels"), "A_SP": b.scratchpad(),
            "B_SP": b.scratchpad(row), "C_SP": b.scratchpad(2 * row), "ROW_BYTES": row}


def _row_partial_args(b):
    shift = _power_of_two(b.launch.kernel.name, b.partials) + 5
    return {"PART_SHIFT": shift, "PART_MASK": (1 << shift) - 1}


def _args_layernorm_stats(b):
    region = b.problem["rows"] * SECTOR_BYTES * b.partials
    return {"MEAN": b.address("mean"), "RSTD": b.address("rstd"),
            "ROW_COEFS": b.address("row_coefs"),
            "ROWS": b.row_descriptor("columns"), **_row_partial_args(b),
            "SQUARES_SP": b.scratchpad(), "SUMS_DELTA": region, "ROW_COUNT": b.problem["rows"],
            "LENGTH": b.f32(b.problem["columns"]), "EPS": b.f32(b.params["eps"])}


def _args_layernorm_apply(b):
    row = 4 * b.problem["columns"]
    return {"Y": b.address("y"), "ROW_COEFS": b.address("row_coefs"),
            "ROWS": b.row_descriptor("columns"), "GAMMA": b.address("weight"),
            "BETA": b.address("bias"), "GAMMA_SP": b.scratchpad(), "BETA_SP": b.scratchpad(row),
            "ROW_BYTES": row}


def _args_layernorm_bwd_stats(b):
    row = 4 * b.problem["columns"]
    region = b.problem["rows"] * SECTOR_BYTES * b.partials
    return {"X": b.address("x"), "GAMMA": b.address("weight"), "ROWS": b.row_descriptor("columns"),
            **_row_partial_args(b), "GAMMA_SP": b.scratchpad(), "DOTS_SP": b.scratchpad(row),
            "SUMS_DELTA": region, "ROW_BYTES": row, "ROW_COUNT": b.problem["rows"],
            "MEAN": b.address("mean"), "RSTD": b.address("rstd"),
            "ROW_COEFS": b.address("row_coefs"),
            "INV_LENGTH": b.f32(np.float32(1.0) / np.float32(b.problem["columns"]))}


def _args_layernorm_bwd_apply(b):
    row = 4 * b.problem["columns"]
    return {"DX": b.address("dx"), "X": b.address("x"), "GAMMA": b.address("weight"),
            "ROWS": b.row_descriptor("columns"), "ROW_COEFS": b.address("row_coefs"),
            "GAMMA_SP": b.scratchpad(), "GRADS_SP": b.scratchpad(row), "ROW_BYTES": row,
            "GRAD_WEIGHT": b.address("grad_weight"), "GRAD_BIAS": b.address("grad_bias")}


def _args_softmax_max(b):
    return {"MAX_ROWS": b.address("max_rows"), "ROWS": b.row_descriptor("columns"),
            **_row_partial_args(b), "MAX_SP": b.scratchpad(),
            "REGION_BYTES": b.problem["rows"] * SECTOR_BYTES * b.partials,
            "ROW_COUNT": b.problem["rows"]}


def _args_softmax_expsum(b, stored=("Y", "y")):
    word, tensor = stored
    return {word: b.address(tensor), "MAX_ROWS": b.address("max_rows"),
            "INV_ROWS": b.address("inv_rows"), "ROWS": b.row_descriptor("columns"),
            "SUMS_SP": b.scratchpad(), "ROW_COUNT": b.problem["rows"], **EXP_ARGUMENTS}


def _args_softmax_scale(b):
    return {"INV_ROWS": b.address("inv_rows"), "ROWS": b.row_descriptor("columns")}


def _args_softmax_bwd_dot(b):
    return {"Y": b.address("y"), "DOT_ROWS": b.address("dot_rows"),
            "ROWS": b.row_descriptor("columns"), **_row_partial_args(b),
            "DOTS_SP": b.scratchpad(), "ROW_COUNT": b.problem["rows"]}


def _args_softmax_bwd_apply(b):
    return {"DX": b.address("dx"), "Y": b.address("y"), "DOT_ROWS": b.address("dot_rows"),
            "ROWS": b.row_descriptor("columns")}


_SIGN_BIT = 0x80000000


def _lerp_coefficient(beta1):
    """PyTorch's vectorized lerp_(end, w): fma(w, end − start, start) for |w| < 0.5,
    else fma(w − 1, end − start, end), w = float32(1 − beta1)."""
    weight = np.float32(1.0 - beta1)
    if abs(weight) < 0.5:
        return weight, False
    return np.float32(weight - np.float32(1.0)), True


def _adam_scalars(b):
    """The step's scalars as _single_tensor_adam computes them: Python floats, then the
    float32 the tensor ops use."""
    p = b.params
    step = p["step"]
    bias_correction1 = 1 - p["beta1"] ** step
    bias_correction2 = 1 - p["beta2"] ** step
    step_size = p["lr"] / bias_correction1
    weight, from_end = _lerp_coefficient(p["beta1"])
    return {"GRAD_SIGN": _SIGN_BIT if p["maximize"] else 0,
            "LERP_WEIGHT": b.f32(weight), "LERP_FROM_END": int(from_end),
            "BETA2": b.f32(p["beta2"]), "ONE_MINUS_BETA2": b.f32(1 - p["beta2"]),
            "BC2_SQRT": b.f32(bias_correction2 ** 0.5), "EPS": b.f32(p["eps"]),
            "NEG_STEP_SIZE": b.f32(-step_size)}


def _args_adam(b):
    return {"PARAM": b.address("param"), "EXP_AVG": b.address("exp_avg"),
            "EXP_AVG_SQ": b.address("exp_avg_sq"), **_adam_scalars(b),
            "WEIGHT_DECAY": b.f32(b.params["weight_decay"]),
            "DECAY_ON": b.flag(b.params["weight_decay"] != 0)}


def _args_adamw(b):
    p = b.params
    decay = 1 - p["lr"] * p["weight_decay"] if p["weight_decay"] != 0 else 1.0
    return {"PARAM": b.address("param"), "EXP_AVG": b.address("exp_avg"),
            "EXP_AVG_SQ": b.address("exp_avg_sq"), **_adam_scalars(b), "DECAY": b.f32(decay)}


def _args_sgd(b):
    p = b.params
    return {"PARAM": b.address("param"), "MOMENTUM_BUFFER": b.address("momentum_buffer"),
            "GRAD_SIGN": _SIGN_BIT if p["maximize"] else 0,
            "WEIGHT_DECAY": b.f32(p["weight_decay"]), "DECAY_ON": b.flag(p["weight_decay"] != 0),
            "MOMENTUM": b.f32(p["momentum"]), "ONE_MINUS_DAMPENING": b.f32(1 - p["dampening"]),
            "FIRST_STEP": b.flag(p["step"] == 1), "NESTEROV": b.flag(p["nesterov"]),
            "NEG_LR": b.f32(-p["lr"])}


# The list --------------------------------------------------------------------------------

def _fp32(name, role, extent=_per_element, layout="like the trigger", internal=False):
    return TensorSpec(name, role, DType.FP32, extent, layout, internal)


def _rows_of(name, role, sectors, layout):
    """An internal tensor of ``sectors`` broadcast sectors per row."""
    return TensorSpec(name, role, DType.FP32, lambda problem: problem["rows"] * 8 * sectors,
                      layout, True, sectors)


_IN, _OUT, _STATE = Role.INPUT, Role.OUTPUT, Role.STATE

_ADAM_PARAMS = (
    ParamSpec("lr", 1e-3, "learning rate"),
    ParamSpec("beta1", 0.9, "first-moment decay"),
    ParamSpec("beta2", 0.999, "second-moment decay"),
    ParamSpec("eps", 1e-8, "added to the denominator"),
    ParamSpec("weight_decay", 0.0, "L2 penalty (Adam) or decoupled decay (AdamW)"),
    ParamSpec("step", 1, "this step's number, 1 for the first (PyTorch's state['step'] after += 1)",
              Kind.COUNT),
    ParamSpec("maximize", False, "maximize the objective", Kind.BOOL),
)
_ADAMW_PARAMS = tuple(ParamSpec(p.name, 1e-2, p.doc) if p.name == "weight_decay" else p
                      for p in _ADAM_PARAMS)
_SGD_PARAMS = (
    ParamSpec("lr", 1e-3, "learning rate"),
    ParamSpec("momentum", 0.9, "momentum factor (> 0)"),
    ParamSpec("dampening", 0.0, "dampening for momentum"),
    ParamSpec("weight_decay", 0.0, "L2 penalty"),
    ParamSpec("nesterov", False, "Nesterov momentum", Kind.BOOL),
    ParamSpec("maximize", False, "maximize the objective", Kind.BOOL),
    ParamSpec("step", 1, "this step's number; step 1 starts the momentum buffer from the gradient",
              Kind.COUNT),
)

_BN_STATS_ORDER = (
    "sector s: acc[s mod K·C/8] += x, sq[s mod K·C/8] = fma(x, x, sq[…]) in trigger order; "
    "finalizer per channel group: Σ = copy 0 + copy 1 + … + copy K−1; mean = Σx / n; "
    "var = max(fma(−mean, mean, Σx² / n), 0); invstd = 1/√(var + eps); scale = weight·invstd; "
    "shift = fma(−mean, scale, bias); running_mean = fma(mean, momentum, running_mean·(1 − momentum)); "
    "running_var = fma(var·(n/(n − 1)), momentum, running_var·(1 − momentum))")
_ROW_REDUCE = ("finalizer per row: copies added in ascending order, then the lanes "
               "pairwise ((0+1), (2+3), …, then those pairwise)")


def _elementwise(name, source, summary, tensors, trigger, arguments, order, params=(),
                 check_params=KernelSpec.check_params):
    return KernelSpec(name, source, summary, _ELEMENTS, tuple(tensors), tuple(params), trigger,
                      Access.WRITE, arguments, order, ragged=True, check_params=check_params)


_FP32_KERNELS = (
    _elementwise("relu_fwd", "relu_fwd.s", "ReLU on the producer's writes of x",
                 [_fp32("x", _IN), _fp32("y", _OUT)], "x", _args_unary("y"),
                 "y = maximum(x, +0)"),
    _elementwise("relu_bwd", "relu_bwd.s", "ReLU gradient on the writes of dy",
                 [_fp32("dy", _IN), _fp32("y", _IN, layout="the forward output, like dy"),
                  _fp32("dx", _OUT)], "dy", _args_binary("y", "dx", "Y", "DX"),
                 "dx = (y <= 0) ? +0 : dy"),
    _elementwise("gelu_fwd", "gelu_fwd.s", "GELU (tanh form) on the producer's writes of x",
                 [_fp32("x", _IN), _fp32("y", _OUT)], "x", _args_gelu_fwd,
                 "a = |x|·fma(x², f32(−2βκ), f32(−2β)); e = exp(a); "
                 "y = (x < 0 ? x·e : x) / (e + 1)"),
    _elementwise("gelu_bwd", "gelu_bwd.s", "GELU (tanh form) gradient on the writes of dy",
                 [_fp32("dy", _IN), _fp32("x", _IN, layout="the forward input, like dy"),
                  _fp32("dx", _OUT)], "dy", _args_gelu_bwd,
                 "e as gelu_fwd; q = 1/(e + 1); σ = x < 0 ? e·q : q; "
                 "h = fma(x², f32(6βκ), f32(2β)); dx = dy·fma(((h·x)·(e·q)), q, σ)"),
    _elementwise("tanh_fwd", "tanh_fwd.s", "tanh on the producer's writes of x",
                 [_fp32("x", _IN), _fp32("y", _OUT)], "x", _args_tanh_fwd,
                 "m = expm1(−2·min(|x|, 9.5)); y = (m / (−2 − m)) with the sign of x"),
    _elementwise("tanh_bwd", "tanh_bwd.s", "tanh gradient on the writes of dy",
                 [_fp32("dy", _IN), _fp32("y", _IN, layout="the forward output, like dy"),
                  _fp32("dx", _OUT)], "dy", _args_binary("y", "dx", "Y", "DX"),
                 "dx = dy·fma(−y, y, 1)"),
    _elementwise("scale_fwd", "scale.s", "multiplication by a constant on the writes of x",
                 [_fp32("x", _IN), _fp32("y", _OUT)], "x", _args_scale("scale", "y"),
                 "y = x·scale", [ParamSpec("scale", 1.0, "the constant")]),
    _elementwise("scale_bwd", "scale.s", "scale gradient on the writes of dy",
                 [_fp32("dy", _IN), _fp32("dx", _OUT)], "dy", _args_scale("scale", "dx"),
                 "dx = dy·scale", [ParamSpec("scale", 1.0, "the forward's constant")]),
    _elementwise("dropout_fwd", "dropout.s", "dropout with a given mask on the writes of x",
                 [_fp32("x", _IN), TensorSpec("mask", _IN, DType.U8, _per_element,
                                              "one byte (0 or 1) per element of x"),
                  _fp32("y", _OUT)], "x", _args_dropout("dropout", "y"),
                 "y = x·(mask ? f32(1 / f32(1 − p)) : 0)",
                 [ParamSpec("p", 0.5, "drop probability, in [0, 1)")], _check_dropout),
    _elementwise("dropout_bwd", "dropout.s", "dropout gradient on the writes of dy",
                 [_fp32("dy", _IN), TensorSpec("mask", _IN, DType.U8, _per_element,
                                               "the forward's mask, one byte per element"),
                  _fp32("dx", _OUT)], "dy", _args_dropout("dropout", "dx"),
                 "dx = dy·(mask ? f32(1 / f32(1 − p)) : 0)",
                 [ParamSpec("p", 0.5, "the forward's drop probability")], _check_dropout),
    _elementwise("where_fwd", "where.s", "select by a condition on the writes of x",
                 [_fp32("x", _IN), TensorSpec("condition", _IN, DType.U8, _per_element,
                                              "one byte (0 or 1) per element of x"),
                  _fp32("y", _OUT)], "x", _args_where("where", "y", lambda p: p["fill"]),
                 "y = condition ? x : fill",
                 [ParamSpec("fill", float(np.finfo(np.float32).min), "the value where the condition is 0")]),
    _elementwise("where_bwd", "where.s", "where gradient on the writes of dy",
                 [_fp32("dy", _IN), TensorSpec("condition", _IN, DType.U8, _per_element,
                                               "the forward's condition"),
                  _fp32("dx", _OUT)], "dy", _args_where("where", "dx", lambda p: 0.0),
                 "dx = condition ? dy : +0"),
    _elementwise("add", "add.s", "element-wise sum on the writes of a",
                 [_fp32("a", _IN), _fp32("b", _IN), _fp32("y", _OUT)], "a",
                 _args_binary("b", "y", "B", "Y"), "y = a + b"),
    _elementwise("axpy", "axpy.s", "gradient accumulation on the writes of a new gradient x",
                 [_fp32("x", _IN), _fp32("y", _STATE, layout="the accumulated gradient, like x")],
                 "x", _args_axpy, "y = fma(x, alpha, y)",
                 [ParamSpec("alpha", 1.0, "the factor of x")]),
    KernelSpec("bias_relu", "bias_relu.s", "bias and ReLU on the producer's writes of x",
               _CHANNELS, (_fp32("x", _IN, _matrix, "rows × C, channels innermost"),
                           _fp32("bias", _IN, _per_channel, "(C,)"),
                           _fp32("y", _OUT, _matrix, "like x")), (), "x", Access.WRITE,
               _args_bias_relu, "y = maximum(x + bias[c], +0)",
               scratchpad=lambda problem, partials: 4 * problem["channels"],
               check=_multiple("channels", 8)),
    KernelSpec("bn_stats", "bn_stats.s", "batch-norm statistics on the producer's writes of x",
               _CHANNELS, (_fp32("x", _IN, _matrix, "rows × C, channels innermost (N·H·W rows)"),
                           _fp32("weight", _IN, _per_channel, "(C,)"),
                           _fp32("bias", _IN, _per_channel, "(C,)"),
                           _fp32("running_mean", _STATE, _per_channel, "(C,)"),
                           _fp32("running_var", _STATE, _per_channel, "(C,)"),
                           _fp32("mean", _OUT, _per_channel, "(C,): PyTorch's save_mean"),
                           _fp32("invstd", _OUT, _per_channel, "(C,): PyTorch's save_invstd"),
                           _fp32("scale", _OUT, _per_channel, "(C,): weight·invstd", True),
                           _fp32("shift", _OUT, _per_channel, "(C,): bias − mean·scale", True)),
               (ParamSpec("eps", 1e-5, "added to the variance"),
                ParamSpec("momentum", 0.1, "running-statistics factor")),
               "x", Access.WRITE, _args_bn_stats, _BN_STATS_ORDER, order_independent=False,
               scratchpad=lambda problem, partials: 8 * problem["channels"] * partials,
               partials=_channel_copies,
               check=_both(_multiple("channels", 8), _at_least("rows", 2, "n/(n − 1) for the running variance"))),
    KernelSpec("bn_apply", "bn_apply.s", "batch-norm normalization on reads of x",
               _CHANNELS, (_fp32("x", _IN, _matrix, "rows × C, channels innermost"),
                           _fp32("scale", _IN, _per_channel, "(C,), from bn_stats", True),
                           _fp32("shift", _IN, _per_channel, "(C,), from bn_stats", True),
                           _fp32("y", _OUT, _matrix, "like x")), (), "x", Access.READ,
               _args_bn_apply, "y = fma(x, scale[c], shift[c])",
               scratchpad=lambda problem, partials: 8 * problem["channels"],
               check=_multiple("channels", 8)),
    KernelSpec("bn_bwd_stats", "bn_bwd_stats.s", "batch-norm backward reductions on the writes of dy",
               _CHANNELS, (_fp32("dy", _IN, _matrix, "rows × C, channels innermost"),
                           _fp32("x", _IN, _matrix, "the forward input, like dy"),
                           _fp32("mean", _IN, _per_channel, "(C,): save_mean"),
                           _fp32("invstd", _IN, _per_channel, "(C,): save_invstd"),
                           _fp32("weight", _IN, _per_channel, "(C,)"),
                           _fp32("grad_weight", _OUT, _per_channel, "(C,)"),
                           _fp32("grad_bias", _OUT, _per_channel, "(C,)"),
                           _fp32("coef_a", _OUT, _per_channel, "(C,): invstd·weight", True),
                           _fp32("coef_b", _OUT, _per_channel, "(C,): −a·k", True),
                           _fp32("coef_c", _OUT, _per_channel, "(C,): a·(k·mean − Σdy/n)", True)),
               (), "dy", Access.WRITE, _args_bn_bwd_stats,
               "sector s: d[s mod K·C/8] = fma(dy, x, d[…]), g[s mod K·C/8] += dy in trigger "
               "order; finalizer per channel group: copies added in ascending order; "
               "dot = fma(−mean, Σdy, Σdy·x); grad_weight = dot·invstd; grad_bias = Σdy; "
               "k = ((dot·invstd)·invstd) / n; a = invstd·weight; b = −(a·k); "
               "c = a·fma(k, mean, −(Σdy / n))",
               order_independent=False,
               scratchpad=lambda problem, partials: 8 * problem["channels"] * partials,
               partials=_channel_copies, check=_multiple("channels", 8)),
    KernelSpec("bn_bwd_apply", "bn_bwd_apply.s", "batch-norm input gradient on reads of dy",
               _CHANNELS, (_fp32("dy", _IN, _matrix, "rows × C, channels innermost"),
                           _fp32("x", _IN, _matrix, "the forward input, like dy"),
                           _fp32("coef_a", _IN, _per_channel, "(C,), from bn_bwd_stats", True),
                           _fp32("coef_b", _IN, _per_channel, "(C,), from bn_bwd_stats", True),
                           _fp32("coef_c", _IN, _per_channel, "(C,), from bn_bwd_stats", True),
                           _fp32("dx", _OUT, _matrix, "like dy")), (), "dy", Access.READ,
               _args_bn_bwd_apply, "dx = fma(dy, a[c], fma(x, b[c], c[c]))",
               scratchpad=lambda problem, partials: 12 * problem["channels"],
               check=_multiple("channels", 8)),
    KernelSpec("layernorm_stats", "layernorm_stats.s", "layer-norm statistics on the producer's writes of x",
               _ROWS, (_fp32("x", _IN, _matrix, "rows × L, row-major"),
                       _fp32("mean", _OUT, _per_row, "(rows,)"),
                       _fp32("rstd", _OUT, _per_row, "(rows,)"),
                       _rows_of("row_coefs", _OUT, 2, "per row: 8 × rstd, 8 × (−mean·rstd)")),
               (ParamSpec("eps", 1e-5, "added to the variance"),), "x", Access.WRITE,
               _args_layernorm_stats,
               "sector s of row r: sq[r][s mod K] = fma(x, x, sq[r][…]), sum[r][s mod K] += x "
               "in trigger order; " + _ROW_REDUCE + "; mean = Σx / L; "
               "rstd = 1/√(max(fma(−mean, mean, Σx² / L), 0) + eps); row coefficients rstd and "
               "−(mean·rstd)", order_independent=False,
               scratchpad=lambda problem, partials: 2 * problem["rows"] * SECTOR_BYTES * partials,
               partials=_row_copies, check=_multiple("columns", 8)),
    KernelSpec("layernorm_apply", "layernorm_apply.s", "layer-norm normalization on reads of x",
               _ROWS, (_fp32("x", _IN, _matrix, "rows × L, row-major"),
                       _rows_of("row_coefs", _IN, 2, "from layernorm_stats"),
                       _fp32("weight", _IN, _per_column, "(L,): gamma"),
                       _fp32("bias", _IN, _per_column, "(L,): beta"),
                       _fp32("y", _OUT, _matrix, "like x")), (), "x", Access.READ,
               _args_layernorm_apply, "y = fma(fma(x, rstd, −mean·rstd), weight, bias)",
               scratchpad=lambda problem, partials: 8 * problem["columns"],
               check=_multiple("columns", 8)),
    KernelSpec("layernorm_bwd_stats", "layernorm_bwd_stats.s",
               "layer-norm backward row reductions on the writes of dy",
               _ROWS, (_fp32("dy", _IN, _matrix, "rows × L, row-major"),
                       _fp32("x", _IN, _matrix, "the forward input, like dy"),
                       _fp32("weight", _IN, _per_column, "(L,): gamma"),
                       _fp32("mean", _IN, _per_row, "(rows,): the forward's mean"),
                       _fp32("rstd", _IN, _per_row, "(rows,): the forward's rstd"),
                       _rows_of("row_coefs", _OUT, 4, "per row: 8 × a, 8 × b, 8 × c, 8 × m")),
               (), "dy", Access.WRITE, _args_layernorm_bwd_stats,
               "g = dy·weight; sector s of row r: ds[r][s mod K] = fma(g, x, …), "
               "db[r][s mod K] += g in trigger order; " + _ROW_REDUCE + "; a = rstd; "
               "b = (((fma(db, mean, −ds)·a)·a)·a)·f32(1/L); c = fma(−b, mean, −((db·a)·f32(1/L))); "
               "m = −(mean·rstd)", order_independent=False,
               scratchpad=lambda problem, partials: (4 * problem["columns"]
                                                     + 2 * problem["rows"] * SECTOR_BYTES * partials),
               partials=_row_copies, check=_multiple("columns", 8)),
    KernelSpec("layernorm_bwd_apply", "layernorm_bwd_apply.s",
               "layer-norm input and parameter gradients on reads of dy",
               _ROWS, (_fp32("dy", _IN, _matrix, "rows × L, row-major"),
                       _fp32("x", _IN, _matrix, "the forward input, like dy"),
                       _fp32("weight", _IN, _per_column, "(L,): gamma"),
                       _rows_of("row_coefs", _IN, 4, "from layernorm_bwd_stats"),
                       _fp32("dx", _OUT, _matrix, "like dy"),
                       _fp32("grad_weight", _OUT, _per_column, "(L,)"),
                       _fp32("grad_bias", _OUT, _per_column, "(L,)")),
               (), "dy", Access.READ, _args_layernorm_bwd_apply,
               "dx = fma(dy·weight, a, fma(x, b, c)); x̂ = fma(x, a, m); per column, in trigger "
               "order: grad_weight = fma(dy, x̂, grad_weight), grad_bias += dy",
               order_independent=False,
               scratchpad=lambda problem, partials: 12 * problem["columns"],
               check=_multiple("columns", 8)),
    KernelSpec("softmax_max", "softmax_max.s", "softmax row maxima on the producer's writes of x",
               _ROWS, (_fp32("x", _IN, _matrix, "rows × L, row-major"),
                       _rows_of("max_rows", _OUT, 1, "per row: 8 × its maximum")),
               (), "x", Access.WRITE, _args_softmax_max,
               "per row and lane, the maximum (IEEE 754-2019, NaN propagates) over the row's "
               "sectors and copies, then over the lanes",
               scratchpad=lambda problem, partials: problem["rows"] * SECTOR_BYTES * partials,
               partials=_row_copies, check=_multiple("columns", 8)),
    KernelSpec("softmax_expsum", "softmax_expsum.s", "softmax exponentials and row sums on reads of x",
               _ROWS, (_fp32("x", _IN, _matrix, "rows × L, row-major"),
                       _rows_of("max_rows", _IN, 1, "from softmax_max"),
                       _fp32("y", _OUT, _matrix, "like x: e = exp(x − max)"),
                       _rows_of("inv_rows", _OUT, 1, "per row: 8 × 1/Σe")),
               (), "x", Access.READ, _args_softmax_expsum,
               "e = exp(x − max) (the library exponential); per row and lane Σe in trigger "
               "order; finalizer: the lanes pairwise, then 1/Σ", order_independent=False,
               scratchpad=lambda problem, partials: problem["rows"] * SECTOR_BYTES,
               check=_multiple("columns", 8)),
    KernelSpec("softmax_scale", "softmax_scale.s", "softmax normalization on reads of y",
               _ROWS, (_fp32("y", _STATE, _matrix, "rows × L: e in, the softmax out"),
                       _rows_of("inv_rows", _IN, 1, "from softmax_expsum")),
               (), "y", Access.READ, _args_softmax_scale, "y = e·(1/Σe)",
               check=_multiple("columns", 8)),
    KernelSpec("softmax_bwd_dot", "softmax_bwd_dot.s", "softmax backward row dot products on the writes of dy",
               _ROWS, (_fp32("dy", _IN, _matrix, "rows × L, row-major"),
                       _fp32("y", _IN, _matrix, "the forward output, like dy"),
                       _rows_of("dot_rows", _OUT, 1, "per row: 8 × Σ dy·y")),
               (), "dy", Access.WRITE, _args_softmax_bwd_dot,
               "sector s of row r: d[r][s mod K] = fma(dy, y, d[r][…]) in trigger order; "
               + _ROW_REDUCE, order_independent=False,
               scratchpad=lambda problem, partials: problem["rows"] * SECTOR_BYTES * partials,
               partials=_row_copies, check=_multiple("columns", 8)),
    KernelSpec("softmax_bwd_apply", "softmax_bwd_apply.s", "softmax input gradient on reads of dy",
               _ROWS, (_fp32("dy", _IN, _matrix, "rows × L, row-major"),
                       _fp32("y", _IN, _matrix, "the forward output, like dy"),
                       _rows_of("dot_rows", _IN, 1, "from softmax_bwd_dot"),
                       _fp32("dx", _OUT, _matrix, "like dy")), (), "dy", Access.READ,
               _args_softmax_bwd_apply, "dx = (dy − Σ dy·y)·y", check=_multiple("columns", 8)),
    KernelSpec("adam", "adam.s", "an Adam step (torch.optim.Adam) on the writes of grad", _ELEMENTS,
               (_fp32("grad", _IN), _fp32("param", _STATE), _fp32("exp_avg", _STATE),
                _fp32("exp_avg_sq", _STATE)), _ADAM_PARAMS, "grad", Access.WRITE, _args_adam,
               "grad = maximize ? −grad : grad; if weight_decay: grad = fma(param, wd, grad); "
               "exp_avg = fma(w, grad − exp_avg, exp_avg) (w = f32(1 − beta1) < 0.5; else "
               "fma(w − 1, grad − exp_avg, grad)); exp_avg_sq = fma((1 − beta2)·grad, grad, "
               "exp_avg_sq·beta2); denom = √exp_avg_sq / f32(√(1 − beta2^step)) + eps; "
               "param = param + (f32(−lr/(1 − beta1^step))·exp_avg) / denom", ragged=True,
               check_params=_check_adam),
    KernelSpec("adamw", "adamw.s", "an AdamW step (torch.optim.AdamW) on the writes of grad", _ELEMENTS,
               (_fp32("grad", _IN), _fp32("param", _STATE), _fp32("exp_avg", _STATE),
                _fp32("exp_avg_sq", _STATE)), _ADAMW_PARAMS, "grad", Access.WRITE, _args_adamw,
               "param = param·f32(1 − lr·weight_decay); grad = maximize ? −grad : grad; then "
               "adam without its weight-decay term", ragged=True, check_params=_check_adam),
    KernelSpec("sgd_momentum", "sgd_momentum.s", "an SGD step with momentum (torch.optim.SGD) on the writes of grad",
               _ELEMENTS, (_fp32("grad", _IN), _fp32("param", _STATE),
                           _fp32("momentum_buffer", _STATE)), _SGD_PARAMS, "grad", Access.WRITE,
               _args_sgd,
               "grad = maximize ? −grad : grad; if weight_decay: grad = fma(param, wd, grad); "
               "buf = step 1 ? grad : fma(grad, 1 − dampening, buf·momentum); "
               "grad = nesterov ? fma(buf, momentum, grad) : buf; param = fma(grad, −lr, param)",
               ragged=True, check_params=_check_sgd),
)


@dataclass(frozen=True)
class OpSpec:
    """An op the host model can place on NDP: one kernel, or phases run one after the
    other (each phase's entry programmed when the previous one completed), sharing tensors
    by name; ``internal`` tensors pass between phases through memory."""
    name: str
    phases: tuple
    summary: str

    @property
    def kernels(self):
        return tuple(KERNELS[phase] for phase in self.phases)

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


def _build_kernels(specs):
    kernels = {}
    for spec in specs:
        if spec.name in kernels:
            raise ValueError(f"kernel {spec.name} is listed twice")
        kernels[spec.name] = spec
    return MappingProxyType(kernels)


# BF16 variants ----------------------------------------------------------------------------
# Mixed-precision training keeps activations and their gradients in BF16; parameters,
# statistics, optimizer state and the workspaces between phases stay FP32. A BF16 sector
# holds 16 elements: kernels widen its halves (exactly), compute as the FP32 kernel does and
# round each result once.

def _bf16_variant(name, tensors_in_bf16, *, arguments=None, check=None, tensors=None,
                  summary=None, order=None, trigger=None, access=None):
    base = KERNELS_FP32[name]
    kept = tensors if tensors is not None else base.tensors
    converted = tuple(replace(t, dtype=DType.BF16) if t.name in tensors_in_bf16 else t for t in kept)
    unknown = set(tensors_in_bf16) - {t.name for t in converted}
    if unknown:
        raise ValueError(f"{name}_bf16: no tensors {sorted(unknown)}")
    return replace(base, name=f"{name}_bf16", source=f"{base.source.removesuffix('.s')}_bf16.s",
                   summary=summary or f"{base.summary}, BF16", tensors=converted,
                   arguments=arguments or base.arguments, check=check or base.check,
                   order=order or base.order, trigger=trigger or base.trigger,
                   access=access or base.access)


KERNELS_FP32 = MappingProxyType({spec.name: spec for spec in _FP32_KERNELS})


def _with(arguments, **extra):
    """``arguments`` plus the words ``extra`` computes ({name: function of the binding})."""
    return lambda b: {**arguments(b), **{key: value(b) for key, value in extra.items()}}


def _row_sums_after_squares(b):
    return b.scratchpad() + b.problem["rows"] * SECTOR_BYTES * b.partials


def _row_sums_after_dots(b):
    return b.scratchpad(4 * b.problem["columns"]) + b.problem["rows"] * SECTOR_BYTES * b.partials


_SIXTEEN_CHANNELS = _multiple("channels", 16)
_SIXTEEN_COLUMNS = _multiple("columns", 16)
_HALVES = "; per BF16 sector the halves' terms are combined first (lo then hi, the second by FMA)"


def _row_copies_bf16(problem):
    return _row_copies(problem, lanes=16)


def _bf16_kernels():
    elementwise = {
        "relu_fwd": ("x", "y"), "relu_bwd": ("dy", "y", "dx"), "gelu_fwd": ("x", "y"),
        "gelu_bwd": ("dy", "x", "dx"), "tanh_fwd": ("x", "y"), "tanh_bwd": ("dy", "y", "dx"),
        "scale_fwd": ("x", "y"), "scale_bwd": ("dy", "dx"), "dropout_fwd": ("x", "y"),
        "dropout_bwd": ("dy", "dx"), "where_fwd": ("x", "y"), "where_bwd": ("dy", "dx"),
        "add": ("a", "b", "y"), "axpy": ("x",),
    }
    specs = [_bf16_variant(name, tensors) for name, tensors in elementwise.items()]
    specs += [
        _bf16_variant("bias_relu", ("x", "y"), check=_SIXTEEN_CHANNELS),
        _bf16_variant("bn_stats", ("x",), check=_both(_SIXTEEN_CHANNELS, _at_least(
            "rows", 2, "n/(n − 1) for the running variance"))),
        _bf16_variant("bn_apply", ("x", "y"), check=_SIXTEEN_CHANNELS),
        _bf16_variant("bn_bwd_stats", ("dy", "x"), check=_SIXTEEN_CHANNELS),
        _bf16_variant("bn_bwd_apply", ("dy", "x", "dx"), check=_SIXTEEN_CHANNELS),
        replace(_bf16_variant("layernorm_stats", ("x",), check=_SIXTEEN_COLUMNS,
                              arguments=_with(_args_layernorm_stats, SUMS_SP=_row_sums_after_squares),
                              order=KERNELS_FP32["layernorm_stats"].order + _HALVES),
                partials=_row_copies_bf16),
        _bf16_variant("layernorm_apply", ("x", "y"), check=_SIXTEEN_COLUMNS),
        replace(_bf16_variant("layernorm_bwd_stats", ("dy", "x"), check=_SIXTEEN_COLUMNS,
                              arguments=_with(_args_layernorm_bwd_stats, SUMS_SP=_row_sums_after_dots),
                              order=KERNELS_FP32["layernorm_bwd_stats"].order + _HALVES),
                partials=_row_copies_bf16),
        _bf16_variant("layernorm_bwd_apply", ("dy", "x", "dx"), check=_SIXTEEN_COLUMNS),
        replace(_bf16_variant("softmax_max", ("x",), check=_SIXTEEN_COLUMNS),
                partials=_row_copies_bf16),
        _bf16_variant("softmax_expsum", ("x",), check=_SIXTEEN_COLUMNS, tensors=(
            _fp32("x", _IN, _matrix, "rows × L, row-major"),
            _rows_of("max_rows", _IN, 1, "from softmax_max_bf16"),
            _fp32("exps", _OUT, _matrix, "rows × L FP32: e = exp(x − max)", True),
            _rows_of("inv_rows", _OUT, 1, "per row: 8 × 1/Σe")),
            arguments=lambda b: _args_softmax_expsum(b, stored=("EXPS", "exps")),
            order=KERNELS_FP32["softmax_expsum"].order + "; e kept in FP32" + _HALVES),
        _bf16_variant("softmax_scale", ("x", "y"), check=_SIXTEEN_COLUMNS, tensors=(
            _fp32("x", _IN, _matrix, "rows × L (the pass over the tensor; values not used)"),
            _fp32("exps", _IN, _matrix, "from softmax_expsum_bf16", True),
            _rows_of("inv_rows", _IN, 1, "from softmax_expsum_bf16"),
            _fp32("y", _OUT, _matrix, "like x")), trigger="x",
            arguments=lambda b: {"Y": b.address("y"), "EXPS": b.address("exps"),
                                 **_args_softmax_scale(b)},
            order="y = bf16(e·(1/Σe)), e from the FP32 exponentials"),
        replace(_bf16_variant("softmax_bwd_dot", ("dy", "y"), check=_SIXTEEN_COLUMNS,
                              order=KERNELS_FP32["softmax_bwd_dot"].order + _HALVES),
                partials=_row_copies_bf16),
        _bf16_variant("softmax_bwd_apply", ("dy", "y", "dx"), check=_SIXTEEN_COLUMNS),
    ]
    for name in ("adam", "adamw", "sgd_momentum"):
        base = KERNELS_FP32[name]
        specs.append(_bf16_variant(
            name, ("grad", "param_bf16"), tensors=base.tensors + (
                _fp32("param_bf16", _OUT, layout="the updated param rounded to BF16 (the model's copy)"),),
            arguments=_with(base.arguments, PARAM_BF16=lambda b: b.address("param_bf16")),
            summary=f"{base.summary}, BF16 gradient, FP32 param and state",
            order=base.order + "; the gradient widened exactly; param_bf16 = bf16(param)"))
    return tuple(specs)


KERNELS = _build_kernels(_FP32_KERNELS + _bf16_kernels())

_MULTI_PHASE = (
    ("batchnorm_fwd", ("bn_stats", "bn_apply"), "batch-norm forward (training)"),
    ("batchnorm_bwd", ("bn_bwd_stats", "bn_bwd_apply"), "batch-norm backward"),
    ("layernorm_fwd", ("layernorm_stats", "layernorm_apply"), "layer-norm forward"),
    ("layernorm_bwd", ("layernorm_bwd_stats", "layernorm_bwd_apply"), "layer-norm backward"),
    ("softmax_fwd", ("softmax_max", "softmax_expsum", "softmax_scale"), "softmax along rows"),
    ("softmax_bwd", ("softmax_bwd_dot", "softmax_bwd_apply"), "softmax backward"),
)
_MULTI_PHASE += tuple((f"{name}_bf16", tuple(f"{phase}_bf16" for phase in phases), f"{summary}, BF16")
                      for name, phases, summary in _MULTI_PHASE)


def _build_ops():
    ops = {name: OpSpec(name, (name,), spec.summary) for name, spec in KERNELS.items()}
    for name, phases, summary in _MULTI_PHASE:
        if name in ops:
            raise ValueError(f"op {name} is also a kernel name")
        ops[name] = OpSpec(name, phases, summary)
    return MappingProxyType(ops)


OPS = _build_ops()


def kernel(name):
    """The :class:`KernelSpec` named ``name``."""
    if name not in KERNELS:
        raise LibraryError(f"no library kernel {name!r}; kernels: {', '.join(KERNELS)}")
    return KERNELS[name]


def op(name):
    """The :class:`OpSpec` named ``name`` (a kernel, or a multi-phase op)."""
    if name not in OPS:
        raise LibraryError(f"no library op {name!r}; ops: {', '.join(OPS)}")
    return OPS[name]


# Running on the instruction-set simulator ------------------------------------------------

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
    from matndp.host.kernels.iss import TriggerEvents
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
    from matndp.host.kernels.iss import FilterEntry, InstructionSetSimulator, IssConfig
    from matndp.host.kernels.memory import Memory
    if memory is None:
        total = sum(launch.allocation(t.name) for t in launch.tensors) + SECTOR_BYTES
        memory = Memory(-(-total // SECTOR_BYTES) * SECTOR_BYTES)
    addresses = _place(memory, launch, inputs)
    scratchpad = max(launch.scratchpad_bytes, SECTOR_BYTES)
    config = IssConfig(scratchpad_bytes=-(-scratchpad // SECTOR_BYTES) * SECTOR_BYTES,
                       watchdog=1 << 30)
    entry = FilterEntry(addresses[launch.trigger], launch.allocation(launch.trigger),
                        launch.kernel.image, launch.arguments(addresses),
                        expected=launch.expected_triggers if expected is None else expected)
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
    from matndp.host.kernels.memory import Memory
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
