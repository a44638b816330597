"""Flash tier device model: channels × dies × planes with per-die and per-channel queueing.

A request of N bytes is cut into flash pages and striped round-robin over all dies (channels
vary fastest, so consecutive pages land on different channels). Each die and each channel
keeps the time it becomes free; a request waits for them, which is how requests queue behind
one another (a read that lands on a die busy programming waits for the program to finish).

Reads: the die senses ``planes`` pages per array read (multi-plane), then the pages cross
the channel bus; a die's array reads overlap the bus transfers of earlier pages (cache
read), so a channel finishes at the later of its bus-bound and die-bound times.
Programs: pages cross the bus first, then each die programs ``planes`` pages at a time.
A ``duplex`` device gives reads and programs separate dies and buses (the two directions of
an SSD that never make each other wait, as G10's simulator models its SSD: a read and a
write stream at full bandwidth each); otherwise they share them.

This is a throughput-and-queueing model at request granularity, not a per-page event
simulation: a few hundred arithmetic operations per request whatever its size, so a
training iteration moving gigabytes costs milliseconds to simulate.
"""

from dataclasses import dataclass, field, replace
from math import ceil

from ..registry import Registry


__all__ = ["FlashConfig", "FLASH_PRESETS", "flash_preset", "FlashDevice"]


@dataclass(frozen=True)
class FlashConfig:
    """One flash device (or an array of ``devices`` identical ones, striped)."""

    name: str
    channels: int
    dies_per_channel: int
    planes_per_die: int
    page_bytes: int
    read_latency_s: float          # tR: array read of one (multi-plane) page
    program_latency_s: float       # tPROG
    channel_bytes_per_s: float     # NAND bus bandwidth per channel
    read_energy_j_per_page: float
    program_energy_j_per_page: float
    bus_energy_j_per_byte: float   # NAND interface I/O
    cost_usd_per_gb: float
    devices: int = 1
    # Reads and programs on separate resources (no read ever waits for a program).
    duplex: bool = False
    source: str = field(default="", compare=False)

    def __post_init__(self):
        for name in ("channels", "dies_per_channel", "planes_per_die", "page_bytes", "devices"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"flash {self.name!r}: {name} must be a positive integer, got {value!r}")
        if not isinstance(self.duplex, bool):
            raise ValueError(f"flash {self.name!r}: duplex must be true or false, got {self.duplex!r}")
        for name in ("read_latency_s", "program_latency_s", "channel_bytes_per_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"flash {self.name!r}: {name} must be positive")
        for name in ("read_energy_j_per_page", "program_energy_j_per_page",
                     "bus_energy_j_per_byte", "cost_usd_per_gb"):
            if getattr(self, name) < 0:
                raise ValueError(f"flash {self.name!r}: {name} must not be negative")

    @property
    def total_channels(self):
        return self.channels * self.devices

    @property
    def dies(self):
        return self.total_channels * self.dies_per_channel

    @property
    def read_bytes_per_s(self):
        """Sustained read bandwidth: the lower of the bus and the array."""
        array = self.dies * self.planes_per_die * self.page_bytes / self.read_latency_s
        return min(array, self.total_channels * self.channel_bytes_per_s)

    @property
    def program_bytes_per_s(self):
        array = self.dies * self.planes_per_die * self.page_bytes / self.program_latency_s
        return min(array, self.total_channels * self.channel_bytes_per_s)


# NAND chip energy = VCC × ICC × operation time, with the ONFI-typical active current of
# 25 mA at 3.3 V (≈ 83 mW per die during an array operation; FlashPower, Mohan et al.,
# IEEE TCAD 2013, validates chip powers of this order). Bus I/O: 4 pJ/bit (assumption for
# a 1.2 V toggle interface). Costs are street prices per GB (see docs/tiering.md).
_DIE_ACTIVE_W = 3.3 * 0.025
_BUS_J_PER_BYTE = 8 * 4e-12

FLASH_PRESETS = Registry("flash preset", (
    # Samsung Z-NAND (SLC): tR 3 µs, tPROG 100 µs, 4 KiB pages (ISSCC 2018); 8 channels at
    # 400 MB/s give the 3.2 GB/s of the SZ985 Z-SSD.
    FlashConfig(
        name="zssd", channels=8, dies_per_channel=4, planes_per_die=2, page_bytes=4096,
        read_latency_s=3e-6, program_latency_s=100e-6, channel_bytes_per_s=400e6,
        read_energy_j_per_page=_DIE_ACTIVE_W * 3e-6,
        program_energy_j_per_page=_DIE_ACTIVE_W * 100e-6,
        bus_energy_j_per_byte=_BUS_J_PER_BYTE, cost_usd_per_gb=0.50,
        source="Z-NAND ISSCC 2018 (tR, tPROG, page); Z-SSD SZ985 3.2 GB/s"),
    # Samsung TLC V-NAND: tR 45-60 µs, tPROG 500-700 µs, 16 KiB pages; 8 channels at
    # 800 MB/s (Toggle DDR 4.0), as in a PCIe 4.0 TLC SSD.
    FlashConfig(
        name="tlc", channels=8, dies_per_channel=4, planes_per_die=2, page_bytes=16384,
        read_latency_s=50e-6, program_latency_s=600e-6, channel_bytes_per_s=800e6,
        read_energy_j_per_page=_DIE_ACTIVE_W * 50e-6,
        program_energy_j_per_page=_DIE_ACTIVE_W * 600e-6,
        bus_energy_j_per_byte=_BUS_J_PER_BYTE, cost_usd_per_gb=0.08,
        source="Samsung TLC V-NAND tR 45-60 µs, tPROG 500-700 µs, 16 KiB pages"),
))


def flash_preset(name, *, devices=1):
    """The preset registered as ``name``, as an array of ``devices`` striped devices."""
    return replace(FLASH_PRESETS.lookup(name), devices=devices)


class FlashDevice:
    """Timing and counters of one flash tier; ``read``/``program`` return completion times."""

    def __init__(self, config):
        self.config = config
        self.die_free = [0.0] * config.dies
        self.channel_free = [0.0] * config.total_channels
        # Programs' own dies and buses when the device is duplex (else the same lists).
        self.program_die_free = [0.0] * config.dies if config.duplex else self.die_free
        self.program_channel_free = ([0.0] * config.total_channels if config.duplex
                                     else self.channel_free)
        self._next_die = 0
        self.stats = {"page_reads": 0, "page_programs": 0, "read_requests": 0,
                      "program_requests": 0, "bus_bytes": 0, "energy_j": 0.0}

    def _stripe(self, pages):
        """Pages per die for a request starting at the rotating die pointer."""
        dies = self.config.dies
        base, extra = divmod(pages, dies)
        counts = [base] * dies
        for k in range(extra):
            counts[(self._next_die + k) % dies] += 1
        self._next_die = (self._next_die + pages) % dies
        return counts

    def _dies_of_channel(self, channel):
        # Die d sits on channel d % channels: consecutive pages alternate channels.
        return range(channel, self.config.dies, self.config.total_channels)

    def read(self, nbytes, at):
        config = self.config
        pages = ceil(nbytes / config.page_bytes)
        if pages == 0:
            return at
        counts = self._stripe(pages)
        transfer = config.page_bytes / config.channel_bytes_per_s
        done = at
        for channel in range(config.total_channels):
            first_ready = None
            bus_pages = 0
            die_bound = at
            for die in self._dies_of_channel(channel):
                n = counts[die]
                if not n:
                    continue
                start = max(at, self.die_free[die])
                array_done = start + ceil(n / config.planes_per_die) * config.read_latency_s
                self.die_free[die] = array_done
                ready = start + config.read_latency_s
                first_ready = ready if first_ready is None else min(first_ready, ready)
                # The last array read's pages still have to cross the bus.
                die_bound = max(die_bound, array_done + min(n, config.planes_per_die) * transfer)
                bus_pages += n
            if not bus_pages:
                continue
            bus_start = max(first_ready, self.channel_free[channel])
            channel_done = max(bus_start + bus_pages * transfer, die_bound)
            self.channel_free[channel] = channel_done
            done = max(done, channel_done)
        self.stats["page_reads"] += pages
        self.stats["read_requests"] += 1
        self.stats["bus_bytes"] += pages * config.page_bytes
        self.stats["energy_j"] += pages * (config.read_energy_j_per_page
                                           + config.page_bytes * config.bus_energy_j_per_byte)
        return done

    def program(self, nbytes, at):
        config = self.config
        pages = ceil(nbytes / config.page_bytes)
        if pages == 0:
            return at
        counts = self._stripe(pages)
        transfer = config.page_bytes / config.channel_bytes_per_s
        die_free, channel_free = self.program_die_free, self.program_channel_free
        done = at
        for channel in range(config.total_channels):
            bus_start = max(at, channel_free[channel])
            sent = 0
            for die in self._dies_of_channel(channel):
                n = counts[die]
                if not n:
                    continue
                sent += n
                # A die starts programming once its first multi-plane batch has arrived;
                # later batches arrive while it programs (cache program).
                arrived = bus_start + (sent - n + min(n, config.planes_per_die)) * transfer
                start = max(die_free[die], arrived)
                die_done = start + ceil(n / config.planes_per_die) * config.program_latency_s
                die_free[die] = die_done
                done = max(done, die_done)
            if sent:
                channel_free[channel] = bus_start + sent * transfer
        self.stats["page_programs"] += pages
        self.stats["program_requests"] += 1
        self.stats["bus_bytes"] += pages * config.page_bytes
        self.stats["energy_j"] += pages * (config.program_energy_j_per_page
                                           + config.page_bytes * config.bus_energy_j_per_byte)
        return done
