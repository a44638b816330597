"""What the batch harness is loaded with: the GPU's request stream (:class:`RequestStream`)
and the memory behind the slice (:class:`MemoryImage`: regions of bytes, laid out into the
harness's image and region map by :meth:`MemoryImage.layout`).
"""

from dataclasses import dataclass

import numpy as np

from matndp.sim.batch.parameters import GAP_BITS, IMAGE_SECTORS_LIMIT
from matndp.sim.batch.records import integer_column


__all__ = ["RequestStream", "MemoryImage", "ImageLayout", "StimulusError"]


class StimulusError(ValueError):
    """A stream or an image the harness cannot take as it is."""


def _as_column(name, values, count, dtype=np.uint64):
    return integer_column(f"RequestStream.{name}", values, count, StimulusError).astype(dtype)


class RequestStream:
    """GPU requests in issue order: ``addr``, ``write``, ``data`` (``(n, sector_bytes)``
    bytes), ``mask`` (byte enables, bit ``b`` for byte ``b``), ``id`` and ``gap`` (the least
    number of idle cycles before the request is offered, after the previous one's
    transfer). Reads carry no data; their mask is the bytes the GPU wants."""

    def __init__(self, config, *, addr, write, data=None, mask=None, id, gap=None):
        self.config = config
        count = len(np.asarray(addr))
        sector = config.sector_bytes
        self.addr = _as_column("addr", addr, count)
        self.write = _as_column("write", write, count, bool)
        self.id = _as_column("id", id, count)
        self.gap = np.zeros(count, dtype=np.uint64) if gap is None else _as_column("gap", gap, count)
        full = (1 << sector) - 1
        self.mask = np.full(count, full, dtype=np.uint64) if mask is None else _as_column("mask", mask, count)
        if data is None:
            data = np.zeros((count, sector), dtype=np.uint8)
        data = np.asarray(data)
        if data.shape != (count, sector) or data.dtype != np.uint8:
            raise StimulusError(f"RequestStream.data: expected a ({count}, {sector}) uint8 array, "
                                f"got {data.dtype} {data.shape}")
        self.data = data
        if count:
            if np.any(self.addr % sector):
                bad = int(self.addr[np.flatnonzero(self.addr % sector)[0]])
                raise StimulusError(f"request address {bad:#x} is not aligned to a "
                                    f"{sector}-byte sector")
            for name, bits in (("addr", config.addr_width), ("id", config.id_width),
                               ("gap", GAP_BITS), ("mask", sector)):
                column = getattr(self, name)
                if bits < 64 and int(column.max()) >> bits:
                    raise StimulusError(f"RequestStream.{name}: {int(column.max()):#x} does not fit "
                                        f"{bits} bits")

    @classmethod
    def from_requests(cls, config, requests, gaps=None):
        """From dicts with ``addr``, ``write``, ``data`` (an int, byte 0 lowest), ``mask``,
        ``id`` (the form of the per-cycle testbenches' traffic)."""
        sector = config.sector_bytes
        data = np.zeros((len(requests), sector), dtype=np.uint8)
        for row, request in enumerate(requests):
            value = int(request.get("data", 0))
            if value:
                data[row] = np.frombuffer(value.to_bytes(sector, "little"), dtype=np.uint8)
        full = (1 << sector) - 1
        return cls(config, addr=[int(r["addr"]) for r in requests],
                   write=[bool(r["write"]) for r in requests], data=data,
                   mask=[int(r.get("mask", full)) for r in requests],
                   id=[int(r["id"]) for r in requests], gap=gaps)

    def __len__(self):
        return len(self.addr)

    def __getitem__(self, index):
        if not isinstance(index, slice):
            raise TypeError("a RequestStream is sliced, not indexed")
        return RequestStream(self.config, addr=self.addr[index], write=self.write[index],
                             data=self.data[index], mask=self.mask[index], id=self.id[index],
                             gap=self.gap[index])

    @classmethod
    def concatenate(cls, streams):
        streams = list(streams)
        if not streams:
            raise StimulusError("nothing to concatenate")
        config = streams[0].config
        return cls(config, addr=np.concatenate([s.addr for s in streams]),
                   write=np.concatenate([s.write for s in streams]),
                   data=np.concatenate([s.data for s in streams]),
                   mask=np.concatenate([s.mask for s in streams]),
                   id=np.concatenate([s.id for s in streams]),
                   gap=np.concatenate([s.gap for s in streams]))

    def columns(self):
        """The record fields, as the stimulus format packs them."""
        return {"addr": self.addr, "write": self.write.astype(np.uint64), "data": self.data,
                "mask": self.mask, "id": self.id, "gap": self.gap}


@dataclass(frozen=True)
class ImageLayout:
    """Where each region of a :class:`MemoryImage` lies in the harness's image: sorted
    ``base`` sector numbers, ``sectors`` per region, ``first`` image sector, and whether
    the region is ``failing`` (it holds no image sectors and answers with an error)."""

    sector_bytes: int
    base: np.ndarray
    sectors: np.ndarray
    first: np.ndarray
    failing: np.ndarray

    @property
    def image_sectors(self):
        return int(self.sectors[~self.failing].sum())

    def _regions(self, addresses):
        """The region of each byte address (-1: none) and the sector's offset in it."""
        sector = np.asarray(addresses, dtype=np.uint64) // np.uint64(self.sector_bytes)
        region = np.searchsorted(self.base, sector, side="right").astype(np.int64) - 1
        clipped = np.maximum(region, 0)
        offset = sector.astype(np.int64) - self.base[clipped].astype(np.int64)
        inside = (region >= 0) & (offset < self.sectors[clipped].astype(np.int64))
        return np.where(inside, region, -1), offset

    def image_index(self, addresses):
        """The image sector of each byte address, -1 where it is unmapped or failing."""
        region, offset = self._regions(addresses)
        clipped = np.maximum(region, 0)
        holds = (region >= 0) & ~self.failing[clipped]
        return np.where(holds, self.first[clipped].astype(np.int64) + offset, -1)

    def failing_at(self, addresses):
        """Whether each byte address lies in a failing region."""
        region, _ = self._regions(addresses)
        return (region >= 0) & self.failing[np.maximum(region, 0)]

    def records(self):
        return {"base_sector": self.base, "sectors": self.sectors, "image_sector": self.first,
                "failing": self.failing.astype(np.uint64)}


class MemoryImage:
    """Byte regions of the slice's memory. Regions are sector-aligned (a region's size is
    rounded up to whole sectors, zero-filled); regions that touch are merged. Failing
    regions (:meth:`fail`) answer every access with an error."""

    def __init__(self, sector_bytes):
        self.sector_bytes = sector_bytes
        self._regions = {}              # base sector -> uint8 sectors array (n, sector)
        self._failing = {}              # base sector -> sectors

    def _check_free(self, addr, first, count):
        spans = [(base, len(sectors)) for base, sectors in self._regions.items()]
        for base, length in spans + list(self._failing.items()):
            if base < first + count and first < base + length:
                raise StimulusError(f"region [{addr:#x}, {addr + count * self.sector_bytes:#x}) "
                                    f"overlaps the region at {base * self.sector_bytes:#x}")

    def add(self, addr, data):
        """Place ``data`` (bytes, or an array whose bytes are taken) at byte ``addr``."""
        sector = self.sector_bytes
        if addr % sector:
            raise StimulusError(f"region address {addr:#x} is not aligned to a {sector}-byte sector")
        raw = np.frombuffer(bytes(data), dtype=np.uint8) if isinstance(data, (bytes, bytearray)) \
            else np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        if raw.size == 0:
            raise StimulusError(f"an empty region at {addr:#x}")
        count = -(-raw.size // sector)
        sectors = np.zeros((count, sector), dtype=np.uint8)
        sectors.reshape(-1)[:raw.size] = raw
        first = addr // sector
        self._check_free(addr, first, count)
        self._regions[first] = sectors
        return self

    def fail(self, addr, nbytes):
        """A failing region of ``nbytes`` at ``addr``: it holds no data, its reads are
        answered SLAVE_ERROR and its writes refused (as an AXI slave's SLVERR)."""
        sector = self.sector_bytes
        if addr % sector:
            raise StimulusError(f"region address {addr:#x} is not aligned to a {sector}-byte sector")
        if nbytes < 1:
            raise StimulusError(f"an empty failing region at {addr:#x}")
        count = -(-nbytes // sector)
        self._check_free(addr, addr // sector, count)
        self._failing[addr // sector] = count
        return self

    def reserve(self, addr, nbytes):
        """A zero-filled region of ``nbytes`` at ``addr``."""
        return self.add(addr, np.zeros(nbytes, dtype=np.uint8))

    @property
    def region_count(self):
        """How many entries of the harness's region map the image takes (regions that
        touch count as one)."""
        return len(self._merged()) + len(self._failing)

    def _merged(self):
        merged = []                     # [base sector, parts, sectors in the parts]
        for base in sorted(self._regions):
            sectors = self._regions[base]
            if merged and merged[-1][0] + merged[-1][2] == base:
                merged[-1][1].append(sectors)
                merged[-1][2] += len(sectors)
            else:
                merged.append([base, [sectors], len(sectors)])
        return [(base, np.concatenate(parts)) for base, parts, _ in merged]

    def layout(self, shape):
        """(:class:`ImageLayout`, the image as an ``(n, sector)`` array) for a harness of
        ``shape``; refuses an image that does not fit its region map or the harness's
        image index (:data:`~matndp.sim.batch.parameters.IMAGE_SECTORS_LIMIT`). The memory
        is allocated for the image when it is loaded: no build limits its size."""
        merged = self._merged()
        if self.region_count > shape.regions:
            raise StimulusError(f"the memory image has {self.region_count} separate regions; the "
                                f"harness's region map holds {shape.regions} "
                                f"(HarnessShape.regions)")
        sizes = np.array([len(sectors) for _, sectors in merged], dtype=np.uint64)
        total = int(sizes.sum())
        if total > IMAGE_SECTORS_LIMIT:
            raise StimulusError(f"the memory image needs {total} sectors; the harness's image "
                                f"index reaches {IMAGE_SECTORS_LIMIT}")
        first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.uint64) if merged \
            else np.zeros(0, dtype=np.uint64)
        # Every region in base order, the failing ones (no image sectors) among them.
        rows = sorted([(base, int(size), int(start), False) for (base, _), size, start
                       in zip(merged, sizes, first)] +
                      [(base, count, 0, True) for base, count in self._failing.items()])
        columns = list(zip(*rows)) if rows else [(), (), (), ()]
        layout = ImageLayout(self.sector_bytes, *[np.array(column, dtype=np.uint64)
                                                  for column in columns[:3]],
                             np.array(columns[3], dtype=bool))
        image = np.concatenate([sectors for _, sectors in merged]) if merged \
            else np.zeros((0, self.sector_bytes), dtype=np.uint8)
        return layout, image
