"""One NDP slice: the top level beside one GPU memory channel (ARCHITECTURE §2, §4.1).

For now the slice is the trigger, its register file and counters; trigger events leave on
the ``events`` stream, which the NDP engine will consume.
"""

from amaranth.hdl import Module, Signal, Cat, Mux
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from .config import NDPConfig
from .bus.register_file import RegisterFile
from .bus.signature import CSRBusSignature
from .csr_map import MAGIC, VERSION, register_map, entry_register_name
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
        m.submodules.registers = registers = RegisterFile(self.register_map)
        m.submodules.trigger = trigger = Trigger(config, precomputed_ends=True)

        connect(m, flipped(self.csr), registers.bus)
        connect(m, flipped(self.gpu), trigger.gpu)
        connect(m, trigger.mem, flipped(self.mem))
        connect(m, trigger.events, flipped(self.events))

        field = registers.field
        m.d.comb += [
            field("id", "magic").value.eq(MAGIC),
            field("version", "version").value.eq(VERSION),
            field("config", "filter_entries").value.eq(config.trigger.filter_entries),
            field("config", "sector_bytes").value.eq(config.sector_bytes),
            field("config", "addr_width").value.eq(config.addr_width),
            field("config", "id_width").value.eq(config.id_width),
        ]

        def counter(port, increment):
            with m.If(port.w_stb):
                m.d.sync += port.value.eq(port.w_data)
            with m.Else():
                m.d.sync += port.value.eq(port.value + increment)

        hit_done = Signal(config.trigger.filter_entries)
        for index in range(config.trigger.filter_entries):
            def entry_field(register, name):
                return field(entry_register_name(index, register), name).value
            table_entry = trigger.table[index]
            m.d.comb += [
                table_entry.enable.eq(entry_field("ctrl", "enable")),
                table_entry.on_write.eq(entry_field("ctrl", "on_write")),
                table_entry.on_read.eq(entry_field("ctrl", "on_read")),
                table_entry.base.eq(Cat(entry_field("base_lo", "base"), entry_field("base_hi", "base"))),
                table_entry.size.eq(Cat(entry_field("size_lo", "size"), entry_field("size_hi", "size"))),
            ]
            # Each range's end is formed when its base or size is written, from the values
            # being written, so it is in step with them; matching compares against it
            # without an adder in front.
            def written(*registers):
                ports = [field(entry_register_name(index, register), name)
                         for register, name in registers]
                return Cat(*(Mux(port.w_stb, port.w_data, port.value) for port in ports))
            end = Signal(config.addr_width + 1, name=f"end{index}")
            m.d.sync += end.eq(written(("base_lo", "base"), ("base_hi", "base")) +
                               written(("size_lo", "size"), ("size_hi", "size")))
            m.d.comb += trigger.ends[index].eq(end)
            hits = field(entry_register_name(index, "hits"), "count")
            counter(hits, trigger.hit_pulse[index])
            expected = entry_field("expected", "count")
            m.d.comb += hit_done[index].eq((expected != 0) & (hits.value >= expected))

        counter(field("stall_cycles", "count"), trigger.stall)
        # The total, not a sum over the entries: an adder tree in front of the counter.
        counter(field("event_count", "count"), trigger.produced)

        id_reuse = field("status", "id_reuse")
        with m.If(trigger.id_reuse):
            m.d.sync += id_reuse.value.eq(1)
        with m.Elif(id_reuse.w_stb & id_reuse.w_data):
            m.d.sync += id_reuse.value.eq(0)

        m.d.comb += [
            field("hit_done", "mask").value.eq(hit_done),
            self.irq.eq((hit_done & field("irq_enable", "mask").value).any()),
        ]
        return m
