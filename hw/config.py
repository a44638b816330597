"""The one configuration object of the RTL. Every width and depth comes from here.

:class:`NDPConfig` holds what every block of a slice shares (the ports' address, data and id
widths) and composes one configuration per block (:class:`TriggerConfig`,
:class:`EngineConfig`, :class:`ArbiterConfig`). A user
builds one ``NDPConfig`` and it is validated once, block configurations included.

:data:`NAMED_CONFIGS` names the configurations the project measures and builds (docs/engine.md,
"Named configurations"); :func:`named_config` looks one up, and :func:`slice_config` gives
the one ``$MATNDP_SLICE`` names: the slice the flows build and the host model is
calibrated on.
"""

import os
from dataclasses import dataclass, field, fields


__all__ = ["TriggerConfig", "EngineConfig", "ArbiterConfig", "NDPConfig", "NAMED_CONFIGS",
           "named_config", "SLICE_VARIABLE", "slice_config_name", "slice_config"]


def _is_power_of_two(value):
    return value > 0 and value & (value - 1) == 0


def _check_ints(config):
    for item in fields(config):
        value = getattr(config, item.name)
        if item.type is int and (not isinstance(value, int) or isinstance(value, bool)):
            raise TypeError(f"{type(config).__name__}.{item.name} must be an int, not {value!r}")


def _check_range(config, name, low, high):
    value = getattr(config, name)
    if not low <= value <= high:
        raise ValueError(f"{type(config).__name__}.{name} must be in {low}..{high}, not {value}")


@dataclass(frozen=True)
class TriggerConfig:
    """The memory-access trigger.

    filter_entries:    address ranges the trigger watches.
    event_queue_depth: trigger events buffered per source (writes, read responses) before
                       the GPU side is back-pressured.
    pipelined:         match requests over three register stages instead of one (three
                       cycles added on the request path instead of one), so that no cycle
                       holds more than one step of the match; what an FPGA build needs
                       for its clock (docs/trigger.md, "The pipelined request side").
    gather_sectors:    slots of the arrival-gathering table (docs/trigger.md, "Arrival
                       gathering"): sectors whose K writes an entry marked to gather
                       counts, so that only the K-th starts a µthread; 0 builds no table
                       (and no GATHER registers).
    """

    filter_entries: int = 16
    event_queue_depth: int = 8
    pipelined: bool = False
    gather_sectors: int = 0

    def __post_init__(self):
        _check_ints(self)
        if not isinstance(self.pipelined, bool):
            raise TypeError(f"TriggerConfig.pipelined must be a bool, not {self.pipelined!r}")
        _check_range(self, "filter_entries", 1, 64)
        _check_range(self, "event_queue_depth", 2, 1024)
        _check_range(self, "gather_sectors", 0, 1 << 16)

    @property
    def entry_bits(self):
        """Bits of an entry index."""
        return max(1, (self.filter_entries - 1).bit_length())

    @property
    def gather_slot_bits(self):
        """Bits of a slot index of the arrival-gathering table."""
        return max(1, (self.gather_sectors - 1).bit_length())


@dataclass(frozen=True)
class EngineConfig:
    """The NDP engine (docs/engine.md).

    sub_cores:          independent issue pipelines, each with its own µthread slots and
                        vector lanes; the issue width.
    slots:              µthread slots per sub-core.
    instruction_words:  64-bit words of the kernel instruction memory.
    argument_blocks:    argument blocks of 16 64-bit words each.
    scratchpad_bytes:   scratchpad size; a multiple of the sector size.
    divide_units:       divide / square-root units per sub-core, shared by the lanes (a
                        vector divide takes ``lanes / divide_units`` passes); ``None``: one
                        per lane.
    fma_units:          fused multiply-add units of each sub-core's FMA lanes and of the
                        scratchpad's atomics, shared by the lanes: a vector passes them in
                        ``lanes / fma_units`` groups of lanes, one group a cycle (the
                        results are the same; an FMA-class instruction or a scratchpad
                        add or multiply-add occupies them that many cycles); ``None``: one
                        per lane.
    misc_units:         units of each sub-core's single-cycle vector lanes (FP minimum,
                        maximum, comparisons, select and sign; integer lane arithmetic;
                        moves), shared by the lanes as the FMA units are: a vector passes
                        them in ``lanes / misc_units`` groups, one a cycle; ``None``: one
                        per lane.
    watchdog_cycles:    reset value of the per-µthread watchdog (cycles from start to exit).
    ordered_atomics:    atomics per µthread of an ordered entry that may wait for its turn
                        (a power of two); a µthread with more waits at dispatch.
    in_flight:          instructions of one µthread in flight at once (sent to their units,
                        not yet written back). Above 1, a scoreboard of register ready bits
                        lets a µthread issue its next instruction, in program order, while
                        earlier ones it does not depend on are in flight, at the cost of the
                        scoreboard and a third read port of each sub-core's instruction
                        memory; 1: a µthread waits for each instruction to complete.
    reduce_tree:        reductions (``vredsum``, ``vredmax``) on a tree of pipelined adders
                        and one of maximum units, an instruction a cycle; False: on one
                        adder and one maximum unit, an instruction at a time (about 30
                        cycles each at eight lanes), for a seventh of the logic.
    writeback_spills:   a spill register behind each in-order unit's answer (two behind each
                        scalar unit), so that a unit whose answer loses write-back's merge
                        still takes the next instruction; False: it holds, and DISPATCH
                        replays what it offers meanwhile (for fewer LUTs in the sub-core's
                        busiest wiring).
    vector_read_ports:  read ports of each sub-core's vector registers, each a copy of them
                        (block RAM): 3, one per source operand; 2: the third operand
                        (``c``; the multiply-adds', ``vsel``'s and ``samo.fma``'s) is read
                        through the first port a cycle later, in OPERANDS, so the
                        instruction after one that reads a vector register ``c`` is picked
                        a cycle later (a copy less of the registers and its wiring, where
                        an FPGA's routing is most crowded).
    memory_queue:       memory operations the load/store unit holds behind its request
                        register while the memory port serves the GPU, so that DISPATCH
                        goes on issuing instead of replaying them (each replay costs an
                        issue cycle and the µthread a pass through the pipeline); they
                        leave in order, in port cycles the GPU leaves. 0: the request
                        register alone.
    pipelined:          register the streams between the engine's shared parts (trigger
                        events into the spawner, the ordering station into the scratchpad,
                        the µthreads' memory operations into the load/store unit) and the
                        µthreads' retirements into the entry control, so that no cycle
                        spans the handshakes of several units; each adds a cycle on its
                        path. What an FPGA build needs for its clock (docs/engine.md,
                        "The pipelined engine").
    posted_stores:      a store leaves its µthread when DISPATCH sends it to the load/store
                        unit: it takes no answer in write-back and the µthread goes on (or
                        ends, freeing its slot) at once; an entry is complete, and its
                        finalizer starts, only once the port has taken every store of it
                        (docs/engine.md, "Posted stores"). False: a store is answered when
                        the port takes it, like a load when its data returns.
    memory_first:       PICK prefers the µthreads whose next instruction accesses memory,
                        while the load/store unit has room for it, so that the memory port is
                        kept busy and µthreads waiting for loads are few (docs/engine.md,
                        "Memory first"); it needs the scoreboard's look at the next
                        instruction (``in_flight`` above 1). False: round robin among all.
    """

    sub_cores: int = 1
    slots: int = 16
    instruction_words: int = 1024
    argument_blocks: int = 32
    scratchpad_bytes: int = 32768
    divide_units: int | None = None
    fma_units: int | None = None
    misc_units: int | None = None
    watchdog_cycles: int = 1 << 16
    ordered_atomics: int = 4
    in_flight: int = 4
    reduce_tree: bool = True
    writeback_spills: bool = True
    vector_read_ports: int = 3
    memory_queue: int = 4
    pipelined: bool = False
    posted_stores: bool = True
    memory_first: bool = True

    def __post_init__(self):
        _check_ints(self)
        for name in ("reduce_tree", "writeback_spills", "pipelined", "posted_stores",
                     "memory_first"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"EngineConfig.{name} must be a bool, not {getattr(self, name)!r}")
        _check_range(self, "sub_cores", 1, 8)
        if not _is_power_of_two(self.slots) or not 2 <= self.slots <= 64:
            raise ValueError(f"EngineConfig.slots must be a power of two in 2..64, not {self.slots}")
        if not _is_power_of_two(self.instruction_words) or not 64 <= self.instruction_words <= 16384:
            raise ValueError(f"EngineConfig.instruction_words must be a power of two in 64..16384, "
                             f"not {self.instruction_words}")
        if not _is_power_of_two(self.argument_blocks) or not 1 <= self.argument_blocks <= 256:
            raise ValueError(f"EngineConfig.argument_blocks must be a power of two in 1..256, "
                             f"not {self.argument_blocks}")
        if not _is_power_of_two(self.scratchpad_bytes) or not 256 <= self.scratchpad_bytes <= 1 << 20:
            raise ValueError(f"EngineConfig.scratchpad_bytes must be a power of two in 256..1048576, "
                             f"not {self.scratchpad_bytes}")
        for name in ("divide_units", "fma_units", "misc_units"):
            units = getattr(self, name)
            if units is not None and (isinstance(units, bool) or not isinstance(units, int) or
                                      not _is_power_of_two(units) or not 1 <= units <= 32):
                raise ValueError(f"EngineConfig.{name} must be a power of two in 1..32, "
                                 f"not {units}")
        _check_range(self, "watchdog_cycles", 16, (1 << 32) - 1)
        if not _is_power_of_two(self.ordered_atomics) or not 1 <= self.ordered_atomics <= 16:
            raise ValueError(f"EngineConfig.ordered_atomics must be a power of two in 1..16, "
                             f"not {self.ordered_atomics}")
        _check_range(self, "in_flight", 1, 8)
        _check_range(self, "vector_read_ports", 2, 3)
        _check_range(self, "memory_queue", 0, 64)
        if self.memory_first and self.in_flight == 1:
            raise ValueError("EngineConfig.memory_first needs the scoreboard's look at the next "
                             "instruction (in_flight above 1); with in_flight 1, set "
                             "memory_first=False")

    @property
    def slot_bits(self):
        """Bits of a slot index within a sub-core."""
        return max(1, (self.slots - 1).bit_length())

    @property
    def thread_bits(self):
        """Bits of a µthread's slot index across all sub-cores."""
        return max(1, (self.sub_cores * self.slots - 1).bit_length())

    @property
    def pc_bits(self):
        return (self.instruction_words - 1).bit_length()


@dataclass(frozen=True)
class ArbiterConfig:
    """The memory-side arbiter between the GPU path and the engine.

    ndp_share_period: while an engine request waits, at least one memory slot in this many
                      goes to the engine even under a saturating GPU stream; 0 gives the
                      engine only the cycles the GPU leaves idle.
    """

    ndp_share_period: int = 16

    def __post_init__(self):
        _check_ints(self)
        if self.ndp_share_period != 0:
            _check_range(self, "ndp_share_period", 2, 1 << 16)


@dataclass(frozen=True)
class NDPConfig:
    """Parameters of one NDP slice (one GPU memory channel).

    addr_width:    GPU physical address bits.
    sector_bytes:  bytes per memory request (one L2 sector).
    id_width:      request tag bits; a tag is unique among a channel's outstanding reads.
    counter_width: width of hit and stall counters (wrap-around).
    trigger:       the trigger's parameters (:class:`TriggerConfig`).
    engine:        the NDP engine's parameters (:class:`EngineConfig`), or ``None`` for a
                   slice of the trigger alone, whose events leave on a port.
    arbiter:       the memory-side arbiter's parameters (:class:`ArbiterConfig`).
    """

    addr_width: int = 40
    sector_bytes: int = 32
    id_width: int = 8
    counter_width: int = 32
    trigger: TriggerConfig = field(default_factory=TriggerConfig)
    engine: EngineConfig | None = field(default_factory=EngineConfig)
    arbiter: ArbiterConfig = field(default_factory=ArbiterConfig)

    def __post_init__(self):
        _check_ints(self)
        for name, kind in (("trigger", TriggerConfig), ("engine", EngineConfig),
                           ("arbiter", ArbiterConfig)):
            if name == "engine" and self.engine is None:
                continue
            if not isinstance(getattr(self, name), kind):
                raise TypeError(f"NDPConfig.{name} must be a {kind.__name__}, "
                                f"not {getattr(self, name)!r}")
        _check_range(self, "addr_width", 16, 64)
        if not _is_power_of_two(self.sector_bytes) or not 4 <= self.sector_bytes <= 128:
            raise ValueError(f"NDPConfig.sector_bytes must be a power of two in 4..128, "
                             f"not {self.sector_bytes}")
        _check_range(self, "id_width", 1, 12)
        _check_range(self, "counter_width", 8, 32)
        if self.engine is None:
            if self.trigger.gather_sectors:
                raise ValueError("arrival gathering starts the engine's µthreads: a slice "
                                 "without an engine has no gathering table "
                                 "(TriggerConfig.gather_sectors must be 0)")
            return
        if self.lanes < 2:
            raise ValueError(f"the engine needs sectors of at least 8 bytes (two lanes), not "
                             f"{self.sector_bytes}; use NDPConfig(engine=None) for a slice "
                             f"of the trigger alone")
        for name in ("divide_units", "fma_units", "misc_units"):
            units = getattr(self.engine, name)
            if units is not None and units > self.lanes:
                raise ValueError(f"EngineConfig.{name} ({units}) exceeds the {self.lanes} lanes "
                                 f"of a {self.sector_bytes}-byte sector")
        if self.engine.scratchpad_bytes < self.sector_bytes:
            raise ValueError(f"EngineConfig.scratchpad_bytes ({self.engine.scratchpad_bytes}) is "
                             f"smaller than one {self.sector_bytes}-byte sector")

    @property
    def data_width(self):
        return self.sector_bytes * 8

    @property
    def offset_bits(self):
        """Address bits below one sector."""
        return (self.sector_bytes - 1).bit_length()

    @property
    def lanes(self):
        """32-bit elements per sector: the width of a vector register."""
        return self.sector_bytes // 4

    @property
    def ndp_id_width(self):
        """Id bits of the engine's memory requests (an id names a µthread), at least the
        GPU's."""
        return max(self.id_width, self.engine.thread_bits) if self.engine else self.id_width

    @property
    def mem_id_width(self):
        """Id bits toward the memory controller: the wider source's, plus the bit that
        names the source (GPU 0, engine 1); the GPU's alone in a slice without an engine."""
        return self.ndp_id_width + 1 if self.engine else self.id_width

    @property
    def divide_units(self):
        """Divide / square-root units per sub-core."""
        return (self.engine.divide_units or self.lanes) if self.engine else 0

    @property
    def fma_units(self):
        """Fused multiply-add units of each sub-core's FMA lanes and of the scratchpad."""
        return (self.engine.fma_units or self.lanes) if self.engine else 0

    @property
    def misc_units(self):
        """Units of each sub-core's single-cycle vector lanes (:class:`EngineConfig`)."""
        return (self.engine.misc_units or self.lanes) if self.engine else 0


# Named configurations, by name (docs/engine.md, "Named configurations"):
# - ``default``: every parameter at its default but the trigger's event queue, which holds
#   a GPU stream's events while an entry's initializer runs (the queue of 8 an FPGA build
#   of the trigger keeps fills in 32 cycles at the A100's share of one write every 4, the
#   initializers take 40 to 60), and the arbiter's share, every other memory slot to a
#   waiting engine under a saturating GPU stream (with one in 16 the engine fell behind
#   such a stream, and the stream then stopped on the full event queue while the port
#   idled on the engine's loads in flight), and 32 µthread slots, which hide a memory
#   latency of 100 cycles (with 16, ``adam`` ran 1.49 times slower at 100 than at 10;
#   with 32 and the shared units' completions after the sub-core's own answers in
#   write-back, 1.04); the host model's calibration is measured on it (``make bench``
#   ``kernel_rtl``).
# - ``channel``: sized for one triggering write per cycle, so that a kernel of a few
#   instructions per sector keeps pace with a GPU channel's stream: four sub-cores (the issue
#   width), with two divide / square-root units each instead of one per lane (the streaming
#   kernels do not divide; the finalizers' few divides take four passes), and an event
#   queue of 128, which holds a stream at one write every 4 cycles while the initializer
#   that copies a 768-column row's weights holds every slot (with 32, that stream stopped
#   249 cycles, with 64 21); the rest as in ``default``, its arbiter's share included.
# - ``fpga``: the engine in an FPGA-sized slice: one sub-core, few µthread slots, one
#   divider, one FMA unit for the eight lanes (in the FMA lanes and in the scratchpad's
#   atomics, which with one per lane were half the slice's logic; with two, the SoC around
#   the slice, at 79 % of the LFE5U-85F's LUTs, did not route) and one unit for the
#   single-cycle vector lanes (a quarter of their logic with eight), small memories, one
#   instruction in flight; four filter entries, as many as its argument blocks give
#   launches arguments of their own; one adder and one maximum unit for the reductions
#   instead of their trees (the row reductions are not what it is for); write-back without
#   spill registers (with one instruction in flight per µthread answers seldom meet, and
#   the sector-wide registers sat where the SoC's routing was most congested); two copies
#   of the vector registers instead of three (a multiply-add's or select's third operand
#   read a cycle later; the copies' wiring was a quarter of that congestion); the engine
#   pipelined (a register between each two of its shared parts whose handshakes would
#   otherwise share a cycle), for the FPGA's clock, where the trigger's one-stage match is
#   already faster than the engine (its pipelined match would take some 5 000 LUT4 more);
#   no queue of memory operations in the load/store unit (with 4 slots and one
#   instruction in flight few wait, and each would be a sector wide); stores answered
#   when the port takes them, not posted (the design placed and routed in docs/fpga.md;
#   posted stores' per-entry counters have not been through nextpnr); the GPU port and
#   the arbiter as by default.
_FPGA_LAUNCHES = 4
_STREAM_EVENT_QUEUE = TriggerConfig(event_queue_depth=32)
_ENGINE_EVERY_OTHER_SLOT = ArbiterConfig(ndp_share_period=2)
NAMED_CONFIGS = {
    "default": NDPConfig(trigger=_STREAM_EVENT_QUEUE, arbiter=_ENGINE_EVERY_OTHER_SLOT,
                         engine=EngineConfig(slots=32)),
    "channel": NDPConfig(trigger=TriggerConfig(event_queue_depth=128),
                         arbiter=_ENGINE_EVERY_OTHER_SLOT,
                         engine=EngineConfig(sub_cores=4, divide_units=2)),
    "fpga": NDPConfig(
        trigger=TriggerConfig(filter_entries=_FPGA_LAUNCHES),
        engine=EngineConfig(sub_cores=1, slots=4, instruction_words=256,
                            argument_blocks=_FPGA_LAUNCHES, scratchpad_bytes=4096,
                            divide_units=1, fma_units=1, misc_units=1, in_flight=1,
                            reduce_tree=False, writeback_spills=False, vector_read_ports=2,
                            memory_queue=0, pipelined=True, posted_stores=False,
                            memory_first=False)),
}


def named_config(name):
    """The named configuration ``name`` (:data:`NAMED_CONFIGS`); ``ValueError`` naming the
    known ones for any other name."""
    try:
        return NAMED_CONFIGS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown configuration {name!r}; known: "
                         f"{', '.join(NAMED_CONFIGS)}") from None


SLICE_VARIABLE = "MATNDP_SLICE"


def slice_config_name():
    """The name ``$MATNDP_SLICE`` gives, ``default`` when it is unset or empty:
    ``ValueError`` naming the variable and the known names for any other than those of
    :data:`NAMED_CONFIGS`."""
    name = os.environ.get(SLICE_VARIABLE) or "default"
    if name not in NAMED_CONFIGS:
        raise ValueError(f"{SLICE_VARIABLE}={name!r}: choose one of {', '.join(NAMED_CONFIGS)}")
    return name


def slice_config():
    """The named configuration ``$MATNDP_SLICE`` names (:func:`slice_config_name`): the
    slice the flows run the kernels on (``make sim``'s co-simulation, ``matndp kernel``,
    the batch harness, the soak, ``make bench``'s calibration) and the host model's costs
    are measured on."""
    return NAMED_CONFIGS[slice_config_name()]
