"""The register bus as the host runtime sees it: synchronous 32-bit reads and writes.

Implementations: :class:`RegisterModelBus` (a behavioural model of the register map, for
host-only tests and dry runs), the co-simulation adapter in ``sim/csr_adapter.py`` and,
on an FPGA, a memory-mapped window.
"""

from abc import ABC, abstractmethod

from matndp.hw.bus.map import Access
from matndp.hw.bus.signature import CSR_DATA_WIDTH


__all__ = ["CSRBus", "CSRAccessError", "RegisterModelBus"]


class CSRAccessError(RuntimeError):
    """The device flagged an access as an error (unmapped address or read-only register)."""


class CSRBus(ABC):
    @abstractmethod
    def read(self, address):
        """Return the 32-bit register at ``address``; raise :class:`CSRAccessError` on a bus error."""

    @abstractmethod
    def write(self, address, value):
        """Write a 32-bit value; raise :class:`CSRAccessError` on a bus error."""


class RegisterModelBus(CSRBus):
    """A register map in Python: reads every register's reset value (constants included),
    stores what a write gives ``RW`` and ``LOAD`` fields, clears ``W1C`` bits written as 1,
    ignores the bits of other fields, and refuses what the hardware refuses. It models no
    counting and no status: hardware-owned fields change only by bus writes (or by a test
    setting :attr:`values`, register words by address)."""

    def __init__(self, register_map):
        self.register_map = register_map
        self.values = {register.address: register.reset_value for register in register_map}
        self.log = []

    def _register(self, address):
        register = self.register_map.at(address)
        if register is None:
            raise CSRAccessError(f"no register at {address:#x}")
        return register

    def read(self, address):
        self._register(address)
        self.log.append(("read", address))
        return self.values[address]

    def write(self, address, value):
        register = self._register(address)
        if not register.writable:
            raise CSRAccessError(f"register {register.name} at {address:#x} is read-only")
        if not isinstance(value, int) or not 0 <= value < 1 << CSR_DATA_WIDTH:
            raise ValueError(f"value {value!r} does not fit a {CSR_DATA_WIDTH}-bit register")
        fields = register.unpack(self.values[address])
        for field in register.fields:
            written = field.extract(value)
            if field.access in (Access.RW, Access.LOAD):
                fields[field.name] = written
            elif field.access is Access.W1C:
                fields[field.name] &= ~written
        self.values[address] = register.pack(**fields)
        self.log.append(("write", address, value))
