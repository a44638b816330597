"""The register bus as the host runtime sees it: synchronous 32-bit reads and writes.

Implementations: :class:`RegisterModelBus` (a behavioural model of the register map and its
windows, for host-only tests and dry runs), the co-simulation adapter in
``sim/drivers/csr_adapter.py`` and, on an FPGA, a memory-mapped window.
"""

from abc import ABC, abstractmethod

import numpy

from matndp.hw.bus.map import Access
from matndp.hw.bus.signature import CSR_DATA_WIDTH


__all__ = ["CSRBus", "CSRAccessError", "RegisterModelBus"]


_WORD_BYTES = CSR_DATA_WIDTH // 8


class CSRAccessError(RuntimeError):
    """The device flagged an access as an error (an address of no register and no window,
    a misaligned address, or a write to something read-only)."""


class CSRBus(ABC):
    """Word access to an NDP slice's register bus: what :class:`~matndp.host.runtime.NDPRuntime`
    drives. Implementations: the register model (:class:`RegisterModelBus`), the simulated
    bus in co-simulation, a memory-mapped device on hardware."""

    @abstractmethod
    def read(self, address):
        """Return the 32-bit word at ``address``; raise :class:`CSRAccessError` on a bus error."""

    @abstractmethod
    def write(self, address, value):
        """Write a 32-bit value; raise :class:`CSRAccessError` on a bus error."""

    def read_words(self, address, count):
        """The ``count`` 32-bit words from ``address`` up, one access each, in address order;
        stops at the first bus error. Implementations may do it faster."""
        return [self.read(address + _WORD_BYTES * index) for index in range(count)]

    def write_words(self, address, words):
        """Write ``words`` (32-bit values) from ``address`` up, one access each, in address
        order; stops at the first bus error. Implementations may do it faster."""
        for index, word in enumerate(words):
            self.write(address + _WORD_BYTES * index, word)


class RegisterModelBus(CSRBus):
    """A register map in Python: reads every register's reset value (constants included),
    stores what a write gives ``RW`` and ``LOAD`` fields, clears ``W1C`` bits written as 1,
    ignores the bits of other fields, and refuses what the hardware refuses. It models no
    counting and no status: hardware-owned fields change only by bus writes (or by a test
    setting :attr:`values`, register words by address).

    Each window is memory (:meth:`window_bytes`, zero at start) with the window's rules:
    what the hardware behind a window does with it is not modelled."""

    def __init__(self, register_map):
        self.register_map = register_map
        self.values = {register.address: register.reset_value for register in register_map}
        self._windows = {window.name: numpy.zeros(window.size, dtype=numpy.uint8)
                         for window in register_map.windows}
        self.log = []

    def window_bytes(self, name):
        """The bytes of window ``name`` (a numpy ``uint8`` array; writes to it show on the bus)."""
        self.register_map.window(name)
        return self._windows[name]

    def _target(self, address, write):
        """The register at ``address``, or (window, its bytes at ``address``)."""
        register = self.register_map.at(address)
        if register is not None:
            if write and not register.writable:
                raise CSRAccessError(f"register {register.name} at {address:#x} is read-only")
            return register
        window = self.register_map.window_at(address)
        if window is None:
            raise CSRAccessError(f"no register at {address:#x}, nor a window")
        if address % _WORD_BYTES:
            raise CSRAccessError(f"{address:#x} in window {window.name} is not aligned to "
                                 f"{_WORD_BYTES} bytes")
        if not (window.writable if write else window.readable):
            raise CSRAccessError(f"window {window.name} at {address:#x} is not "
                                 f"{'writable' if write else 'readable'}")
        offset = address - window.base
        return window, self._windows[window.name][offset:offset + _WORD_BYTES]

    def read(self, address):
        target = self._target(address, write=False)
        self.log.append(("read", address))
        if isinstance(target, tuple):
            return int(target[1].view("<u4")[0])
        return self.values[address]

    def write(self, address, value):
        target = self._target(address, write=True)
        if not isinstance(value, int) or not 0 <= value < 1 << CSR_DATA_WIDTH:
            raise ValueError(f"value {value!r} does not fit a {CSR_DATA_WIDTH}-bit register")
        self.log.append(("write", address, value))
        if isinstance(target, tuple):
            target[1].view("<u4")[0] = value
            return
        register = target
        fields = register.unpack(self.values[address])
        for field in register.fields:
            written = field.extract(value)
            if field.access in (Access.RW, Access.LOAD):
                fields[field.name] = written
            elif field.access is Access.W1C:
                fields[field.name] &= ~written
        self.values[address] = register.pack(**fields)
