"""A memory controller model for the ``mem`` port: numpy-backed storage, fixed latency,
a bandwidth limit, back-pressure and idle cycles from pause patterns, and optional
out-of-order read responses.

Writes take effect when accepted; a read returns the memory contents at the moment it
was accepted, so the model is sequentially consistent in request order. The model is a
:class:`~matndp.sim.drivers.stream.Participant` of a cycle loop.

Reset: the model shares the reset of the design it serves. While reset is high it
neither accepts requests nor offers responses; the read responses still in flight when
a reset begins are discarded (counted in ``discarded_reads``), since the design that
issued them no longer expects them. Stored data survives a reset.
"""

from collections import deque
from dataclasses import dataclass, field
import random

import numpy as np

from matndp.hw.layouts import ResponseStatus, request_layout, response_layout
from matndp.sim.drivers.packing import StructCodec
from matndp.sim.drivers.pause import NoPause, PausePattern
from matndp.sim.drivers.stream import CachedWrite, Participant, stream_signal


__all__ = ["MemoryTiming", "SectorStore", "MemoryModel"]


@dataclass(frozen=True)
class MemoryTiming:
    """latency:          cycles from accepting a read to offering its response.
    bytes_per_cycle:  sustained bandwidth; requests are accepted while credit lasts.
                      ``None``: one sector per cycle, the port's own limit.
    request_pause:    cycles in which ``req.ready`` is withheld (a pause pattern).
    response_pause:   cycles in which a due response is not yet offered (a pause pattern).
    reorder:          return due read responses in random order rather than issue order.
    """

    latency: int = 8
    bytes_per_cycle: float | None = None
    request_pause: PausePattern = field(default_factory=NoPause)
    response_pause: PausePattern = field(default_factory=NoPause)
    reorder: bool = False

    def __post_init__(self):
        if isinstance(self.latency, bool) or not isinstance(self.latency, int):
            raise TypeError(f"MemoryTiming.latency must be an int, not {self.latency!r}")
        if self.latency < 1:
            raise ValueError(f"MemoryTiming.latency must be at least 1 cycle, not {self.latency}")
        if self.bytes_per_cycle is not None:
            if isinstance(self.bytes_per_cycle, bool) or not isinstance(self.bytes_per_cycle, (int, float)):
                raise TypeError(f"MemoryTiming.bytes_per_cycle must be a number or None, "
                                f"not {self.bytes_per_cycle!r}")
            if not self.bytes_per_cycle > 0:
                raise ValueError(f"MemoryTiming.bytes_per_cycle must be positive, not {self.bytes_per_cycle}")
        for name in ("request_pause", "response_pause"):
            if not isinstance(getattr(self, name), PausePattern):
                raise TypeError(f"MemoryTiming.{name} must be a PausePattern, not {getattr(self, name)!r}")
        if not isinstance(self.reorder, bool):
            raise TypeError(f"MemoryTiming.reorder must be a bool, not {self.reorder!r}")


class SectorStore:
    """Sparse byte-addressable memory in sectors; unwritten bytes read as zero."""

    def __init__(self, sector_bytes):
        self.sector_bytes = sector_bytes
        self.sectors = {}

    def write(self, addr, data, mask):
        """``data``: the sector as an int (byte 0 in the low bits); ``mask``: byte enables."""
        if addr % self.sector_bytes:
            raise ValueError(f"address {addr:#x} is not sector-aligned")
        index = addr // self.sector_bytes
        if index not in self.sectors:
            self.sectors[index] = np.zeros(self.sector_bytes, dtype=np.uint8)
        sector = self.sectors[index]
        incoming = np.frombuffer(data.to_bytes(self.sector_bytes, "little"), dtype=np.uint8)
        if mask == (1 << self.sector_bytes) - 1:
            sector[:] = incoming
        else:
            enables = np.array([(mask >> i) & 1 for i in range(self.sector_bytes)], dtype=bool)
            sector[enables] = incoming[enables]

    def read(self, addr):
        if addr % self.sector_bytes:
            raise ValueError(f"address {addr:#x} is not sector-aligned")
        sector = self.sectors.get(addr // self.sector_bytes)
        return 0 if sector is None else int.from_bytes(sector.tobytes(), "little")

    def load(self, addr, array):
        """Place a numpy array's bytes at ``addr`` (sector-aligned)."""
        raw = np.ascontiguousarray(array).view(np.uint8).ravel()
        full = self.sector_bytes * -(-len(raw) // self.sector_bytes)
        padded = np.zeros(full, dtype=np.uint8)
        padded[:len(raw)] = raw
        for offset in range(0, full, self.sector_bytes):
            self.write(addr + offset, int.from_bytes(padded[offset:offset + self.sector_bytes].tobytes(),
                                                     "little"), (1 << self.sector_bytes) - 1)


class MemoryModel(Participant):
    """Serves the memory port ``<prefix>__req`` / ``<prefix>__resp`` of ``dut``.

    Records: ``requests`` and ``request_cycles`` (every accepted request, in order),
    ``responses`` and ``response_cycles`` (every read response taken, in order).
    """

    def __init__(self, dut, config, timing=MemoryTiming(), *, prefix="mem", seed=0):
        if not isinstance(timing, MemoryTiming):
            raise TypeError(f"timing must be a MemoryTiming, not {timing!r}")
        self.timing = timing
        self.config = config
        self.store = SectorStore(config.sector_bytes)
        self.random = random.Random(seed)
        self._request_pauses = timing.request_pause.cycles(random.Random(seed + 1))
        self._response_pauses = timing.response_pause.cycles(random.Random(seed + 2))
        sector = config.sector_bytes
        self._bytes_per_cycle = sector if timing.bytes_per_cycle is None else timing.bytes_per_cycle
        # Credit saved while no request waits is capped, so that an idle model does not
        # build up a burst; a cap of one cycle's credit above a sector never binds while
        # requests keep coming, so the sustained rate is exactly the configured one.
        self._credit_limit = sector + self._bytes_per_cycle
        self.request_codec = StructCodec(request_layout(config))
        self.response_codec = StructCodec(response_layout(config))
        self._req_valid = stream_signal(dut, f"{prefix}__req", "valid")
        self._req_payload = stream_signal(dut, f"{prefix}__req", "payload")
        self._resp_ready = stream_signal(dut, f"{prefix}__resp", "ready")
        self.req_ready = CachedWrite(stream_signal(dut, f"{prefix}__req", "ready"))
        self.resp_valid = CachedWrite(stream_signal(dut, f"{prefix}__resp", "valid"))
        self.resp_payload = CachedWrite(stream_signal(dut, f"{prefix}__resp", "payload"))
        self.requests = []
        self.request_cycles = []
        self.responses = []
        self.response_cycles = []
        self.discarded_reads = 0
        self._in_flight = deque()      # (due cycle, id, data), in due order
        self._credit = 0.0
        self._accepting = False
        self._offered = None
        self._now = 0

    def drive(self):
        request_paused = next(self._request_pauses)
        response_paused = next(self._response_pauses)
        if self.in_reset:
            self._accepting = False
            self.req_ready.set(0)
            self.resp_valid.set(0)
            return
        sector = self.config.sector_bytes
        self._credit = min(self._credit + self._bytes_per_cycle, self._credit_limit)
        self._accepting = self._credit >= sector and not request_paused
        self.req_ready.set(int(self._accepting))

        in_flight = self._in_flight
        if self._offered is None and in_flight and in_flight[0][0] <= self._now + 1 and not response_paused:
            due = 1
            if self.timing.reorder:
                while due < len(in_flight) and in_flight[due][0] <= self._now + 1:
                    due += 1
            index = self.random.randrange(due) if due > 1 else 0
            self._offered = in_flight[index]
            del in_flight[index]
            _, tag, data = self._offered
            self.resp_payload.set(self.response_codec.pack(
                {"id": tag, "data": data, "status": ResponseStatus.OKAY.value}))
        self.resp_valid.set(int(self._offered is not None))

    def sample(self, now):
        self._now = now
        if self._accepting and int(self._req_valid.value):
            request = self.request_codec.unpack(self._req_payload.value.to_unsigned())
            self.requests.append(request)
            self.request_cycles.append(now)
            self._credit -= self.config.sector_bytes
            if request["write"]:
                self.store.write(request["addr"], request["data"], request["mask"])
            else:
                self._in_flight.append((now + self.timing.latency, request["id"],
                                        self.store.read(request["addr"])))
        if self._offered is not None and int(self._resp_ready.value):
            _, tag, data = self._offered
            self.responses.append({"id": tag, "data": data, "status": ResponseStatus.OKAY.value})
            self.response_cycles.append(now)
            self._offered = None

    def reset(self, now):
        self._now = now
        if not self.in_reset:
            self.discarded_reads += len(self._in_flight) + (self._offered is not None)
        self._in_flight.clear()
        self._offered = None
        self._accepting = False
        self._credit = 0.0

    @property
    def idle(self):
        return not self._in_flight and self._offered is None
