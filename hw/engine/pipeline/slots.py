"""A sub-core's µthread slots: what each µthread carries from its start to its end, and the
bookkeeping that says which slots are alive and which may be picked.

A µthread starts in a free slot with its pc, entry, kind, argument block, sequence number
and the triggering access (its sector and scalars, in two small memories read by the
pipeline's DECODE stage). A slot is *busy* from the cycle PICK chooses it until its
instruction has completed or been replayed; it is *eligible* when alive and not busy.
DISPATCH moves the pc on and notes what the instruction in flight writes; the slot ends
when DISPATCH or write-back retires it. Each slot also counts its µthread's age for the
watchdog.
"""

from amaranth.hdl import Const, Module, Signal, unsigned
from amaranth.lib import data, stream
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..component import EngineComponent
from ..decoder import OperandClass
from ..layouts import ThreadKind, spawn_layout, vector_layout
from .layouts import argument_block_bits, register_bits, slot_update_layout, thread_info_layout


__all__ = ["SlotState"]


AGE_LIMIT = 0xFFFF_FFFF


class SlotState(EngineComponent):
    """Ports:

    spawn:          a µthread to start in the free slot it names (always taken).
    free:           slots without a µthread.
    eligible:       slots whose µthread PICK may choose.
    picked:         the slot PICK chose this cycle (one-hot, or none).
    update_valid / update: DISPATCH sent a slot's instruction to its unit.
    clear:          slots whose instruction completed or was replayed (eligible again).
    retire:         slots whose µthread ended.
    thread_read:    the slot whose triggering access DECODE reads; ``event_data`` and
                    ``thread_info`` hold it in the next cycle.
    pc … inflight_pc: per slot, the µthread's state.
    """

    def __init__(self, config):
        self.config = config
        engine = config.engine
        slots = engine.slots
        per_slot = lambda shape: Out(data.ArrayLayout(shape, slots))
        super().__init__({
            "spawn":        In(stream.Signature(spawn_layout(config))),
            "free":         Out(slots),
            "eligible":     Out(slots),
            "picked":       In(slots),
            "update_valid": In(1),
            "update":       In(slot_update_layout(config)),
            "clear":        In(slots),
            "retire":       In(slots),
            "thread_read":  In(engine.slot_bits),
            "event_data":   Out(vector_layout(config)),
            "thread_info":  Out(thread_info_layout(config)),
            "pc":           per_slot(unsigned(engine.pc_bits)),
            "entry":        per_slot(unsigned(config.trigger.entry_bits)),
            "kind":         per_slot(ThreadKind),
            "arg_block":    per_slot(unsigned(argument_block_bits(config))),
            "seq":          per_slot(unsigned(32)),
            "ordered":      Out(slots),
            "released":     Out(slots),
            "age":          per_slot(unsigned(32)),
            "dest_type":    per_slot(OperandClass),
            "dest_index":   per_slot(unsigned(register_bits())),
            "exit_pending": Out(slots),
            "inflight_pc":  per_slot(unsigned(engine.pc_bits)),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        slots = config.engine.slots
        active = Signal(slots)
        busy = Signal(slots)
        m.d.comb += [self.free.eq(~active), self.eligible.eq(active & ~busy)]

        m.submodules.event_data = event_data = Memory(shape=vector_layout(config), depth=slots,
                                                      init=[])
        m.submodules.thread_info = thread_info = Memory(shape=thread_info_layout(config),
                                                        depth=slots, init=[])
        data_write = event_data.write_port()
        info_write = thread_info.write_port()
        data_read = event_data.read_port()
        info_read = thread_info.read_port()
        m.d.comb += [
            data_read.addr.eq(self.thread_read), data_read.en.eq(1),
            info_read.addr.eq(self.thread_read), info_read.en.eq(1),
            self.event_data.eq(data_read.data),
            self.thread_info.eq(info_read.data),
        ]

        spawn = self.spawn.payload
        spawn_fire = Signal()
        m.d.comb += [
            self.spawn.ready.eq(1),
            spawn_fire.eq(self.spawn.valid),
            data_write.addr.eq(spawn.slot),
            data_write.data.eq(spawn.data),
            data_write.en.eq(spawn_fire),
            info_write.addr.eq(spawn.slot),
            info_write.data.offset.eq(spawn.offset),
            info_write.data.addr.eq(spawn.addr),
            info_write.data.mask.eq(spawn.mask),
            info_write.data.write.eq(spawn.write),
            info_write.en.eq(spawn_fire),
        ]
        with m.If(spawn_fire):
            m.d.sync += [
                self.pc[spawn.slot].eq(spawn.pc),
                self.entry[spawn.slot].eq(spawn.entry),
                self.kind[spawn.slot].eq(spawn.kind),
                self.arg_block[spawn.slot].eq(spawn.arg_block),
                self.seq[spawn.slot].eq(spawn.seq),
                self.ordered.bit_select(spawn.slot, 1).eq(spawn.ordered),
                self.released.bit_select(spawn.slot, 1).eq(0),
                self.exit_pending.bit_select(spawn.slot, 1).eq(0),
            ]

        for slot in range(slots):
            with m.If(spawn_fire & (spawn.slot == slot)):
                m.d.sync += self.age[slot].eq(0)
            with m.Elif(active[slot] & (self.age[slot] != AGE_LIMIT)):
                m.d.sync += self.age[slot].eq(self.age[slot] + 1)

        update = self.update
        with m.If(self.update_valid):
            m.d.sync += [
                self.pc[update.slot].eq(update.next_pc),
                self.inflight_pc[update.slot].eq(update.pc),
                self.dest_type[update.slot].eq(update.rd_type),
                self.dest_index[update.slot].eq(update.rd),
                self.exit_pending.bit_select(update.slot, 1).eq(update.ends),
            ]
            with m.If(update.releases):
                m.d.sync += self.released.bit_select(update.slot, 1).eq(1)

        start = Signal(slots)
        with m.If(spawn_fire):
            m.d.comb += start.eq(Const(1, slots) << spawn.slot)
        m.d.sync += [
            active.eq((active & ~self.retire) | start),
            busy.eq(((busy | self.picked) & ~self.clear & ~self.retire) & ~start),
        ]
        return m
