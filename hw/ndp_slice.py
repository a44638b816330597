"""One NDP slice: the top level beside one GPU memory channel (ARCHITECTURE §2, §4.1).

For now the slice is the trigger, its register file and counters; trigger events leave on
the ``events`` stream, which the NDP engine will consume. The register bus goes through a
:class:`~.bus.decoder.BusDecoder`, which answers accesses to the engine's windows with
``err`` while no engine stands behind them.
"""

from amaranth.hdl import Module, Signal, Cat
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from .config import NDPConfig
from .bus.action import Counter, Status, StickyFlag
from .bus.decoder import BusDecoder
from .bus.register_file import RegisterFile
from .bus.signature import CSRBusSignature
from .csr_map import register_map, entry_register_name
from .layouts import MemoryPortSignature, trigger_event_layout
from .trigger import Trigger


__all__ = ["NDPSlice"]


class NDPSlice(wiring.Component):
    def __init__(self, config=None):
        self.config = config = config or NDPConfig()
        self.register_map = register_map(config)
        super().__init__({
            "gpu":    In(MemoryPortSignature(config)),
            "mem":    Out(MemoryPortSignature(config)),
            "csr":    In(CSRBusSignature(self.register_map.addr_width)),
            "events": Out(stream.Signature(trigger_event_layout(config))),
            "irq":    Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        m.submodules.decoder = decoder = BusDecoder(self.register_map, windows=())
        m.submodules.registers = registers = RegisterFile(self.register_map)
        m.submodules.trigger = trigger = Trigger(config, precomputed_ends=True)

        connect(m, flipped(self.csr), decoder.bus)
        connect(m, decoder.registers, registers.bus)
        connect(m, flipped(self.gpu), trigger.gpu)
        connect(m, trigger.mem, flipped(self.mem))
        connect(m, trigger.events, flipped(self.events))

        attach = registers.attach
        hit_done = Signal(config.trigger.filter_entries)
        for index in range(config.trigger.filter_entries):
            def entry_storage(register, name):
                return registers.storage(entry_register_name(index, register), name)
            table_entry = trigger.table[index]
            base = registers.split_storage(entry_register_name(index, "base"))
            size = registers.split_storage(entry_register_name(index, "size"))
            m.d.comb += [
                table_entry.enable.eq(entry_storage("ctrl", "enable").data),
                table_entry.on_write.eq(entry_storage("ctrl", "on_write").data),
                table_entry.on_read.eq(entry_storage("ctrl", "on_read").data),
                table_entry.base.eq(Cat(storage.data for storage in base)),
                table_entry.size.eq(Cat(storage.data for storage in size)),
            ]
            # Each range's end is formed when its base or size is written, from the values
            # being written, so it is in step with them; matching compares against it
            # without an adder in front.
            end = Signal(config.addr_width + 1, name=f"end{index}")
            m.d.sync += end.eq(Cat(storage.next for storage in base) +
                               Cat(storage.next for storage in size))
            m.d.comb += trigger.ends[index].eq(end)
            hits = attach(entry_register_name(index, "hits"), "count",
                          Counter(config.counter_width, increment_width=len(trigger.hit_pulse[index])))
            m.d.comb += hits.increment.eq(trigger.hit_pulse[index])
            expected = entry_storage("expected", "count").data
            m.d.comb += hit_done[index].eq((expected != 0) & (hits.count >= expected))

        stall_cycles = attach("stall_cycles", "count", Counter(config.counter_width))
        # The total, not a sum over the entries: an adder tree in front of the counter.
        event_count = attach("event_count", "count",
                             Counter(config.counter_width, increment_width=len(trigger.produced)))
        id_reuse = attach("status", "id_reuse", StickyFlag())
        lsb = 0
        for register, field in self.register_map.split_field("hit_done"):
            done = attach(register.name, field.name, Status(field.width))
            m.d.comb += done.status.eq(hit_done[lsb:lsb + field.width])
            lsb += field.width
        irq_enable = Cat(storage.data for storage in registers.split_storage("irq_enable"))
        m.d.comb += [
            stall_cycles.increment.eq(trigger.stall),
            event_count.increment.eq(trigger.produced),
            id_reuse.set.eq(trigger.id_reuse),
            self.irq.eq((hit_done & irq_enable).any()),
        ]
        return m
