"""NDP kernel throughput: measured on the RTL when a calibration file exists, documented
defaults otherwise. Every report carries :meth:`Calibration.describe`, which says which.

The calibration file (``build/calibration/ndp_kernels.json``, written by the RTL
simulation) looks like::

    {"schema": "matndp.ndp_kernels/1",
     "clock_hz": 1.2e9,                        # optional: the slice clock measured at
     "kernels": {"relu_fwd": {"cycles_per_packet": 10.4, "fixed_cycles": 40}, ...}}

``cycles_per_packet`` is the steady-state cost of one trigger packet (one sector,
``NDPConfig.sector_bytes``) on one NDP slice (all µthread slots busy), all phases of the op
together; ``after_cycles_per_packet`` (optional) the part of it spent in the phases that
run after the producer (an op's apply phases), else the defaults' split is kept;
``fixed_cycles`` is the once-per-launch cost (initializer, finalizer);
``instructions_per_packet`` (optional) the instructions the engine issues per packet, all
phases (the energy model's count), else as many as the cycles. ``ndp_config``
(optional) is the slice configuration the costs were measured on (:func:`configuration_record`);
a file measured on another configuration than the host model's is refused. ``matndp bench
kernel_rtl`` writes the file from RTL runs of the kernel library. Kernels the file does not list keep their defaults, and the report names them.
"""

import json
import math
import pathlib
from dataclasses import asdict, dataclass, field, replace
from types import MappingProxyType

from matndp.hw.config import NDPConfig, slice_config

from .graph import DTYPE_BYTES


__all__ = ["NDPHardware", "KernelCost", "DEFAULT_KERNELS", "Calibration", "load_calibration",
           "configuration_record", "ExpanderCalibration", "load_expander_calibration",
           "expander_reduction", "expander_calibration_document",
           "DEFAULT_CALIBRATION_PATH", "SCHEMA", "DEFAULT_EXPANDER_PATH", "EXPANDER_SCHEMA"]

SCHEMA = "matndp.ndp_kernels/1"
DEFAULT_CALIBRATION_PATH = pathlib.Path("build/calibration/ndp_kernels.json")
EXPANDER_SCHEMA = "matndp.ndp_expander/1"
DEFAULT_EXPANDER_PATH = pathlib.Path("build/calibration/ndp_expander.json")


@dataclass(frozen=True)
class NDPHardware:
    """The NDP units beside one GPU's memory controllers.

    slices_per_controller: NDP slices (trigger + engine) per memory controller.
    clock_hz:              slice clock.
    slice:                 the RTL configuration of one slice (:class:`NDPConfig`), which
                           gives the packet size and the lanes; by default the named
                           configuration ``$MATNDP_SLICE`` names (``default`` unless it
                           names another, :func:`~matndp.hw.config.slice_config`), the
                           one ``make bench`` measures the costs on.
    """

    slices_per_controller: int = 16
    clock_hz: float = 1.2e9
    slice: NDPConfig = field(default_factory=slice_config)

    def __post_init__(self):
        if not isinstance(self.slice, NDPConfig):
            raise TypeError(f"NDPHardware.slice must be an NDPConfig, not {self.slice!r}")
        if not isinstance(self.slices_per_controller, int) or self.slices_per_controller < 1 \
                or not self.clock_hz > 0:
            raise ValueError(f"bad NDP hardware configuration {self!r}")

    @property
    def packet_bytes(self):
        """One trigger packet: the sector of one memory request."""
        return self.slice.sector_bytes

    @property
    def lanes(self):
        """FP32 SIMD lanes per slice: a vector register holds one sector of FP32. A 16-bit
        packet carries twice as many elements, so it costs twice the vector instructions."""
        return self.slice.sector_bytes // DTYPE_BYTES["fp32"]


@dataclass(frozen=True)
class KernelCost:
    """Cost of an NDP kernel per FP32 trigger packet, split into the part that can run on
    the fly while the producer writes (``stream``) and, for kernels that need a complete
    reduction first (normalization, softmax), the part that runs afterwards (``after``)."""

    stream_cycles: float
    after_cycles: float = 0.0
    fixed_cycles: float = 0.0
    measured: bool = False
    # Instructions the engine issues per packet, both phases; None: as many as the cycles
    # (a default is an M2NDP kernel body size, an instruction count).
    instructions: float = None

    @property
    def cycles_per_packet(self):
        return self.stream_cycles + self.after_cycles

    @property
    def instructions_per_packet(self):
        return self.cycles_per_packet if self.instructions is None else self.instructions

    @property
    def two_phase(self):
        return self.after_cycles > 0


# Defaults, in single-issue slice cycles per FP32 packet. Where M2NDP publishes kernel body
# sizes (instructions per 32-byte packet, M2NDP's µthread model; docs/host-model.md) they
# are used as cycles: ReLU 10, GELU 26, softmax 7 + 18 + 9, layer-norm statistics 14 and apply 11.
# The others are estimates from the instruction count of the obvious kernel (argument and
# operand loads, arithmetic, stores), marked "estimate" in docs/host-model.md.
DEFAULT_KERNELS = MappingProxyType({
    "relu_fwd": KernelCost(10),
    "relu_bwd": KernelCost(11),
    "gelu_fwd": KernelCost(26),
    "gelu_bwd": KernelCost(32),
    "tanh_fwd": KernelCost(22),
    "tanh_bwd": KernelCost(12),
    "scale_fwd": KernelCost(8),
    "scale_bwd": KernelCost(8),
    "dropout_fwd": KernelCost(14),
    "dropout_bwd": KernelCost(11),
    "where_fwd": KernelCost(10),
    "where_bwd": KernelCost(10),
    "add": KernelCost(9),
    "batchnorm_fwd": KernelCost(14, 12),
    "batchnorm_bwd": KernelCost(16, 16),
    "layernorm_fwd": KernelCost(14, 11),
    "layernorm_bwd": KernelCost(16, 16),
    "softmax_fwd": KernelCost(25, 9),
    "softmax_bwd": KernelCost(12, 10),
    "adam": KernelCost(34),
    "sgd_momentum": KernelCost(18),
})


@dataclass(frozen=True)
class Calibration:
    """NDP kernel costs by kernel name (:class:`KernelCost`), the hardware they run on, and
    where they came from: ``source`` (a file or ``defaults``), the kernels the file
    measured and the unknown names it listed (ignored)."""

    kernels: MappingProxyType
    hardware: NDPHardware = field(default_factory=NDPHardware)
    source: str = "defaults"
    measured_kernels: tuple = ()
    unknown_kernels: tuple = ()

    def cost(self, kernel):
        if kernel not in self.kernels:
            raise KeyError(f"no NDP kernel {kernel!r} in the calibration")
        return self.kernels[kernel]

    def describe(self):
        defaults = sorted(set(self.kernels) - set(self.measured_kernels))
        return {"source": self.source,
                "measured_kernels": sorted(self.measured_kernels),
                "default_kernels": defaults,
                "ignored_unknown_kernels": sorted(self.unknown_kernels),
                "slices_per_controller": self.hardware.slices_per_controller,
                "clock_hz": self.hardware.clock_hz}


def _positive_number(value, where, *, nonzero=False):
    """``value`` as a finite, non-negative float (``nonzero``: also not 0); ``ValueError``
    naming ``where`` otherwise."""
    try:
        number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
            else math.nan
    except OverflowError:          # an integer past the largest float
        number = math.inf
    if not 0 <= number < math.inf:
        raise ValueError(f"{where}: expected a finite, non-negative number, got {value!r}")
    if nonzero and number == 0:
        raise ValueError(f"{where} must be positive")
    return number


def configuration_record(config):
    """``config`` (an :class:`NDPConfig`) as a calibration file records the slice it was
    measured on (``"ndp_config"``)."""
    return asdict(config)


def _flat(record, prefix=""):
    if not isinstance(record, dict):
        return {prefix: record}
    flat = {}
    for key, value in record.items():
        flat.update(_flat(value, f"{prefix}{key}."))
    return flat if record else {prefix: record}


def _key_text(key):
    return key if key.isprintable() else repr(key)


def _check_configuration(path, recorded, config):
    """Refuse costs measured on another slice than the one the host model prices."""
    expected = _flat(configuration_record(config))
    if not isinstance(recorded, dict):
        raise ValueError(f"{path}: \"ndp_config\" must be an object (the slice's configuration)")
    got = _flat(recorded)
    differing = sorted(key for key in set(expected) | set(got) if expected.get(key) != got.get(key))
    if differing:
        # a key of the file's is quoted when it holds control characters (a line break)
        shown = ", ".join(f"{_key_text(key.rstrip('.'))} {got.get(key)!r} (here {expected.get(key)!r})"
                          for key in differing[:4])
        raise ValueError(f"{path}: measured on another slice configuration: {shown}"
                         + (f" and {len(differing) - 4} more" if len(differing) > 4 else ""))


def _read_document(path, schema):
    try:
        document = json.loads(path.read_text())
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file") from None
    except (ValueError, RecursionError) as error:     # a number too long, nesting too deep
        raise ValueError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(document, dict) or document.get("schema") != schema:
        raise ValueError(f"{path}: expected a JSON object with \"schema\": \"{schema}\"")
    return document


def load_calibration(path=None, hardware=None):
    """The calibration from ``path`` (default ``build/calibration/ndp_kernels.json``) if
    that file exists, else the defaults. A file that exists but is malformed is an error,
    never silently replaced by defaults."""
    hardware = hardware or NDPHardware()
    explicit = path is not None
    path = pathlib.Path(path) if explicit else DEFAULT_CALIBRATION_PATH
    if not path.exists():
        if explicit:
            raise FileNotFoundError(f"calibration file {path} does not exist")
        return Calibration(DEFAULT_KERNELS, hardware)
    document = _read_document(path, SCHEMA)
    entries = document.get("kernels")
    if not isinstance(entries, dict):
        raise ValueError(f"{path}: \"kernels\" must be an object of kernel name -> costs")
    if "ndp_config" in document:
        _check_configuration(path, document["ndp_config"], hardware.slice)
    if "clock_hz" in document:
        clock = _positive_number(document["clock_hz"], f"{path}: clock_hz", nonzero=True)
        hardware = replace(hardware, clock_hz=clock)
    kernels, measured, unknown = dict(DEFAULT_KERNELS), [], []
    for name, entry in entries.items():
        if name not in DEFAULT_KERNELS:
            unknown.append(name)
            continue
        where = f"{path}: kernels.{name}"
        if not isinstance(entry, dict) or "cycles_per_packet" not in entry:
            raise ValueError(f"{where}: needs \"cycles_per_packet\"")
        total = _positive_number(entry["cycles_per_packet"], f"{where}.cycles_per_packet",
                                 nonzero=True)
        fixed = _positive_number(entry.get("fixed_cycles", 0), f"{where}.fixed_cycles")
        if "after_cycles_per_packet" in entry:
            after = _positive_number(entry["after_cycles_per_packet"],
                                     f"{where}.after_cycles_per_packet")
            if after >= total:
                raise ValueError(f"{where}.after_cycles_per_packet ({after:g}) must be less "
                                 f"than cycles_per_packet ({total:g})")
        else:
            # a measured total keeps the default split between the streaming and after phases
            default = DEFAULT_KERNELS[name]
            after = total * default.after_cycles / default.cycles_per_packet
        instructions = None
        if "instructions_per_packet" in entry:
            instructions = _positive_number(entry["instructions_per_packet"],
                                            f"{where}.instructions_per_packet", nonzero=True)
        kernels[name] = KernelCost(total - after, after, fixed, measured=True,
                                   instructions=instructions)
        measured.append(name)
    return Calibration(MappingProxyType(kernels), hardware, str(path), tuple(measured),
                       tuple(unknown))


@dataclass(frozen=True)
class ExpanderCalibration:
    """The memory-expander slice's cost of reducing K GPUs' gradients and running the
    optimizer, measured on its RTL (``matndp bench expander``, docs/ndpxnet-rtl.md), per
    optimizer kernel (the host model's names, :data:`DEFAULT_KERNELS`) and port count:
    ``points[kernel][K] = (cycles per reduced sector, memory accesses per reduced
    sector)``. A reduced sector is one sector of one GPU's gradient copy, the sum of K
    written sectors, with its optimizer step. ``ndp_config`` is the slice configuration
    it was measured on."""

    points: MappingProxyType
    source: str
    ndp_config: dict = None

    def cycles_per_reduced_sector(self, kernel, ports):
        """``(cycles, basis)`` for ``kernel`` at ``ports`` GPUs: the measurement at that K,
        else the straight line through the measured K (arrivals are serialized, so the
        cost grows with K; docs/ndpxnet-rtl.md), ``basis`` saying which. ``None`` when
        the file has no measurement of ``kernel``."""
        measured = self.points.get(kernel)
        if not measured:
            return None
        if ports in measured:
            return measured[ports][0], f"measured at K = {ports}"
        ks = sorted(measured)
        if len(ks) == 1:
            # One point: proportional to K, as a chain of K arrivals per reduced sector is.
            return measured[ks[0]][0] * ports / ks[0], f"scaled from K = {ks[0]} in proportion to K"
        # Least-squares line through the measured points.
        mean_k = sum(ks) / len(ks)
        mean_c = sum(measured[k][0] for k in ks) / len(ks)
        slope = sum((k - mean_k) * (measured[k][0] - mean_c) for k in ks) / sum((k - mean_k) ** 2 for k in ks)
        cycles = mean_c + slope * (ports - mean_k)
        if cycles <= 0:
            raise ValueError(f"{self.source}: the line through K = {ks} gives no positive "
                             f"cost at K = {ports}")
        return cycles, f"line through K = {', '.join(map(str, ks))}"

    def describe(self):
        return {"source": self.source, "measured": expander_reduction(self.points)}


def expander_reduction(points):
    """The calibration file's ``"reduction"`` object from ``points[kernel][K] = (cycles per
    reduced sector, memory accesses per reduced sector)``."""
    return {kernel: {str(k): {"cycles_per_reduced_sector": cycles,
                              "memory_accesses_per_reduced_sector": accesses}
                     for k, (cycles, accesses) in sorted(per_port.items())}
            for kernel, per_port in sorted(points.items())}


def expander_calibration_document(points, *, source, ndp_config, **fields):
    """The contents of an expander calibration file (what :func:`load_expander_calibration`
    reads) for ``points`` (as :func:`expander_reduction` takes them) measured on the slice
    configuration ``ndp_config`` (:func:`configuration_record`); ``fields``: further
    top-level fields describing the measurement, which the reader ignores."""
    return {"schema": EXPANDER_SCHEMA, "source": source, "ndp_config": ndp_config, **fields,
            "reduction": expander_reduction(points)}


def load_expander_calibration(path=None):
    """The expander calibration from ``path`` (default
    ``build/calibration/ndp_expander.json``) if that file exists, else ``None`` (the host
    model then prices the expander from its kernel costs, and says so). A malformed file is
    an error, as is an explicit ``path`` that does not exist. The file::

        {"schema": "matndp.ndp_expander/1", "ndp_config": {...},
         "reduction": {"adam": {"4": {"cycles_per_reduced_sector": 183.4,
                                      "memory_accesses_per_reduced_sector": 13.0}, ...}, ...}}
    """
    explicit = path is not None
    path = pathlib.Path(path) if explicit else DEFAULT_EXPANDER_PATH
    if not path.exists():
        if explicit:
            raise FileNotFoundError(f"expander calibration file {path} does not exist")
        return None
    document = _read_document(path, EXPANDER_SCHEMA)
    reduction = document.get("reduction")
    if not isinstance(reduction, dict) or not reduction:
        raise ValueError(f"{path}: \"reduction\" must be an object of optimizer kernel -> "
                         f"port count -> costs")
    recorded = document.get("ndp_config")
    if recorded is not None and not isinstance(recorded, dict):
        raise ValueError(f"{path}: \"ndp_config\" must be an object (the slice's configuration)")
    points = {}
    for kernel, per_port in reduction.items():
        if kernel not in DEFAULT_KERNELS:
            raise ValueError(f"{path}: reduction.{kernel}: not an NDP kernel of the host model "
                             f"(known: {', '.join(sorted(DEFAULT_KERNELS))})")
        if not isinstance(per_port, dict) or not per_port:
            raise ValueError(f"{path}: reduction.{kernel} must be an object of port count -> costs")
        points[kernel] = {}
        for ports, entry in per_port.items():
            where = f"{path}: reduction.{kernel}.{ports}"
            if not (isinstance(ports, str) and ports.isdigit() and int(ports) >= 2):
                raise ValueError(f"{where}: the port count must be an integer of at least 2")
            if not isinstance(entry, dict):
                raise ValueError(f"{where}: expected an object with \"cycles_per_reduced_sector\"")
            for key in ("cycles_per_reduced_sector", "memory_accesses_per_reduced_sector"):
                if key not in entry:
                    raise ValueError(f"{where}: needs \"{key}\"")
            cycles = _positive_number(entry["cycles_per_reduced_sector"], f"{where}.cycles_per_reduced_sector")
            accesses = _positive_number(entry["memory_accesses_per_reduced_sector"],
                                        f"{where}.memory_accesses_per_reduced_sector")
            if cycles == 0 or accesses == 0:
                raise ValueError(f"{where}: costs must be positive")
            points[kernel][int(ports)] = (cycles, accesses)
    return ExpanderCalibration(MappingProxyType(points), str(path), recorded)
