"""The description a register file is generated from: fields, registers, a map.

Field access kinds:

``rw``   storage in the register file; hardware sees the value.
``ro``   hardware drives the value; writes are bus errors.
``ext``  hardware owns the storage (counters, sticky flags); a bus write hands the written
         value to the hardware (``load`` semantics for counters, write-1-to-clear for flags).
"""

from dataclasses import dataclass

from .signature import CSR_DATA_WIDTH


__all__ = ["Field", "Register", "RegisterMap"]


@dataclass(frozen=True)
class Field:
    name: str
    lsb: int
    width: int
    access: str
    doc: str
    reset: int = 0

    def __post_init__(self):
        if self.access not in ("rw", "ro", "ext"):
            raise ValueError(f"field {self.name!r}: unknown access kind {self.access!r}")
        if self.width < 1 or self.lsb < 0 or self.lsb + self.width > CSR_DATA_WIDTH:
            raise ValueError(f"field {self.name!r}: bits {self.lsb}+{self.width} do not fit "
                             f"a {CSR_DATA_WIDTH}-bit register")


@dataclass(frozen=True)
class Register:
    name: str
    address: int
    fields: tuple
    doc: str
    group: str = "global"

    @property
    def writable(self):
        return any(field.access != "ro" for field in self.fields)

    def field(self, name):
        for field in self.fields:
            if field.name == name:
                return field
        raise KeyError(f"register {self.name!r} has no field {name!r}")


class RegisterMap:
    def __init__(self, registers):
        self.registers = tuple(registers)
        self._by_name = {}
        self._by_address = {}
        for register in self.registers:
            if register.address % 4:
                raise ValueError(f"register {register.name!r} at {register.address:#x} is misaligned")
            if register.address in self._by_address:
                raise ValueError(f"registers {register.name!r} and "
                                 f"{self._by_address[register.address].name!r} share {register.address:#x}")
            if register.name in self._by_name:
                raise ValueError(f"register name {register.name!r} is used twice")
            used = 0
            for field in register.fields:
                bits = ((1 << field.width) - 1) << field.lsb
                if used & bits:
                    raise ValueError(f"register {register.name!r}: field {field.name!r} overlaps another")
                used |= bits
            self._by_name[register.name] = register
            self._by_address[register.address] = register

    def __iter__(self):
        return iter(self.registers)

    def __getitem__(self, name):
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no register named {name!r}") from None

    def at(self, address):
        return self._by_address.get(address)

    @property
    def addr_width(self):
        """Byte-address bits the bus needs to reach every register."""
        return max(register.address for register in self.registers).bit_length()
