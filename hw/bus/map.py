"""The description of a register bus's address space: fields, registers, blocks and arrays
of blocks, windows routed to buses of their own, and a map of them.

Every consumer of a register layout works from this description: the register file decodes
by its blocks and places fields at their bits, the decoder routes by its windows, and
software packs and unpacks register words with :meth:`Register.pack` and
:meth:`Register.unpack` rather than with shifts of its own.

Addresses are byte addresses of :data:`~.signature.CSR_DATA_WIDTH`-bit registers. A
register declared for a :class:`RegisterBlock` or :class:`RegisterArray` gives its address
relative to the block; the block places a copy at the absolute address.
"""

import enum
from dataclasses import dataclass, replace

from .signature import CSR_DATA_WIDTH


__all__ = ["Access", "Field", "Register", "SplitField", "RegisterBlock", "RegisterArray",
           "Window", "RegisterMap"]


_REGISTER_BYTES = CSR_DATA_WIDTH // 8


class Access(enum.Enum):
    """Who owns a field's value, and what a bus access does to it."""

    #: Stored by the register file; hardware sees the stored value.
    RW = "rw"
    #: Driven by hardware (status); the bus only reads it.
    RO = "ro"
    #: Fixed when the hardware is built, with its value given in the map; read-only.
    CONST = "const"
    #: Owned by hardware (a counter); a bus write loads the written value.
    LOAD = "load"
    #: Owned by hardware (sticky flags); a bus write clears the bits written as 1.
    W1C = "w1c"

    @property
    def writable(self):
        """Whether a bus write reaches the field."""
        return self in (Access.RW, Access.LOAD, Access.W1C)

    @property
    def stored_by_register_file(self):
        """Whether the register file itself provides the value (no hardware attached)."""
        return self in (Access.RW, Access.CONST)


def _check_name(kind, name):
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"{kind} name {name!r} is not an identifier")


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_power_of_two(value):
    return value > 0 and value & (value - 1) == 0


@dataclass(frozen=True)
class Field:
    """``width`` bits of a register from bit ``lsb`` up.

    init:  the value after reset (``RW`` fields only).
    value: the constant (``CONST`` fields only; required there).
    """

    name: str
    lsb: int
    width: int
    access: Access
    doc: str
    init: int = 0
    value: int | None = None

    def __post_init__(self):
        _check_name("field", self.name)
        if not isinstance(self.access, Access):
            raise TypeError(f"field {self.name!r}: access must be an Access, not {self.access!r}")
        if self.width < 1 or self.lsb < 0 or self.lsb + self.width > CSR_DATA_WIDTH:
            raise ValueError(f"field {self.name!r}: bits {self.lsb}+{self.width} do not fit "
                             f"a {CSR_DATA_WIDTH}-bit register")
        if self.init and self.access is not Access.RW:
            raise ValueError(f"field {self.name!r}: only RW fields have an init value; "
                             f"a {self.access.name} field gets its value from "
                             f"{'the value argument' if self.access is Access.CONST else 'hardware'}")
        if not self.fits(self.init):
            raise ValueError(f"field {self.name!r}: init {self.init:#x} does not fit {self.width} bits")
        if self.access is Access.CONST and self.value is None:
            raise ValueError(f"field {self.name!r}: a CONST field needs its value")
        if self.access is not Access.CONST and self.value is not None:
            raise ValueError(f"field {self.name!r}: only CONST fields have a value, "
                             f"this one is {self.access.name}")
        if self.value is not None and not self.fits(self.value):
            raise ValueError(f"field {self.name!r}: constant {self.value:#x} does not fit "
                             f"{self.width} bits")

    @property
    def mask(self):
        """The field's bits in the register word."""
        return ((1 << self.width) - 1) << self.lsb

    @property
    def reset_value(self):
        """What the field reads after reset, before hardware drives it."""
        return self.value if self.access is Access.CONST else self.init

    def fits(self, value):
        return isinstance(value, int) and 0 <= value < 1 << self.width

    def extract(self, word):
        """The field's value in the register word ``word``."""
        return (word & self.mask) >> self.lsb


@dataclass(frozen=True)
class Register:
    """A named register word and its fields."""

    name: str
    address: int
    fields: tuple
    doc: str

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple(self.fields))
        if self.address < 0 or self.address % _REGISTER_BYTES:
            raise ValueError(f"register {self.name!r} at {self.address:#x} is not aligned to "
                             f"{_REGISTER_BYTES} bytes")
        if not self.fields:
            raise ValueError(f"register {self.name!r} has no fields")
        names = set()
        used = 0
        for field in self.fields:
            if not isinstance(field, Field):
                raise TypeError(f"register {self.name!r}: {field!r} is not a Field")
            if field.name in names:
                raise ValueError(f"register {self.name!r}: field name {field.name!r} is used twice")
            if used & field.mask:
                raise ValueError(f"register {self.name!r}: field {field.name!r} overlaps another")
            names.add(field.name)
            used |= field.mask

    @property
    def writable(self):
        """Whether a bus write is accepted (any field takes it)."""
        return any(field.access.writable for field in self.fields)

    @property
    def reset_value(self):
        """The register word after reset, constants included."""
        return self.pack(**{field.name: field.reset_value for field in self.fields})

    def field(self, name):
        for field in self.fields:
            if field.name == name:
                return field
        raise KeyError(f"register {self.name!r} has no field {name!r} "
                       f"(fields: {', '.join(field.name for field in self.fields)})")

    def pack(self, **values):
        """The register word holding ``values`` by field name; fields not named are 0."""
        word = 0
        for name, value in values.items():
            field = self.field(name)
            if not field.fits(value):
                raise ValueError(f"register {self.name!r}: value {value!r} does not fit the "
                                 f"{field.width}-bit field {name!r}")
            word |= value << field.lsb
        return word

    def unpack(self, word):
        """The field values of the register word ``word``, by field name, in declaration order.
        Bits outside every field must be 0 (the register file reads them so)."""
        if not isinstance(word, int) or not 0 <= word < 1 << CSR_DATA_WIDTH:
            raise ValueError(f"register {self.name!r}: {word!r} is not a {CSR_DATA_WIDTH}-bit word")
        stray = word & ~sum(field.mask for field in self.fields)
        if stray:
            raise ValueError(f"register {self.name!r}: word {word:#010x} sets bits {stray:#010x} "
                             f"that belong to no field")
        return {field.name: field.extract(word) for field in self.fields}


@dataclass(frozen=True)
class SplitField:
    """A value that may be wider than a register, held in fields of registers of one block:
    ``parts`` are ``(register name, field name)`` pairs, least significant first. One part
    is allowed, so that a layout whose number of words follows a parameter (an address
    width, a number of entries) is read and written the same way at every width."""

    name: str
    parts: tuple

    def __post_init__(self):
        object.__setattr__(self, "parts", tuple(tuple(part) for part in self.parts))
        if not self.parts:
            raise ValueError(f"split field {self.name!r} has no parts")


class RegisterBlock:
    """Registers in one aligned, power-of-two window of ``size`` bytes at ``base``.

    The register file reads a block's registers through one multiplexer beside them, then
    chooses among blocks, so a block is also a unit of placement. ``registers`` give their
    addresses relative to ``base``; :attr:`registers` holds them placed, their names prefixed
    with ``prefix``. Without a ``size`` the block is the smallest window that holds them.
    """

    def __init__(self, name, base, registers, *, size=None, prefix="", split_fields=()):
        _check_name("block", name)
        self.name = name
        self.layout = tuple(registers)
        if not self.layout:
            raise ValueError(f"block {name!r} has no registers")
        for register in self.layout:
            if not isinstance(register, Register):
                raise TypeError(f"block {name!r}: {register!r} is not a Register")
            _check_name("register", register.name)
        span = max(register.address for register in self.layout) + _REGISTER_BYTES
        if size is None:
            size = 1 << (span - 1).bit_length()
        if not _is_power_of_two(size) or size < _REGISTER_BYTES:
            raise ValueError(f"block {name!r}: size {size:#x} is not a power of two of at least "
                             f"{_REGISTER_BYTES} bytes")
        if span > size:
            raise ValueError(f"block {name!r}: its registers reach {span:#x}, beyond its "
                             f"{size:#x}-byte window")
        if base < 0 or base % size:
            raise ValueError(f"block {name!r}: base {base:#x} is not aligned to its size {size:#x}")
        self.base = base
        self.size = size
        self.registers = tuple(replace(register, name=prefix + register.name,
                                       address=base + register.address)
                               for register in self.layout)
        _check_unique(f"block {name!r}", self.registers)
        by_name = {register.name: register for register in self.registers}
        self.split_fields = {}
        for split in split_fields:
            placed = SplitField(prefix + split.name,
                                tuple((prefix + register, field) for register, field in split.parts))
            for register, field in placed.parts:
                if register not in by_name:
                    raise ValueError(f"split field {placed.name!r}: block {name!r} has no "
                                     f"register {register!r}")
                by_name[register].field(field)
            self.split_fields[placed.name] = tuple((by_name[register], by_name[register].field(field))
                                                   for register, field in placed.parts)

    @property
    def end(self):
        return self.base + self.size

    def __repr__(self):
        return f"RegisterBlock({self.name!r}, {self.base:#x}, size={self.size:#x})"


class RegisterArray:
    """``count`` copies of one block of ``registers``, ``stride`` bytes apart from ``base``.
    Element *i* is the block ``{name}{i}``; its registers are named ``{name}{i}.{register}``."""

    def __init__(self, name, base, stride, count, registers, *, split_fields=()):
        _check_name("array", name)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ValueError(f"array {name!r}: count must be a positive int, not {count!r}")
        self.name = name
        self.base = base
        self.stride = stride
        self.count = count
        self.blocks = tuple(
            RegisterBlock(f"{name}{index}", base + index * stride, registers, size=stride,
                          prefix=self.register_name(index, ""), split_fields=split_fields)
            for index in range(count))
        self.layout = self.blocks[0].layout

    def register_name(self, index, name):
        return f"{self.name}{index}.{name}"

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        return self.blocks[index]


@dataclass(frozen=True)
class Window:
    """``size`` bytes at ``base`` routed to a bus of their own (a memory, a bridge): an access
    inside the window reaches that bus with the address relative to ``base``, on
    :attr:`addr_width` bits.

    readable, writable: what the host may do; the decoder refuses the other with ``err``.
    """

    name: str
    base: int
    size: int
    doc: str
    readable: bool = True
    writable: bool = True

    def __post_init__(self):
        _check_name("window", self.name)
        if not _is_int(self.size) or not _is_power_of_two(self.size) or self.size < _REGISTER_BYTES:
            raise ValueError(f"window {self.name!r}: size {self.size!r} is not a power of two of at "
                             f"least {_REGISTER_BYTES} bytes")
        if not _is_int(self.base) or self.base < 0 or self.base % self.size:
            raise ValueError(f"window {self.name!r}: base {self.base!r} is not a multiple of its "
                             f"size {self.size:#x}")
        for rule in ("readable", "writable"):
            if not isinstance(getattr(self, rule), bool):
                raise TypeError(f"window {self.name!r}: {rule} must be a bool, not "
                                f"{getattr(self, rule)!r}")
        if not (self.readable or self.writable):
            raise ValueError(f"window {self.name!r} is neither readable nor writable")

    @property
    def end(self):
        return self.base + self.size

    @property
    def addr_width(self):
        """Bits of a byte address within the window."""
        return (self.size - 1).bit_length()

    def __contains__(self, address):
        return self.base <= address < self.end

    def span(self):
        return f"[{self.base:#x}, {self.end:#x})"


def _check_unique(where, registers):
    names, addresses = {}, {}
    for register in registers:
        if register.name in names:
            raise ValueError(f"{where}: register name {register.name!r} is used twice")
        if register.address in addresses:
            raise ValueError(f"{where}: registers {register.name!r} and "
                             f"{addresses[register.address].name!r} share {register.address:#x}")
        names[register.name] = register
        addresses[register.address] = register


def _find(table, name, kind):
    try:
        return table[name]
    except KeyError:
        raise KeyError(f"no {kind} named {name!r}") from None


class RegisterMap:
    """Blocks, arrays of blocks and windows in one address space; none may overlap another."""

    def __init__(self, parts):
        self.parts = tuple(parts)
        blocks, windows = [], []
        for part in self.parts:
            if isinstance(part, RegisterBlock):
                blocks.append(part)
            elif isinstance(part, RegisterArray):
                blocks.extend(part.blocks)
            elif isinstance(part, Window):
                windows.append(part)
            else:
                raise TypeError(f"a register map holds RegisterBlocks and RegisterArrays of "
                                f"registers, and Windows, not {part!r}")
        if not blocks:
            raise ValueError("a register map needs at least one block")
        blocks.sort(key=lambda block: block.base)
        for lower, upper in zip(blocks, blocks[1:]):
            if upper.base < lower.end:
                raise ValueError(f"blocks {lower.name!r} [{lower.base:#x}, {lower.end:#x}) and "
                                 f"{upper.name!r} [{upper.base:#x}, {upper.end:#x}) overlap")
        windows.sort(key=lambda window: window.base)
        names = set()
        for window in windows:
            if window.name in names:
                raise ValueError(f"register map: window name {window.name!r} is used twice")
            names.add(window.name)
        for lower, upper in zip(windows, windows[1:]):
            if upper.base < lower.end:
                raise ValueError(f"windows {lower.name!r} {lower.span()} and {upper.name!r} "
                                 f"{upper.span()} overlap")
        for window in windows:
            for block in blocks:
                if block.base < window.end and window.base < block.end:
                    inside = [register.name for register in block.registers
                              if register.address in window]
                    registers = f" (registers {', '.join(map(repr, inside))})" if inside else ""
                    raise ValueError(f"window {window.name!r} {window.span()} overlaps block "
                                     f"{block.name!r} [{block.base:#x}, {block.end:#x}){registers}")
        self.blocks = tuple(blocks)
        self.windows = tuple(windows)
        self.registers = tuple(register for block in blocks for register in block.registers)
        _check_unique("register map", self.registers)
        self._by_name = {register.name: register for register in self.registers}
        self._by_address = {register.address: register for register in self.registers}
        self._split_fields = {name: parts for block in blocks
                              for name, parts in block.split_fields.items()}

    def __iter__(self):
        return iter(self.registers)

    def __getitem__(self, name):
        return _find(self._by_name, name, "register")

    def at(self, address):
        """The register at byte address ``address``, or None."""
        return self._by_address.get(address)

    def block(self, name):
        return _find({block.name: block for block in self.blocks}, name, "block")

    def array(self, name):
        return _find({part.name: part for part in self.parts if isinstance(part, RegisterArray)},
                     name, "register array")

    def window(self, name):
        return _find({window.name: window for window in self.windows}, name, "window")

    def window_at(self, address):
        """The window holding byte address ``address``, or None."""
        for window in self.windows:
            if address in window:
                return window
        return None

    @property
    def register_addr_width(self):
        """Byte-address bits that reach every block (the register file's bus)."""
        return (max(block.end for block in self.blocks) - 1).bit_length()

    @property
    def addr_width(self):
        """Byte-address bits that reach every block and every window (the whole bus)."""
        return (max(part.end for part in (*self.blocks, *self.windows)) - 1).bit_length()

    # --- values wider than a register ---------------------------------------------------------
    def split_field(self, name):
        """The ``(register, field)`` parts of split field ``name``, least significant first."""
        return _find(self._split_fields, name, "split field")

    def split_width(self, name):
        return sum(field.width for _, field in self.split_field(name))

    def split(self, name, value):
        """``(register, word)`` for each register holding a part of ``value``, least
        significant first."""
        parts = self.split_field(name)
        width = self.split_width(name)
        if not isinstance(value, int) or not 0 <= value < 1 << width:
            raise ValueError(f"split field {name!r}: value {value!r} does not fit its {width} bits")
        words = []
        for register, field in parts:
            words.append((register, register.pack(**{field.name: value & ((1 << field.width) - 1)})))
            value >>= field.width
        return words
