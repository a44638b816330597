"""Pack and unpack Amaranth struct payloads as the flat vectors the Verilog carries
(fields LSB-first, in layout order)."""

from amaranth.lib import data


__all__ = ["StructCodec"]


class StructCodec:
    def __init__(self, layout):
        if not isinstance(layout, data.StructLayout):
            raise TypeError(f"expected a StructLayout, not {layout!r}")
        self.layout = layout
        self.fields = [(name, field.offset, field.width) for name, field in layout]
        self.names = frozenset(name for name, *_ in self.fields)

    def pack(self, values):
        unknown = set(values) - self.names
        if unknown:
            raise KeyError(f"no field(s) {', '.join(sorted(unknown))} in the payload layout")
        word = 0
        for name, offset, width in self.fields:
            value = int(values.get(name, 0))
            if not 0 <= value < (1 << width):
                raise ValueError(f"field {name}={value:#x} does not fit {width} bits")
            word |= value << offset
        return word

    def unpack(self, word):
        return {name: (word >> offset) & ((1 << width) - 1) for name, offset, width in self.fields}
