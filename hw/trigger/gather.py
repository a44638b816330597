"""Arrival gathering: of the K writes of one sector by K GPUs, only the K-th starts a
µthread (docs/trigger.md, "Arrival gathering").

It stands on the event stream between the trigger and the engine. An entry whose
``GATHER.PORTS`` is K ≥ 2 watches K copies of a tensor, ``2^COPY_LOG2`` bytes apart:
an event's copy is ``offset >> COPY_LOG2`` and its sector within the copy the bits
between that and the sector's. Each sector of a copy has a slot of the table, from the
entry's ``GATHER.SLOT`` on, holding how many of its K writes have arrived. An arrival
that does not complete its sector is consumed (the count rises); the K-th passes on, its
own event unchanged (its data is its own copy's), and sets the count back to zero. A
power-of-two copy size makes the copy and the slot a shift and a mask of the offset: no
divider stands in the event path.

An event outside its entry's layout (a copy index ≥ K, a slot beyond the table, copies
smaller than a sector) is consumed and pulses ``error``: it never waits, so the GPU path
cannot hang on it.

Arming an entry that gathers clears its slots, a word of :data:`CLEAR_SLOTS` at a time
(the table's slots are kept that many to a memory word, each written alone when an
arrival counts); meanwhile no event passes, so the GPUs are held only as the trigger's
event queue fills, and for no more than a cycle per word. The decision for an event is
made from the table as it enters, and the table written in the same cycle, so successive
arrivals of one sector need no forwarding; a register stage then offers the passing
events to the engine.
"""

from amaranth.hdl import Array, Cat, Mux, Module, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..layouts import trigger_event_layout
from ..stream import RegisterSlice


__all__ = ["ArrivalGather", "gather_layout", "MAX_GATHER_PORTS", "CLEAR_SLOTS"]


# K fits GATHER.PORTS (5 bits); a slot counts up to K − 1.
MAX_GATHER_PORTS = 16
# Slots per memory word, cleared together: the clearing of a copy of 256 sectors takes 16
# cycles, about what the trigger's event queue holds of GPU writes at full rate, where one
# slot a cycle held the GPUs for 256.
CLEAR_SLOTS = 16


def gather_layout(config):
    """An entry's GATHER register as the table sees it."""
    return data.StructLayout({
        "ports":     unsigned(5),
        "copy_log2": unsigned(6),
        "slot":      unsigned(config.trigger.gather_slot_bits),
    })


class ArrivalGather(wiring.Component):
    """Ports: ``i`` (the trigger's events), ``o`` (toward the engine), ``gather[e]``
    (entry e's GATHER fields), ``arm`` (a pulse per entry as it is armed), ``error`` (a
    pulse per event dropped outside its layout), ``clearing`` (the table is being cleared)."""

    def __init__(self, config):
        sectors = config.trigger.gather_sectors
        if not sectors:
            raise ValueError("an arrival-gathering table needs TriggerConfig.gather_sectors > 0")
        self.config = config
        entries = config.trigger.filter_entries
        super().__init__({
            "i": In(stream.Signature(trigger_event_layout(config))),
            "o": Out(stream.Signature(trigger_event_layout(config))),
            "gather": In(gather_layout(config)).array(entries),
            "arm": In(entries),
            "error": Out(1),
            "clearing": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        sectors = config.trigger.gather_sectors
        entries = config.trigger.filter_entries
        slot_bits = config.trigger.gather_slot_bits
        offset_bits = config.offset_bits
        width = config.addr_width + 1
        count_bits = (MAX_GATHER_PORTS - 1).bit_length()

        # A slot's word and lane are its index's high and low bits: a power of two of lanes.
        lanes = min(CLEAR_SLOTS, 1 << slot_bits)
        words = -(-sectors // lanes)
        lane_bits = (lanes - 1).bit_length()
        m.submodules.table = table = Memory(shape=unsigned(lanes * count_bits), depth=words, init=[])
        read = table.read_port(domain="comb")
        write = table.write_port(granularity=count_bits)
        m.submodules.out = out = RegisterSlice(trigger_event_layout(config))
        wiring.connect(m, out.o, wiring.flipped(self.o))

        # Clearing: the armed entries wait in `pending`; one is cleared at a time, its
        # slots from GATHER.SLOT to the end of its copies (or of the table), one a cycle.
        pending = Signal(entries)
        # Up to the end of the last word, where a clearing that ends inside it goes on to.
        clear_at = Signal(range(words * lanes + 1))
        clear_end = Signal(range(sectors + 1))
        gathers = Array(self.gather)
        chosen = Signal(range(entries))
        for index in reversed(range(entries)):
            with m.If(pending[index]):
                m.d.comb += chosen.eq(index)
        chosen_gather = gathers[chosen]
        # Copies smaller than a sector (an error its events will report) clear one slot; a
        # range beyond the table stops at its end.
        sectors_log2 = Signal(6)
        chosen_end = Signal(66)
        m.d.comb += [
            sectors_log2.eq(Mux(chosen_gather.copy_log2 < offset_bits, 0,
                                chosen_gather.copy_log2 - offset_bits)),
            chosen_end.eq(chosen_gather.slot + (1 << sectors_log2)),
        ]
        clearing = Signal()
        m.d.comb += [
            clearing.eq(clear_at < clear_end),
            # An armed entry's events wait from its arming to the end of its clearing.
            self.clearing.eq(clearing | pending.any() | self.arm.any()),
        ]
        started = Signal(entries)
        with m.If(~clearing & pending.any()):
            m.d.comb += started.eq(1 << chosen)
            m.d.sync += [
                clear_at.eq(chosen_gather.slot),
                clear_end.eq(Mux(chosen_end > sectors, sectors, chosen_end)),
            ]
        with m.Elif(clearing):
            # On to the next word's first slot.
            m.d.sync += clear_at.eq((clear_at >> lane_bits) + 1 << lane_bits)
        gathering_armed = Signal(entries)
        m.d.comb += gathering_armed.eq(self.arm & Cat(gather.ports >= 2 for gather in self.gather))
        m.d.sync += pending.eq((pending & ~started) | gathering_armed)

        # The event as it enters: its entry's layout, its copy and slot.
        event = self.i.payload
        layout = gathers[event.entry]
        copy = Signal(config.addr_width)
        within = Signal(config.addr_width)
        slot = Signal(width)
        m.d.comb += [
            copy.eq(event.offset >> layout.copy_log2),
            within.eq(event.offset & ((1 << layout.copy_log2) - 1)),
            slot.eq(layout.slot + (within >> offset_bits)),
        ]
        gathering = Signal()
        outside = Signal()
        lane = Signal(range(lanes))
        count = Signal(count_bits)
        last = Signal()
        m.d.comb += [
            gathering.eq(layout.ports >= 2),
            outside.eq((copy >= layout.ports) | (slot >= sectors) |
                       (layout.copy_log2 < offset_bits) | (layout.ports > MAX_GATHER_PORTS)),
            read.addr.eq(slot[lane_bits:slot_bits] if words > 1 else 0),
            lane.eq(slot[:lane_bits] if lanes > 1 else 0),
            count.eq(read.data.word_select(lane, count_bits)),
            last.eq(count + 1 == layout.ports),
        ]
        passes = Signal()
        m.d.comb += [
            passes.eq(~gathering | (~outside & last)),
            out.i.payload.eq(event),
            out.i.valid.eq(self.i.valid & ~self.clearing & passes),
            self.i.ready.eq(~self.clearing & (out.i.ready | ~passes)),
        ]
        taken = self.i.valid & self.i.ready
        counted = Signal()
        m.d.comb += [
            counted.eq(taken & gathering & ~outside),
            self.error.eq(taken & gathering & outside),
        ]
        with m.If(clearing):
            # The word's slots from clear_at on, up to the end of the range.
            word_base = Signal.like(clear_at)
            m.d.comb += [
                word_base.eq(clear_at >> lane_bits << lane_bits),
                write.en.eq(Cat((word_base + index >= clear_at) & (word_base + index < clear_end)
                                for index in range(lanes))),
                write.addr.eq(clear_at >> lane_bits),
                write.data.eq(0),
            ]
        with m.Elif(counted):
            m.d.comb += [
                write.en.eq(1 << lane),
                write.addr.eq(read.addr),
                write.data.eq(Cat(Mux(last, 0, count + 1)[:count_bits] for _ in range(lanes))),
            ]
        return m

