"""A sub-core's µthread slots: what each µthread carries from its start to its end, and the
bookkeeping that says which slots are alive and which may be picked.

A µthread starts in a free slot with its pc, entry, kind, argument block, sequence number
and the triggering access (its sector and scalars, in two small memories read by the
pipeline's DECODE stage). A slot is *busy* from the cycle PICK chooses it until DISPATCH
has decided its instruction's outcome (and, when the scoreboard looks ahead, until the
next instruction's needs are known); it is *eligible* when alive, not busy, not ending and
ready by the scoreboard. DISPATCH moves the pc on and notes where a memory or scratchpad
access in flight writes its answer; the slot ends when DISPATCH or WRITE-BACK retires it,
and a µthread stopped while instructions are in flight is *dying* until they are written
back. Each slot also counts its µthread's age for the watchdog.
"""

from amaranth.hdl import Const, Module, Signal, unsigned
from amaranth.lib import data, stream
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..component import EngineComponent
from ..decoder import UnitCode
from ..layouts import ThreadKind, spawn_layout, vector_layout
from .layouts import (argument_block_bits, destination_layout, slot_update_layout,
                      thread_info_layout)


__all__ = ["SlotState"]


AGE_LIMIT = 0xFFFF_FFFF


class SlotState(EngineComponent):
    """Ports:

    spawn:          a µthread to start in the free slot it names (always taken).
    start:          the slot whose µthread starts this cycle (one-hot, or none).
    free:           slots without a µthread.
    eligible:       slots whose µthread PICK may choose.
    ready:          per slot, the scoreboard lets its instruction issue.
    picked:         the slot PICK chose this cycle (one-hot, or none).
    decided:        the slot whose instruction left DISPATCH this cycle.
    in_pipe:        slots with an instruction between PICK and DISPATCH.
    update_valid / update: DISPATCH sent a slot's instruction on.
    clear:          slots no longer busy.
    retire:         slots whose µthread ended.
    kill:           slots whose µthread ends once its instructions in flight are back.
    thread_read:    the slot whose triggering access DECODE reads; ``event_data`` and
                    ``thread_info`` hold it in the next cycle.
    pc … dying:     per slot, the µthread's state; ``memory_dest``, ``scratchpad_dest``:
                    where its memory and scratchpad accesses in flight write.
    """

    def __init__(self, config):
        self.config = config
        engine = config.engine
        slots = engine.slots
        per_slot = lambda shape: Out(data.ArrayLayout(shape, slots))
        super().__init__({
            "spawn":           In(stream.Signature(spawn_layout(config))),
            "start":           Out(slots),
            "free":            Out(slots),
            "eligible":        Out(slots),
            "ready":           In(slots),
            "picked":          In(slots),
            "decided":         In(slots),
            "in_pipe":         Out(slots),
            "update_valid":    In(1),
            "update":          In(slot_update_layout(config)),
            "clear":           In(slots),
            "retire":          In(slots),
            "kill":            In(slots),
            "thread_read":     In(engine.slot_bits),
            "event_data":      Out(vector_layout(config)),
            "thread_info":     Out(thread_info_layout(config)),
            "pc":              per_slot(unsigned(engine.pc_bits)),
            "entry":           per_slot(unsigned(config.trigger.entry_bits)),
            "kind":            per_slot(ThreadKind),
            "arg_block":       per_slot(unsigned(argument_block_bits(config))),
            "seq":             per_slot(unsigned(32)),
            "ordered":         Out(slots),
            "released":        Out(slots),
            "age":             per_slot(unsigned(32)),
            "exit_pending":    Out(slots),
            "dying":           Out(slots),
            "memory_dest":     per_slot(destination_layout(config)),
            "scratchpad_dest": per_slot(destination_layout(config)),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        slots = config.engine.slots
        active = Signal(slots)
        busy = Signal(slots)
        m.d.comb += [
            self.free.eq(~active),
            self.eligible.eq(active & ~busy & ~self.exit_pending & ~self.dying & self.ready),
        ]

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
            m.d.comb += self.start.eq(Const(1, slots) << spawn.slot)
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
            with m.If(self.start[slot]):
                m.d.sync += self.age[slot].eq(0)
            with m.Elif(active[slot] & (self.age[slot] != AGE_LIMIT)):
                m.d.sync += self.age[slot].eq(self.age[slot] + 1)

        update = self.update
        with m.If(self.update_valid):
            m.d.sync += [
                self.pc[update.slot].eq(update.next_pc),
                self.exit_pending.bit_select(update.slot, 1).eq(update.ends),
            ]
            with m.If(update.releases):
                m.d.sync += self.released.bit_select(update.slot, 1).eq(1)
            for code, dests in ((UnitCode.MEMORY, self.memory_dest),
                                (UnitCode.SCRATCHPAD, self.scratchpad_dest)):
                with m.If(update.answered & (update.unit == code)):
                    dest = dests[update.slot]
                    m.d.sync += [dest.rd_type.eq(update.rd_type), dest.rd.eq(update.rd),
                                 dest.pc.eq(update.pc)]

        m.d.sync += [
            active.eq((active & ~self.retire) | self.start),
            busy.eq(((busy | self.picked) & ~self.clear & ~self.retire) & ~self.start),
            self.dying.eq((self.dying | self.kill) & ~self.retire & ~self.start),
            self.in_pipe.eq((self.in_pipe | self.picked) & ~self.decided & ~self.retire),
        ]
        return m
