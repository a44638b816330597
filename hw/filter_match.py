"""Address-range matcher of the trigger's filter table (ARCHITECTURE §4.2).

Combinational: given one request's address and direction, find the lowest-index enabled
entry whose range ``[base, base + size)`` holds the address and whose direction flag is
set, and the request's offset within it.
"""

from amaranth.hdl import Module, Signal, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out


__all__ = ["filter_entry_layout", "FilterMatcher"]


def filter_entry_layout(config):
    return data.StructLayout({
        "enable":   unsigned(1),
        "on_write": unsigned(1),
        "on_read":  unsigned(1),
        "base":     unsigned(config.addr_width),
        "size":     unsigned(config.addr_width),
    })


class FilterMatcher(wiring.Component):
    def __init__(self, config):
        self.config = config
        super().__init__({
            "table":  In(data.ArrayLayout(filter_entry_layout(config), config.filter_entries)),
            "addr":   In(config.addr_width),
            "write":  In(1),
            "hit":    Out(1),
            "entry":  Out(config.entry_bits),
            "offset": Out(config.addr_width),
        })

    def elaborate(self, platform):
        m = Module()
        width = self.config.addr_width
        matches = []
        offsets = []
        for index in range(self.config.filter_entries):
            entry = self.table[index]
            # One subtraction gives both the lower-bound check (its borrow) and the offset.
            difference = Signal(width + 1, name=f"difference{index}")
            m.d.comb += difference.eq(self.addr - entry.base)
            in_range = ~difference[width] & (difference[:width] < entry.size)
            direction = (self.write & entry.on_write) | (~self.write & entry.on_read)
            match = Signal(name=f"match{index}")
            m.d.comb += match.eq(entry.enable & direction & in_range)
            matches.append(match)
            offsets.append(difference[:width])

        # Walk from the highest index down so that the lowest matching index is assigned last.
        for index in reversed(range(self.config.filter_entries)):
            with m.If(matches[index]):
                m.d.comb += [
                    self.hit.eq(1),
                    self.entry.eq(index),
                    self.offset.eq(offsets[index]),
                ]
        return m
