"""The byte-addressed memory image the instruction-set simulator runs kernels against.

A test driver places tensors in it by name (:meth:`Memory.place`), points the kernels'
argument blocks at the returned addresses and reads results back (:meth:`Memory.tensor`).
Bytes are little-endian, as the GPU's and the engine's sectors are.
"""

import numpy as np

from matndp.hw.config import NDPConfig


__all__ = ["Memory", "MemoryImageError"]


class MemoryImageError(ValueError):
    """An access outside the image, or a bad placement."""


class Memory:
    """``size`` bytes at ``base`` (both multiples of ``sector_bytes``)."""

    def __init__(self, size, base=0, sector_bytes=NDPConfig().sector_bytes):
        for name, value in (("size", size), ("base", base), ("sector_bytes", sector_bytes)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise MemoryImageError(f"Memory {name} must be a non-negative int, not {value!r}")
        if sector_bytes < 4 or sector_bytes & (sector_bytes - 1):
            raise MemoryImageError(f"sector_bytes must be a power of two of at least 4, not {sector_bytes}")
        if size == 0 or size % sector_bytes or base % sector_bytes:
            raise MemoryImageError(f"base {base:#x} and size {size:#x} must be non-zero multiples "
                                   f"of the {sector_bytes}-byte sector")
        self.base, self.size, self.sector_bytes = base, size, sector_bytes
        self.data = np.zeros(size, dtype=np.uint8)
        self.regions = {}
        self._free = base

    @property
    def end(self):
        return self.base + self.size

    def contains(self, address, nbytes):
        return self.base <= address and address + nbytes <= self.end

    def _offset(self, address, nbytes):
        if not isinstance(address, (int, np.integer)) or not self.contains(int(address), nbytes):
            raise MemoryImageError(f"{nbytes} bytes at {address:#x} are outside the memory image "
                                   f"[{self.base:#x}, {self.end:#x})")
        return int(address) - self.base

    def write(self, address, values):
        """Store the bytes of ``values`` (a numpy array or bytes) at ``address``."""
        raw = np.frombuffer(bytes(values), dtype=np.uint8) if isinstance(values, (bytes, bytearray)) \
            else np.ascontiguousarray(values).reshape(-1).view(np.uint8)
        offset = self._offset(address, raw.size)
        self.data[offset:offset + raw.size] = raw

    def read(self, address, dtype, count):
        """``count`` elements of ``dtype`` at ``address`` (a copy)."""
        dtype = np.dtype(dtype)
        offset = self._offset(address, dtype.itemsize * count)
        return self.data[offset:offset + dtype.itemsize * count].view(dtype).copy()

    def place(self, name, values, align=None):
        """Put ``values`` in the next free aligned bytes and remember them as region
        ``name``; returns the address."""
        values = np.ascontiguousarray(values)
        address = self.reserve(name, values.nbytes, align, dtype=values.dtype, shape=values.shape)
        self.write(address, values)
        return address

    def reserve(self, name, nbytes, align=None, dtype=np.uint8, shape=None):
        """Reserve ``nbytes`` zeroed bytes as region ``name``; returns the address."""
        if name in self.regions:
            raise MemoryImageError(f"region {name!r} is already placed")
        align = align or self.sector_bytes
        if align <= 0 or align & (align - 1):
            raise MemoryImageError(f"alignment must be a power of two, not {align}")
        address = -(-self._free // align) * align
        if address + nbytes > self.end:
            raise MemoryImageError(f"region {name!r} ({nbytes} bytes) does not fit: "
                                   f"{self.end - address} bytes are left")
        self.regions[name] = (address, nbytes, np.dtype(dtype),
                              shape if shape is not None else (nbytes // np.dtype(dtype).itemsize,))
        self._free = address + nbytes
        return address

    def address(self, name):
        return self._region(name)[0]

    def _region(self, name):
        if name not in self.regions:
            raise MemoryImageError(f"no region {name!r}; placed: {', '.join(self.regions) or 'none'}")
        return self.regions[name]

    def tensor(self, name):
        """Region ``name`` as an array of the dtype and shape it was placed with."""
        address, nbytes, dtype, shape = self._region(name)
        return self.read(address, dtype, nbytes // dtype.itemsize).reshape(shape)
