"""Starts µthreads: trigger events, initializers and finalizers, into free slots.

Each cycle at most one µthread starts. An entry's initializer or finalizer, when one waits,
goes first (lowest entry first); otherwise the event at the head of the stream starts a
main µthread of its entry, taking the entry's next sequence number. An initializer or a
finalizer runs as several µthreads (one per sector it clears or copies, channel group or
row of a reduction), started one a cycle with SEQ 0, 1, …; while an event waits too a
finalizer's take turns with it, so that a finalizer of many µthreads does not hold a GPU
stream that triggers another entry. Events wait, in order,
while their entry's initializer has not ended or no slot is free; an event of a stopped
entry is drained at once. The slot is the lowest free one of the first sub-core, after the
one used last, that has any.

A pipelined engine's spawner tells the entry control what it started or drained a cycle
later, from registers, so that the choice and the entries' counts are not one cycle's
work; until the entry control's state shows it, the spawner starts no further initializer
or finalizer µthread of that entry and gives a main µthread of it the sequence number
after the one it told of.
"""

from amaranth.hdl import C, Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out

from ..layouts import trigger_event_layout
from .component import EngineComponent
from .layouts import ThreadKind, entry_config_layout, spawn_layout


__all__ = ["Spawner"]


def _lowest_set(bits):
    """(any, index) of the lowest set bit of ``bits``."""
    index = C(0, range(max(2, len(bits))))
    for position in reversed(range(len(bits))):
        index = Mux(bits[position], position, index)
    return bits.any(), index


class Spawner(EngineComponent):
    def __init__(self, config):
        self.config = config
        engine = config.engine
        entries = config.trigger.filter_entries
        entry = unsigned(config.trigger.entry_bits)
        super().__init__({
            "events":        In(stream.Signature(trigger_event_layout(config))),
            "entry_config":  In(data.ArrayLayout(entry_config_layout(config), entries)),
            "accepts":       In(entries),
            "stopped":       In(entries),
            "init_request":  In(entries),
            "final_request": In(entries),
            "seq":           In(data.ArrayLayout(unsigned(32), entries)),
            "helper_seq":    In(data.ArrayLayout(unsigned(config.counter_width), entries)),
            "free":          In(data.ArrayLayout(unsigned(engine.slots), engine.sub_cores)),
            "spawn":         Out(stream.Signature(spawn_layout(config))).array(engine.sub_cores),
            "spawned":       Out(1),
            "spawned_entry": Out(entry),
            "spawned_kind":  Out(ThreadKind),
            "drained":       Out(1),
            "drained_entry": Out(entry),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        sub_cores = config.engine.sub_cores
        event = self.events.payload

        # Where a µthread would go.
        last_core = Signal(range(max(2, sub_cores)))
        has_free = Cat(*(self.free[core].any() for core in range(sub_cores)))
        rotated_choice = Signal(range(max(2, sub_cores)))
        found = Signal()
        for step in reversed(range(sub_cores)):
            core = (last_core + 1 + step) % sub_cores if sub_cores > 1 else 0
            with m.If(has_free.bit_select(core, 1)):
                m.d.comb += [rotated_choice.eq(core), found.eq(1)]
        _, free_slot = _lowest_set(self.free[rotated_choice])

        entry = event.entry
        entry_config = self.entry_config[entry]
        helpers = self.init_request | self.final_request
        main_seq = self.seq[entry]
        # Pipelined: the entry whose helper µthread started last cycle (one-hot), which the
        # entry control's request and count show only from the next.
        helper_told = Signal(len(helpers))
        if config.engine.pipelined:
            helpers &= ~helper_told
            main_seq += self.spawned & (self.spawned_kind == ThreadKind.MAIN) & \
                (self.spawned_entry == entry)
        helper_waiting, helper_entry = _lowest_set(helpers)
        helper_is_init = self.init_request.bit_select(helper_entry, 1)

        # A finalizer µthread started last, and an event could start (or be drained) now:
        # the event goes first.
        after_final = Signal()
        event_goes = self.events.valid & (self.stopped | self.accepts).bit_select(entry, 1)
        yield_to_event = after_final & ~helper_is_init & event_goes
        record = Signal(spawn_layout(config))
        spawn_now = Signal()
        spawned_entry = Signal.like(self.spawned_entry)
        spawned_kind = Signal(ThreadKind)
        drained = Signal()
        drained_entry = Signal.like(self.drained_entry)
        helper_goes = helper_waiting & ~yield_to_event
        with m.If(helper_goes):
            helper_config = self.entry_config[helper_entry]
            m.d.comb += [
                record.kind.eq(Mux(helper_is_init, ThreadKind.INIT, ThreadKind.FINAL)),
                record.pc.eq(Mux(helper_is_init, helper_config.init_pc, helper_config.final_pc)),
                record.entry.eq(helper_entry),
                record.arg_block.eq(helper_config.arg_block),
                record.seq.eq(self.helper_seq[helper_entry]),
                spawn_now.eq(found),
                spawned_entry.eq(helper_entry),
                spawned_kind.eq(record.kind),
            ]
        with m.Elif(self.events.valid):
            with m.If(self.stopped.bit_select(entry, 1)):
                m.d.comb += [self.events.ready.eq(1), drained.eq(1), drained_entry.eq(entry)]
            with m.Elif(self.accepts.bit_select(entry, 1)):
                m.d.comb += [
                    record.kind.eq(ThreadKind.MAIN),
                    record.pc.eq(entry_config.main_pc),
                    record.entry.eq(entry),
                    record.arg_block.eq(entry_config.arg_block),
                    record.seq.eq(main_seq),
                    record.ordered.eq(entry_config.ordered),
                    record.offset.eq(event.offset),
                    record.addr.eq(event.addr),
                    record.mask.eq(event.mask),
                    record.write.eq(event.write),
                    record.data.eq(event.data),
                    spawn_now.eq(found),
                    self.events.ready.eq(found),
                    spawned_entry.eq(entry),
                    spawned_kind.eq(ThreadKind.MAIN),
                ]
        m.d.comb += record.slot.eq(free_slot)
        tell = m.d.sync if config.engine.pipelined else m.d.comb
        tell += [self.spawned.eq(spawn_now), self.spawned_entry.eq(spawned_entry),
                 self.spawned_kind.eq(spawned_kind), self.drained.eq(drained),
                 self.drained_entry.eq(drained_entry)]
        if config.engine.pipelined:
            m.d.sync += helper_told.eq(Mux(spawn_now & helper_goes,
                                           C(1, len(helpers)) << helper_entry, 0))
        for core in range(sub_cores):
            m.d.comb += [self.spawn[core].payload.eq(record),
                         self.spawn[core].valid.eq(spawn_now & (rotated_choice == core))]
        with m.If(spawn_now):
            m.d.sync += last_core.eq(rotated_choice)
        with m.If(spawn_now | drained):
            m.d.sync += after_final.eq(spawn_now & (spawned_kind == ThreadKind.FINAL))
        return m
