"""A memory controller model for the ``mem`` port: numpy-backed storage, fixed latency,
a bandwidth limit and optional random back-pressure and out-of-order read responses.

Writes take effect when accepted; a read returns the memory contents at the moment it
was accepted, so the model is sequentially consistent in request order.
"""

from collections import deque
from dataclasses import dataclass
import random

import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge

from hw.layouts import request_layout, response_layout
from .drivers.packing import StructCodec


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

    def _sector(self, index):
        if index not in self.sectors:
            self.sectors[index] = np.zeros(self.sector_bytes, dtype=np.uint8)
        return self.sectors[index]

    def write(self, addr, data, mask):
        """``data``: the sector as an int (byte 0 in the low bits); ``mask``: byte enables."""
        if addr % self.sector_bytes:
            raise ValueError(f"address {addr:#x} is not sector-aligned")
        sector = self._sector(addr // self.sector_bytes)
        incoming = np.frombuffer(data.to_bytes(self.sector_bytes, "little"), dtype=np.uint8)
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
    def __init__(self, dut, clock, cycles, config, timing=MemoryTiming(), *, prefix="mem", seed=0):
        self.clock = clock
        self.cycles = cycles
        self.timing = timing
        self.config = config
        self.store = SectorStore(config.sector_bytes)
        self.random = random.Random(seed)
        self.request_codec = StructCodec(request_layout(config))
        self.response_codec = StructCodec(response_layout(config))
        self.req_valid = getattr(dut, f"{prefix}__req__valid")
        self.req_ready = getattr(dut, f"{prefix}__req__ready")
        self.req_payload = getattr(dut, f"{prefix}__req__payload")
        self.resp_valid = getattr(dut, f"{prefix}__resp__valid")
        self.resp_ready = getattr(dut, f"{prefix}__resp__ready")
        self.resp_payload = getattr(dut, f"{prefix}__resp__payload")
        self.req_ready.value = 0
        self.resp_valid.value = 0
        self.requests = []             # every accepted request, in order
        self.request_cycles = []
        self.response_cycles = []
        self._in_flight = deque()      # (due cycle, id, data)
        self._credit = 0.0

    async def run_requests(self):
        sector = self.config.sector_bytes
        while True:
            self._credit = min(self._credit + self.timing.bytes_per_cycle, max(sector, self.timing.bytes_per_cycle))
            accepting = self._credit >= sector and self.random.random() >= self.timing.request_pause
            self.req_ready.value = int(accepting)
            await ReadOnly()
            if accepting and int(self.req_valid.value):
                now = self.cycles.now()
                request = self.request_codec.unpack(self.req_payload.value.to_unsigned())
                self.requests.append(request)
                self.request_cycles.append(now)
                self._credit -= sector
                if request["write"]:
                    self.store.write(request["addr"], request["data"], request["mask"])
                else:
                    self._in_flight.append((now + self.timing.latency, request["id"],
                                            self.store.read(request["addr"])))
            await RisingEdge(self.clock)

    async def run_responses(self):
        offered = None
        while True:
            if offered is None:
                now = self.cycles.now()
                due = [i for i, (when, *_) in enumerate(self._in_flight) if when <= now]
                if due and self.random.random() >= self.timing.response_pause:
                    index = self.random.choice(due) if self.timing.reorder else due[0]
                    offered = self._in_flight[index]
                    del self._in_flight[index]
            if offered is not None:
                self.resp_valid.value = 1
                self.resp_payload.value = self.response_codec.pack({"id": offered[1], "data": offered[2]})
            else:
                self.resp_valid.value = 0
            await ReadOnly()
            if offered is not None and int(self.resp_ready.value):
                self.response_cycles.append(self.cycles.now())
                offered = None
            await RisingEdge(self.clock)

    @property
    def idle(self):
        return not self._in_flight
