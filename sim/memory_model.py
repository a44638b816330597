"""A memory controller model for the ``mem`` port: numpy-backed storage, fixed latency,
a bandwidth limit and optional random back-pressure and out-of-order read responses.

Writes take effect when accepted; a read returns the memory contents at the moment it
was accepted, so the model is sequentially consistent in request order. The model is a
:class:`~sim.drivers.stream.CycleLoop` participant.
"""

from collections import deque
from dataclasses import dataclass
import random

import numpy as np

from matndp.hw.layouts import request_layout, response_layout
from .drivers.packing import StructCodec
from .drivers.stream import CachedWrite


__all__ = ["MemoryTiming", "SectorStore", "MemoryModel"]


@dataclass(frozen=True)
class MemoryTiming:
    """latency:          cycles from accepting a read to offering its response.
    bytes_per_cycle:  sustained bandwidth; requests are accepted while credit lasts.
    request_pause:    probability of withholding ``req.ready`` in a cycle.
    response_pause:   probability of withholding a due response in a cycle.
    reorder:          return due read responses in random order rather than issue order.
    """

    latency: int = 8
    bytes_per_cycle: float = 32.0
    request_pause: float = 0.0
    response_pause: float = 0.0
    reorder: bool = False

    def __post_init__(self):
        if self.latency < 1:
            raise ValueError(f"latency must be at least 1 cycle, not {self.latency}")
        if self.bytes_per_cycle <= 0:
            raise ValueError(f"bytes_per_cycle must be positive, not {self.bytes_per_cycle}")
        for name in ("request_pause", "response_pause"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be in [0, 1), not {getattr(self, name)}")


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


class MemoryModel:
    def __init__(self, dut, config, timing=MemoryTiming(), *, prefix="mem", seed=0):
        self.timing = timing
        self.config = config
        self.store = SectorStore(config.sector_bytes)
        self.random = random.Random(seed)
        self.request_codec = StructCodec(request_layout(config))
        self.response_codec = StructCodec(response_layout(config))
        self._req_valid = getattr(dut, f"{prefix}__req__valid")
        self._req_payload = getattr(dut, f"{prefix}__req__payload")
        self._resp_ready = getattr(dut, f"{prefix}__resp__ready")
        self.req_ready = CachedWrite(getattr(dut, f"{prefix}__req__ready"))
        self.resp_valid = CachedWrite(getattr(dut, f"{prefix}__resp__valid"))
        self.resp_payload = CachedWrite(getattr(dut, f"{prefix}__resp__payload"))
        self.requests = []             # every accepted request, in order
        self.request_cycles = []
        self.response_cycles = []
        self._in_flight = deque()      # (due cycle, id, data), in due order
        self._credit = 0.0
        self._accepting = False
        self._offered = None
        self._now = 0

    def drive(self):
        sector = self.config.sector_bytes
        timing = self.timing
        self._credit = min(self._credit + timing.bytes_per_cycle, max(sector, timing.bytes_per_cycle))
        self._accepting = self._credit >= sector and (
            timing.request_pause == 0.0 or self.random.random() >= timing.request_pause)
        self.req_ready.set(int(self._accepting))

        if self._offered is None and self._in_flight and self._in_flight[0][0] <= self._now + 1 and (
                timing.response_pause == 0.0 or self.random.random() >= timing.response_pause):
            due = 1
            if timing.reorder:
                while due < len(self._in_flight) and self._in_flight[due][0] <= self._now + 1:
                    due += 1
            index = self.random.randrange(due) if due > 1 else 0
            self._offered = self._in_flight[index]
            del self._in_flight[index]
        if self._offered is not None:
            self.resp_valid.set(1)
            self.resp_payload.set(self.response_codec.pack({"id": self._offered[1], "data": self._offered[2]}))
        else:
            self.resp_valid.set(0)

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
            self.response_cycles.append(now)
            self._offered = None

    @property
    def idle(self):
        return not self._in_flight and self._offered is None
