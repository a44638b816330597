"""Fixed-width hex records, packed and unpacked for whole arrays at once.

A record is a bit vector of named fields, LSB-first in field order (as Amaranth's struct
layouts pack payloads, :class:`~matndp.sim.drivers.packing.StructCodec`), written as one
line of hex digits, most significant first: the format of ``$readmemh`` and of the
harness's ``%h`` logs. A field of up to 64 bits is a ``uint64`` column; a wider one is an
``(n, bytes)`` ``uint8`` array, byte 0 the least significant.
"""

import numpy as np


__all__ = ["RecordFormat", "HexFormatError", "fixed_width_lines", "integer_column"]


class HexFormatError(ValueError):
    """A file of hex records that does not hold what its format says."""


_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_NIBBLE = np.full(256, 255, dtype=np.uint8)
for _value, _char in enumerate(b"0123456789abcdef"):
    _NIBBLE[_char] = _value
for _value, _char in enumerate(b"ABCDEF", 10):
    _NIBBLE[_char] = _value


def integer_column(what, values, count, error=ValueError):
    """``values`` as ``count`` uint64 values; ``error`` naming ``what`` unless they are
    non-negative integers of that number."""
    values = np.asarray(values)
    if values.shape != (count,):
        raise error(f"{what}: expected {count} values, got shape {values.shape}")
    if values.dtype.kind not in "uib":
        raise error(f"{what}: integers expected, not {values.dtype}")
    if values.dtype.kind == "i" and count and values.min() < 0:
        raise error(f"{what}: negative value {values.min()}")
    return values.astype(np.uint64)


class RecordFormat:
    """``fields``: ``(name, lsb, width)`` triples, contiguous from bit 0 (a StructCodec's
    ``fields``, with more appended above)."""

    def __init__(self, fields):
        self.fields = [(str(name), int(lsb), int(width)) for name, lsb, width in fields]
        position = 0
        for name, lsb, width in self.fields:
            if lsb != position or width < 1:
                raise ValueError(f"record field {name!r} at bit {lsb} (width {width}); "
                                 f"fields must be contiguous from bit 0")
            position += width
        self.width = position
        self.digits = -(-position // 4)
        self.names = [name for name, _, _ in self.fields]

    def extended(self, name, width):
        """This format with field ``name`` of ``width`` bits above the others."""
        return RecordFormat(self.fields + [(name, self.width, width)])

    def field_width(self, name):
        for field, _, width in self.fields:
            if field == name:
                return width
        raise KeyError(f"no field {name!r} in the record format ({', '.join(self.names)})")

    # --- packing ------------------------------------------------------------------------------
    # A record is handled as little-endian bytes; a field is moved into or out of them by
    # whole bytes and one shift of the bits below a byte.
    @property
    def record_bytes(self):
        return -(-4 * self.digits // 8)

    def _field_bytes(self, name, width, values, count):
        """The field's values as ``(count, ceil(width / 8))`` little-endian bytes."""
        size = -(-width // 8)
        values = np.asarray(values)
        if width <= 64:
            words = integer_column(f"field {name!r}", values, count)
            if width < 64 and count and int(words.max()) >> width:
                raise ValueError(f"field {name!r}: value {int(words.max()):#x} does not fit "
                                 f"{width} bits")
            return words.astype("<u8").view(np.uint8).reshape(count, 8)[:, :size]
        if values.shape != (count, size) or values.dtype != np.uint8:
            raise ValueError(f"field {name!r}: expected a ({count}, {size}) uint8 array, got "
                             f"{values.dtype} {values.shape}")
        if width % 8 and count and int(values[:, -1].max()) >> (width % 8):
            raise ValueError(f"field {name!r}: a value does not fit {width} bits")
        return values

    def pack(self, columns):
        """The hex text (bytes, one line per record) of ``columns`` (by field name; a
        missing field is zero)."""
        unknown = set(columns) - set(self.names)
        if unknown:
            raise KeyError(f"no field(s) {', '.join(sorted(unknown))} in the record format")
        counts = {len(np.asarray(values)) for values in columns.values()}
        if len(counts) > 1:
            raise ValueError(f"record fields of different lengths: {sorted(counts)}")
        count = counts.pop() if counts else 0
        record = np.zeros((count, self.record_bytes + 1), dtype=np.uint8)
        for name, lsb, width in self.fields:
            if name not in columns:
                continue
            raw = self._field_bytes(name, width, columns[name], count)
            first, shift = divmod(lsb, 8)
            # Each byte's bits above the shift (uint8 drops what moves out) and, one byte
            # up, the bits that moved out.
            low = record[:, first:first + raw.shape[1]]
            low |= (raw << shift)[:, :low.shape[1]] if shift else raw[:, :low.shape[1]]
            if shift:
                high = record[:, first + 1:first + 1 + raw.shape[1]]
                high |= (raw >> (8 - shift))[:, :high.shape[1]]
        record = record[:, :self.record_bytes][:, ::-1]
        nibbles = np.empty((count, 2 * self.record_bytes), dtype=np.uint8)
        nibbles[:, 0::2] = record >> 4
        nibbles[:, 1::2] = record & 0x0F
        text = np.empty((count, self.digits + 1), dtype=np.uint8)
        text[:, :self.digits] = _DIGITS[nibbles[:, 2 * self.record_bytes - self.digits:]]
        text[:, self.digits] = ord("\n")
        return text.tobytes()

    # --- unpacking ----------------------------------------------------------------------------
    def unpack_digits(self, digits, where="records"):
        """Fields of the records in ``digits``: an ``(n, self.digits)`` array of ASCII hex."""
        count = len(digits)
        values = _NIBBLE[digits]
        if count and values.max() == 255:
            row = int(np.flatnonzero((values == 255).any(axis=1))[0])
            raise HexFormatError(f"{where}: record {row} is not hex: "
                                 f"{bytes(digits[row]).decode(errors='replace')!r}")
        if self.digits % 2:
            values = np.concatenate([np.zeros((count, 1), dtype=np.uint8), values], axis=1)
        record = ((values[:, 0::2] << 4) | values[:, 1::2])[:, ::-1]
        record = np.concatenate([record, np.zeros((count, 9), dtype=np.uint8)], axis=1)
        top, extra = divmod(self.width, 8)
        if count and ((record[:, top] >> extra).any() or record[:, top + 1:].any()):
            raise HexFormatError(f"{where}: a record has bits set above bit {self.width}")
        result = {}
        for name, lsb, width in self.fields:
            size = -(-width // 8)
            first, shift = divmod(lsb, 8)
            raw = record[:, first:first + size + 1].astype(np.uint16)
            field = ((raw[:, :-1] >> shift) | (raw[:, 1:] << (8 - shift))) & 0xFF
            field = field.astype(np.uint8)
            if width % 8:
                field[:, -1] &= (1 << (width % 8)) - 1
            if width <= 64:
                wide = np.zeros((count, 8), dtype=np.uint8)
                wide[:, :size] = field
                result[name] = wide.view("<u8").reshape(-1).astype(np.uint64)
            else:
                result[name] = np.ascontiguousarray(field)
        return result

    def unpack(self, text, where="records"):
        """Fields of hex ``text`` (bytes): one record per line, as :meth:`pack` writes or
        ``$writememh`` dumps (``//`` comment lines are skipped)."""
        lines = _lines(text, where)
        digits = fixed_width_lines(lines, self.digits, where)
        return self.unpack_digits(digits, where)


def _lines(text, where):
    if b"//" in text:
        text = b"\n".join(line for line in text.split(b"\n") if not line.lstrip().startswith(b"//"))
    return text


def fixed_width_lines(text, digits, where):
    """``text`` (lines of exactly ``digits`` characters) as an ``(n, digits)`` array."""
    text = text.strip()
    if not text:
        return np.zeros((0, digits), dtype=np.uint8)
    raw = np.frombuffer(text + b"\n", dtype=np.uint8)
    if raw.size % (digits + 1) or raw[digits::digits + 1].tolist().count(ord("\n")) != raw.size // (digits + 1):
        first = text.split(b"\n", 1)[0]
        raise HexFormatError(f"{where}: lines of {digits} hex digits expected; the first line "
                             f"is {first[:80].decode(errors='replace')!r}")
    return raw.reshape(-1, digits + 1)[:, :digits]
