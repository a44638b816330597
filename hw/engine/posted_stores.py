"""Per entry, the posted stores on their way to the memory port: sent on by a sub-core, not
yet taken by the port. An entry is complete (and its initializer or main phase over) only
while it has none, so a launch that reports completion has every store of it in memory's
hands, as when each store was answered (docs/engine.md, "Posted stores").

Between DISPATCH and the port a store waits in the load/store unit's queue
(``memory_queue``), its request register and, in a pipelined engine, the skid buffer in
front of it; the memory merge holds nothing. So at most ``memory_queue + 3`` are on their
way, and each entry's count has room for that many.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from .component import EngineComponent


__all__ = ["PostedStores", "stores_on_the_way"]


def stores_on_the_way(config):
    """The most posted stores that can be between DISPATCH and the memory port."""
    return config.engine.memory_queue + 3


class PostedStores(EngineComponent):
    """Ports:

    sent_valid / sent_entry: a posted store of this entry left its sub-core (at most one
                    a cycle: the sub-cores' memory operations merge into one stream there).
    stored_valid / stored_entry: the memory port took a posted store of this entry.
    pending:        per entry, a posted store of it is on its way (counting one sent this
                    cycle).
    """

    def __init__(self, config):
        self.config = config
        entries = config.trigger.filter_entries
        super().__init__({
            "sent_valid":   In(1),
            "sent_entry":   In(config.trigger.entry_bits),
            "stored_valid": In(1),
            "stored_entry": In(config.trigger.entry_bits),
            "pending":      Out(entries),
        })

    def elaborate(self, platform):
        m = Module()
        entries = self.config.trigger.filter_entries
        counts = Signal(data.ArrayLayout(range(stores_on_the_way(self.config) + 1), entries))
        for entry in range(entries):
            sent = self.sent_valid & (self.sent_entry == entry)
            stored = self.stored_valid & (self.stored_entry == entry)
            count = counts[entry]
            with m.If(sent & ~stored):
                m.d.sync += count.eq(count + 1)
            with m.Elif(stored & ~sent):
                m.d.sync += count.eq(count - 1)
            m.d.comb += self.pending[entry].eq((count != 0) | sent)
        return m
