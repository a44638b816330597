"""The register bus as the host runtime sees it: synchronous 32-bit reads and writes.

Implementations: :class:`RegisterModelBus` (a behavioural model of the register map, for
host-only tests and dry runs), the co-simulation adapter in ``sim/csr_adapter.py`` and,
on an FPGA, a memory-mapped window.
"""

from abc import ABC, abstractmethod

from matndp.hw.csr_map import MAGIC, VERSION


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
    """A register map in Python: stores writable fields, reads constants for the identity
    registers, refuses what the hardware refuses. It models no counting."""

    def __init__(self, register_map, config):
        self.register_map = register_map
        self.values = {register.address: 0 for register in register_map}
        self.values[register_map["id"].address] = MAGIC
        self.values[register_map["version"].address] = VERSION
        self.values[register_map["config"].address] = (
            config.trigger.filter_entries | config.sector_bytes << 8 | config.addr_width << 16 |
            config.id_width << 24)
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
        if not 0 <= value < 1 << 32:
            raise ValueError(f"value {value:#x} does not fit a 32-bit register")
        kept = 0
        for field in register.fields:
            if field.access != "ro":
                kept |= ((1 << field.width) - 1) << field.lsb
        self.values[address] = value & kept
        self.log.append(("write", address, value))
