"""One NDP slice: the top level beside one GPU memory channel (docs/architecture.md).

The GPU's requests pass through the trigger toward memory; accesses to registered ranges
become events, on which the NDP engine runs kernels; the engine's own memory accesses join
the GPU's below the trigger, in the arbiter. The register bus reaches the register file
and, through the decoder's windows, the engine's instruction memory, argument blocks and
scratchpad. ``irq`` is ``OR(COMPLETE & IRQ_ENABLE)``.

Memory reports failed accesses: a read response's ``status`` (passed to the read's
requester unchanged) and, for writes, which have no response on the memory port, a pulse
on ``mem_write_error`` from whatever answers the writes (tie it to 0 where writes cannot
fail). Both are counted in ``MEM_READ_ERRORS`` and ``MEM_WRITE_ERRORS``.

``NDPConfig(engine=None)`` builds the trigger alone: its events leave on the ``events``
port, no arbiter stands on the memory side, and an entry is complete when its hits reach
the expected count.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from .arbiter import MemoryArbiter, with_id_width
from .bus.action import ClearableStatus, Counter, Status, StickyFlag
from .bus.decoder import BusDecoder
from .bus.register_file import RegisterFile
from .bus.signature import CSRBusSignature
from .config import NDPConfig
from .csr_map import (ARGS_WINDOW, IMEM_WINDOW, SCRATCHPAD_WINDOW, entry_register_name,
                      register_map)
from .layouts import MemoryPortSignature, trigger_event_layout
from .trigger import Trigger
from .trigger.gather import ArrivalGather


__all__ = ["NDPSlice"]


class NDPSlice(wiring.Component):
    """Ports: ``gpu`` (target, the GPU's requests), ``mem`` (initiator, toward the memory
    controller; ids of :attr:`~.config.NDPConfig.mem_id_width` bits), ``mem_write_error``
    (one cycle per write memory refused), ``csr`` (the register bus), ``irq``; without an
    engine, ``events`` (the trigger's events)."""

    def __init__(self, config=None):
        self.config = config = config or NDPConfig()
        self.register_map = register_map(config)
        members = {
            "gpu": In(MemoryPortSignature(config)),
            "mem": Out(MemoryPortSignature(with_id_width(config, config.mem_id_width))),
            "mem_write_error": In(1),
            "csr": In(CSRBusSignature(self.register_map.addr_width)),
            "irq": Out(1),
        }
        if config.engine is None:
            members["events"] = Out(stream.Signature(trigger_event_layout(config)))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        config = self.config
        entries = config.trigger.filter_entries
        has_engine = config.engine is not None
        m.submodules.decoder = decoder = BusDecoder(
            self.register_map, windows=None if has_engine else ())
        m.submodules.registers = registers = RegisterFile(self.register_map)
        m.submodules.trigger = trigger = Trigger(config, precomputed_ends=True)

        connect(m, flipped(self.csr), decoder.bus)
        connect(m, decoder.registers, registers.bus)
        connect(m, flipped(self.gpu), trigger.gpu)

        attach = registers.attach
        hit_done = Signal(entries)
        for index in range(entries):
            def entry_storage(register, name):
                return registers.storage(entry_register_name(index, register), name)
            table_entry = trigger.table[index]
            base = registers.split_storage(entry_register_name(index, "base"))
            size = registers.split_storage(entry_register_name(index, "size"))
            # Each range's end is a register, so matching compares against it without an
            # adder in front. It is summed from the stored base and size, a cycle after they
            # are written (summing the values being written would put the bus's address
            # decoder in front of the adder); in that one cycle the entry matches nothing, so
            # no request is matched against a new base and an old end.
            end = Signal(config.addr_width + 1, name=f"end{index}")
            range_written = Signal(name=f"range_written{index}")
            m.d.sync += [
                end.eq(Cat(storage.data for storage in base) +
                       Cat(storage.data for storage in size)),
                range_written.eq(Cat(storage.written for storage in base + size).any()),
            ]
            m.d.comb += [
                table_entry.enable.eq(entry_storage("ctrl", "enable").data & ~range_written),
                table_entry.on_write.eq(entry_storage("ctrl", "on_write").data),
                table_entry.on_read.eq(entry_storage("ctrl", "on_read").data),
                table_entry.base.eq(Cat(storage.data for storage in base)),
                table_entry.size.eq(Cat(storage.data for storage in size)),
                trigger.ends[index].eq(end),
            ]
            hits = attach(entry_register_name(index, "hits"), "count",
                          Counter(config.counter_width, increment_width=len(trigger.hit_pulse[index])))
            m.d.comb += hits.increment.eq(trigger.hit_pulse[index])
            expected = entry_storage("expected", "count").data
            # The FPGA build (the pipelined trigger) registers the comparison: its carry
            # chain then stands before a flop, not before the register file's answer.
            done_domain = m.d.sync if config.trigger.pipelined else m.d.comb
            done_domain += hit_done[index].eq((expected != 0) & (hits.count >= expected))

        stall_cycles = attach("stall_cycles", "count", Counter(config.counter_width))
        # The total, not a sum over the entries: an adder tree in front of the counter.
        event_count = attach("event_count", "count",
                             Counter(config.counter_width, increment_width=len(trigger.produced)))
        id_reuse = attach("status", "id_reuse", StickyFlag())
        m.d.comb += [
            stall_cycles.increment.eq(trigger.stall),
            event_count.increment.eq(trigger.produced),
        ]
        m.d.comb += id_reuse.set.eq(trigger.id_reuse)
        # Counted a cycle late, from registers: the memory side's handshake stays off the
        # counters' carry chains.
        read_error_seen = Signal()
        write_error_seen = Signal()
        m.d.sync += [
            read_error_seen.eq(self.mem.resp.valid & self.mem.resp.ready &
                               self.mem.resp.payload.status.as_value()[1]),
            write_error_seen.eq(self.mem_write_error),
        ]
        read_errors = attach("mem_read_errors", "count", Counter(config.counter_width))
        write_errors = attach("mem_write_errors", "count", Counter(config.counter_width))
        m.d.comb += [
            read_errors.increment.eq(read_error_seen),
            write_errors.increment.eq(write_error_seen),
        ]

        if has_engine:
            complete = self._engine(m, registers, decoder, trigger)
        else:
            connect(m, trigger.mem, flipped(self.mem))
            connect(m, trigger.events, flipped(self.events))
            complete = hit_done

        self._show_mask(m, registers, "complete", complete)
        irq_enable = Cat(storage.data for storage in registers.split_storage("irq_enable"))
        m.d.comb += self.irq.eq((complete & irq_enable).any())
        return m

    def _show_mask(self, m, registers, name, mask):
        """Drive the ``RO`` split field ``name`` (one bit per entry) from ``mask``."""
        lsb = 0
        for register, field in self.register_map.split_field(name):
            shown = registers.attach(register.name, field.name, Status(field.width))
            m.d.comb += shown.status.eq(mask[lsb:lsb + field.width])
            lsb += field.width

    def _engine(self, m, registers, decoder, trigger):
        """The engine, the arbiter and their registers; returns the COMPLETE mask."""
        from .engine.engine import Engine

        config = self.config
        entries = config.trigger.filter_entries
        attach = registers.attach
        m.submodules.engine = engine = Engine(config)
        m.submodules.arbiter = arbiter = MemoryArbiter(config)
        gather = None
        if config.trigger.gather_sectors:
            m.submodules.gather = gather = ArrivalGather(config)
            connect(m, trigger.events, gather.i)
            connect(m, gather.o, engine.events)
            gather_error = attach("status", "gather_error", StickyFlag())
            m.d.comb += gather_error.set.eq(gather.error)
        else:
            connect(m, trigger.events, engine.events)
        connect(m, trigger.mem, arbiter.gpu)
        connect(m, engine.mem, arbiter.ndp)
        connect(m, arbiter.mem, flipped(self.mem))
        connect(m, getattr(decoder.windows, IMEM_WINDOW), engine.imem_bus)
        connect(m, getattr(decoder.windows, ARGS_WINDOW), engine.args_bus)
        connect(m, getattr(decoder.windows, SCRATCHPAD_WINDOW), engine.scratchpad_bus)

        complete = Signal(entries)
        stopped = Signal(entries)
        for index in range(entries):
            def entry_storage(register, name):
                return registers.storage(entry_register_name(index, register), name)
            enable = entry_storage("ctrl", "enable")
            entry_config = engine.entry_config[index]
            status = engine.status[index]
            m.d.comb += [
                entry_config.main_pc.eq(entry_storage("kernel_pc", "pc").data),
                entry_config.init_pc.eq(entry_storage("helper_pcs", "init").data),
                entry_config.final_pc.eq(entry_storage("helper_pcs", "final").data),
                entry_config.has_init.eq(entry_storage("ctrl", "has_init").data),
                entry_config.has_final.eq(entry_storage("ctrl", "has_final").data),
                entry_config.ordered.eq(entry_storage("ctrl", "ordered").data),
                entry_config.arg_block.eq(entry_storage("arg_index", "index").data),
                entry_config.expected.eq(entry_storage("expected", "count").data),
                entry_config.init_threads.eq(entry_storage("init_threads", "count").data),
                entry_config.final_threads.eq(entry_storage("final_threads", "count").data),
                complete[index].eq(status.complete),
                stopped[index].eq(status.stopped),
            ]
            # Setting ENABLE arms the entry, a cycle after the write, when the fields written
            # with ENABLE (HAS_INIT, ORDERED, ...) hold their new values too.
            arm = Signal(name=f"arm{index}")
            m.d.sync += arm.eq(enable.next & ~enable.data)
            m.d.comb += engine.arm[index].eq(arm)
            if gather is not None:
                m.d.comb += [
                    gather.arm[index].eq(arm),
                    *(getattr(gather.gather[index], name).eq(entry_storage("gather", name).data)
                      for name in ("ports", "copy_log2", "slot")),
                ]
            for register in ("completed", "drained"):
                shown = attach(entry_register_name(index, register), "count",
                               Status(config.counter_width))
                m.d.comb += shown.status.eq(getattr(status, register))
        self._show_mask(m, registers, "stopped", stopped)

        recorded = attach("error", "recorded", ClearableStatus())
        cause = attach("error", "cause", Status(3))
        entry = attach("error", "entry", Status(6))
        error_pc = attach("error_pc", "pc", Status(config.engine.pc_bits))
        instructions = attach("instructions", "count",
                              Counter(config.counter_width, increment_width=len(engine.issued)))
        ndp_requests = attach("ndp_requests", "count", Counter(config.counter_width))
        m.d.comb += [
            recorded.status.eq(engine.error_recorded),
            engine.clear_error.eq(recorded.clear),
            cause.status.eq(engine.first_error.cause),
            entry.status.eq(engine.first_error.entry),
            error_pc.status.eq(engine.first_error.pc),
            engine.window_base.eq(Cat(s.data for s in registers.split_storage("window_base"))),
            engine.window_end.eq(Cat(s.data for s in registers.split_storage("window_end"))),
            engine.watchdog.eq(registers.storage("watchdog", "cycles").data),
            instructions.increment.eq(engine.issued),
            ndp_requests.increment.eq(arbiter.ndp.req.valid & arbiter.ndp.req.ready),
        ]
        return complete
