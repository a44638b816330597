"""The parameters of the batch harness (``sim/harnesses/slice_harness.v``): what its build
holds (:class:`HarnessShape`, Verilog parameters) and how its memory and streams behave in
a run (:class:`BatchTiming`, ports set before the first phase). The memory's size is no
build's: each image load sizes it (under Verilator; Icarus runs have
:data:`ICARUS_IMAGE_SECTORS`).
"""

from dataclasses import dataclass, fields

from matndp.hw.arbiter import with_id_width
from matndp.hw.csr_map import register_map
from matndp.hw.layouts import request_layout, response_layout, trigger_event_layout
from matndp.sim.drivers.packing import StructCodec
from matndp.sim.batch.records import RecordFormat


__all__ = ["HarnessShape", "BatchTiming", "harness_parameters", "SliceFormats", "UNTIL",
           "LOGS", "PAUSE_STEPS", "IMAGE_SECTORS_LIMIT", "ICARUS_IMAGE_SECTORS"]


# Conditions that end a phase, by name: the bits of the harness's `until` port.
UNTIL = {"sent": 0, "answered": 1, "responses": 2, "irq": 3}
# The harness's logs: file name and bit of `log_enable`, by name.
LOGS = {"gpu_requests": 0, "mem_requests": 1, "gpu_responses": 2, "events": 3, "irq": 4}
# Pause probabilities are drawn in steps of 1/PAUSE_STEPS.
PAUSE_STEPS = 256
GAP_BITS = 16
# The most sectors an image may have: the harness passes its image index and `image_count`
# to the memory's C++ as DPI `int`s (signed 32 bits).
IMAGE_SECTORS_LIMIT = (1 << 31) - 1
# Icarus has no DPI, so its builds hold the memory as a Verilog array of this many sectors
# (2 MiB of 32-byte sectors); Verilator allocates each image's own size at run time.
ICARUS_IMAGE_SECTORS = 1 << 16


def _is_power_of_two(value):
    return value > 0 and value & (value - 1) == 0


def _check_int(owner, name, value, low, high):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{owner}.{name} must be an int, not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{owner}.{name} must be in {low}..{high}, not {value}")


@dataclass(frozen=True)
class HarnessShape:
    """The sizes a harness build holds (each a Verilog parameter; a change is a rebuild).
    The memory image is not among them: a load allocates it, as large as the image.

    depth:          GPU request records per chunk.
    regions:        entries of the region map.
    in_flight:      reads memory holds between acceptance and response (a power of two);
                    memory refuses requests while it holds this many.
    pool:           the most responses memory may reorder among (a power of two).
    """

    depth: int = 1 << 16
    regions: int = 16
    in_flight: int = 64
    pool: int = 8

    def __post_init__(self):
        _check_int("HarnessShape", "depth", self.depth, 1, 1 << 24)
        _check_int("HarnessShape", "regions", self.regions, 1, 256)
        for name, high in (("in_flight", 4096), ("pool", 64)):
            value = getattr(self, name)
            _check_int("HarnessShape", name, value, 2, high)
            if not _is_power_of_two(value):
                raise ValueError(f"HarnessShape.{name} must be a power of two, not {value}")


@dataclass(frozen=True)
class BatchTiming:
    """How memory and the streams behave in a run.

    latency:       cycles from a read's acceptance to its response.
    interval:      memory accepts at most one request every this many cycles.
    reorder:       1: reads are answered in order; k > 1: answers leave a pool of up to k
                   in pseudo-random order.
    *_pause:       per-cycle probability in [0, 1) (in steps of 1/256) that the GPU source
                   delays an offer, the GPU response sink withholds ready, memory refuses
                   a request, memory delays a response.
    seed:          of the pseudo-random sequence (xorshift64) all of them draw from.
    """

    latency: int = 20
    interval: int = 1
    reorder: int = 1
    gpu_request_pause: float = 0.0
    gpu_response_pause: float = 0.0
    memory_request_pause: float = 0.0
    memory_response_pause: float = 0.0
    seed: int = 1

    def __post_init__(self):
        _check_int("BatchTiming", "latency", self.latency, 1, (1 << 16) - 1)
        _check_int("BatchTiming", "interval", self.interval, 1, (1 << 16) - 1)
        _check_int("BatchTiming", "reorder", self.reorder, 1, 64)
        _check_int("BatchTiming", "seed", self.seed, 0, (1 << 64) - 1)
        for name in self.pause_names():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"BatchTiming.{name} must be a number, not {value!r}")
            if not 0.0 <= value < 1.0:
                raise ValueError(f"BatchTiming.{name} must be in [0, 1), not {value}")

    @staticmethod
    def pause_names():
        return [item.name for item in fields(BatchTiming) if item.name.endswith("_pause")]

    @classmethod
    def pressure(cls, probability, **others):
        """The same pause probability on every stream."""
        return cls(**{name: probability for name in cls.pause_names()}, **others)

    def pause_steps(self, name):
        """Pause ``name`` in 1/256 steps, as the harness takes it."""
        return min(PAUSE_STEPS - 1, round(getattr(self, name) * PAUSE_STEPS))

    def check_for(self, shape):
        """Refuse timing the harness of ``shape`` cannot give (ValueError)."""
        if self.reorder > shape.pool:
            raise ValueError(f"BatchTiming.reorder ({self.reorder}) exceeds the harness's "
                             f"reorder pool (HarnessShape.pool = {shape.pool})")

    def ports(self):
        """The harness's timing ports and their values."""
        values = {"latency": self.latency, "interval": self.interval, "reorder": self.reorder,
                  "seed": self.seed}
        values.update({name: self.pause_steps(name) for name in self.pause_names()})
        return values


class SliceFormats:
    """The record formats of one slice configuration's ports and of the harness's files."""

    def __init__(self, config):
        if config.engine is None:
            raise ValueError("the batch harness runs the slice with its engine; this "
                             "configuration has none (NDPConfig(engine=None))")
        self.config = config
        self.request = RecordFormat(StructCodec(request_layout(config)).fields)
        self.stimulus = self.request.extended("gap", GAP_BITS)
        memory_config = with_id_width(config, config.mem_id_width)
        self.memory_request = RecordFormat(StructCodec(request_layout(memory_config)).fields)
        self.response = RecordFormat(StructCodec(response_layout(config)).fields)
        self.event = RecordFormat(StructCodec(trigger_event_layout(config)).fields)
        self.irq = RecordFormat([("level", 0, 1)])
        self.cycle = RecordFormat([("cycle", 0, 64)])
        self.region = RecordFormat([("image_sector", 0, 32), ("sectors", 32, 32), ("base_sector", 64, 63),
                                    ("failing", 127, 1)])
        self.sector = RecordFormat([("data", 0, config.data_width)])
        self.logs = {"gpu_requests": self.request, "mem_requests": self.memory_request,
                     "gpu_responses": self.response, "events": self.event, "irq": self.irq}


def harness_parameters(config, shape, simulator="verilator"):
    """The Verilog parameters of the harness for slice configuration ``config`` under
    ``simulator`` (Icarus's build also holds the memory's size)."""
    memory = {"IMAGE_SECTORS": ICARUS_IMAGE_SECTORS} if simulator == "icarus" else {}
    return {
        "ADDR_W": config.addr_width,
        "SECTOR_BYTES": config.sector_bytes,
        "ID_W": config.id_width,
        "MEM_ID_W": config.mem_id_width,
        "CSR_ADDR_W": register_map(config).addr_width,
        "DEPTH": shape.depth,
        "REGIONS": shape.regions,
        "IN_FLIGHT": shape.in_flight,
        "POOL": shape.pool,
        "GAP_W": GAP_BITS,
        **memory,
    }
