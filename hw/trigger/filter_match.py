"""Address-range matcher of the trigger's filter table (docs/trigger.md).

Combinational: given one request's address and direction, find the lowest-index enabled
entry whose range ``[base, base + size)`` holds the address and whose direction flag is
set, and the request's offset within it.
"""

from amaranth.hdl import Module, Signal, Cat, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from ..onehot import first_one, one_hot_index, one_hot_select


__all__ = ["filter_entry_layout", "range_end", "entry_match", "FilterMatcher"]


def filter_entry_layout(config):
    return data.StructLayout({
        "enable":   unsigned(1),
        "on_write": unsigned(1),
        "on_read":  unsigned(1),
        "base":     unsigned(config.addr_width),
        "size":     unsigned(config.addr_width),
    })


def range_end(m, entry, width, index):
    """``base + size`` of ``entry``, ``width + 1`` bits so that it cannot wrap, as a signal
    driven in ``m``'s combinational domain."""
    end = Signal(width + 1, name=f"end{index}")
    m.d.comb += end.eq(entry.base + entry.size)
    return end


def entry_match(m, entry, end, addr, write, index):
    """Whether ``entry`` (a :func:`filter_entry_layout` view) with range end ``end``
    (``base + size``, one bit wider than an address) matches an access to ``addr``
    (``write`` its direction), and the access's offset in the range, as two signals
    driven in ``m``'s combinational domain."""
    # The bounds are two comparisons side by side rather than a subtraction followed by a
    # comparison of its result with the size: one carry chain deep, not two. The end has
    # a spare bit, so a range reaching past the top address works. The offset is formed
    # beside them; only the winner's is used.
    in_range = (addr >= entry.base) & (addr < end)
    direction = (write & entry.on_write) | (~write & entry.on_read)
    match = Signal(name=f"match{index}")
    offset = Signal(len(addr), name=f"offset{index}")
    m.d.comb += [
        match.eq(entry.enable & direction & in_range),
        offset.eq(addr - entry.base),
    ]
    return match, offset


class FilterMatcher(wiring.Component):
    """``winner`` is the matching entry one-hot and ``offsets`` every entry's offset, so
    that a user may register them and select the offset a cycle later, off the path from
    the address to the decision; ``entry`` and ``offset`` are that selection done here.

    ``ends``: with ``precomputed_ends``, an input holding ``base + size`` of every entry
    (``addr_width + 1`` bits, so it cannot wrap), which the owner of the table keeps in
    step with it; this takes an adder off the path from the address to the decision.
    Otherwise the sums are formed here."""

    def __init__(self, config, *, precomputed_ends=False):
        self.config = config
        self.precomputed_ends = precomputed_ends
        members = {
            "table":  In(data.ArrayLayout(filter_entry_layout(config), config.trigger.filter_entries)),
            "addr":   In(config.addr_width),
            "write":  In(1),
            "hit":    Out(1),
            "entry":  Out(config.trigger.entry_bits),
            "offset": Out(config.addr_width),
            "winner": Out(config.trigger.filter_entries),
            "offsets": Out(data.ArrayLayout(unsigned(config.addr_width), config.trigger.filter_entries)),
        }
        if precomputed_ends:
            members["ends"] = In(data.ArrayLayout(unsigned(config.addr_width + 1),
                                                  config.trigger.filter_entries))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        config = self.config
        width = config.addr_width
        count = config.trigger.filter_entries
        matches = []
        offsets = []
        for index in range(count):
            entry = self.table[index]
            end = self.ends[index] if self.precomputed_ends else range_end(m, entry, width, index)
            match, offset = entry_match(m, entry, end, self.addr, self.write, index)
            matches.append(match)
            offsets.append(offset)

        # Lowest index wins. A one-hot winner vector and an AND-OR select keep this a few
        # logic levels deep instead of a chain of 2:1 multiplexers, one per entry.
        matched = Cat(*matches)
        for index in range(count):
            m.d.comb += self.offsets[index].eq(offsets[index])
        m.d.comb += [
            self.winner.eq(first_one(matched)),
            self.hit.eq(matched.any()),
            self.entry.eq(one_hot_index(self.winner)),
            self.offset.eq(one_hot_select(self.winner, self.offsets)),
        ]
        return m
