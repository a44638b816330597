"""The NDP engine: trigger events in, kernels run, memory and scratchpad accessed.

Structure (docs/engine.md)::

    events ─► Spawner ─► SubCore 0 … n−1 ──memory ops──► merge ─► LoadStoreUnit ─► mem
                 ▲         │  ▲      │ ▲  ──scratchpad ops─► merge ─► AtomicOrder ─► Scratchpad
                 │         ▼  │      ▼ │                                             ▲
              EntryControl ◄─ retire, errors                           host window (spad)

Each sub-core owns its execution units (ALU, multiply, FMA lanes, vector lanes, BF16
conversion, divide/square root, reductions) and its copies of the instruction memory and
the argument blocks; the host writes every copy at once through the instruction and
argument windows. The load/store unit and the scratchpad are shared.
"""

from amaranth.hdl import Cat, Module, Signal, unsigned
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out, connect, flipped

from ..bus.signature import CSRBusSignature
from ..layouts import trigger_event_layout
from ..stream import RoundRobinMerge, SkidBuffer
from .component import EngineComponent
from .convert import VectorConvert
from .divide import VectorDivide
from .entries import EntryControl
from .fma_lanes import FMALanes
from .isa import ARGUMENT_WORDS
from .layouts import (entry_config_layout, entry_status_layout, error_layout, memory_op_layout,
                      ndp_memory_port_signature, scratchpad_op_layout)
from .load_store import LoadStoreUnit
from .ordering import AtomicOrder
from .posted_stores import PostedStores
from .reduce import reduce_unit
from .scratchpad import Scratchpad
from .spawner import Spawner
from .sub_core import ERROR_PORTS, RETIRE_PORTS, SubCore
from .vector_misc import VectorMisc


__all__ = ["Engine", "window_word_bits"]


def window_word_bits(words_64):
    """Byte-address bits of a host window onto ``words_64`` 64-bit words."""
    return (8 * words_64 - 1).bit_length()


class Engine(EngineComponent):
    """Ports:

    events:        trigger events (from the trigger).
    mem:           the engine's memory port (toward the slice's arbiter).
    entry_config / arm / status: per filter entry, from and to the register file.
    first_error / error_recorded / clear_error: the first error.
    window_base / window_end: kernels' memory accesses must fall in [base, end).
    watchdog:      cycles a µthread may live.
    imem_bus / args_bus / scratchpad_bus: the host's windows (register-bus targets).
    issued:        instructions dispatched this cycle, all sub-cores.
    active:        µthreads alive, all sub-cores.
    """

    def __init__(self, config):
        self.config = config
        engine = config.engine
        entries = config.trigger.filter_entries
        spad_words = engine.scratchpad_bytes // 4
        super().__init__({
            "events":         In(stream.Signature(trigger_event_layout(config))),
            "mem":            Out(ndp_memory_port_signature(config)),
            "entry_config":   In(data.ArrayLayout(entry_config_layout(config), entries)),
            "arm":            In(entries),
            "status":         Out(data.ArrayLayout(entry_status_layout(config), entries)),
            "first_error":    Out(error_layout(config)),
            "error_recorded": Out(1),
            "clear_error":    In(1),
            "window_base":    In(config.addr_width + 1),
            "window_end":     In(config.addr_width + 1),
            "watchdog":       In(32),
            "imem_bus":       In(CSRBusSignature(window_word_bits(engine.instruction_words))),
            "args_bus":       In(CSRBusSignature(window_word_bits(
                engine.argument_blocks * ARGUMENT_WORDS))),
            "scratchpad_bus": In(CSRBusSignature((spad_words - 1).bit_length() + 2)),
            "issued":         Out(range(engine.sub_cores + 1)),
            "active":         Out(range(engine.sub_cores * engine.slots + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        engine = config.engine
        sub_cores = engine.sub_cores

        cores = []
        for index in range(sub_cores):
            core = SubCore(config, index)
            m.submodules[f"core{index}"] = core
            for name, make_unit in (("fma", FMALanes), ("vector", VectorMisc),
                                    ("divide", VectorDivide), ("reduce", reduce_unit),
                                    ("convert", VectorConvert)):
                unit = make_unit(config)
                m.submodules[f"core{index}_{name}"] = unit
                connect(m, getattr(core, name), unit)
            cores.append(core)

        m.submodules.spawner = spawner = Spawner(config)
        m.submodules.entries = control = EntryControl(
            config, retire_ports=sub_cores * RETIRE_PORTS, error_ports=sub_cores * ERROR_PORTS)
        m.submodules.order = order = AtomicOrder(config, release_sources=sub_cores)
        m.submodules.load_store = load_store = LoadStoreUnit(config)
        m.submodules.posted_stores = posted_stores = PostedStores(config)
        m.submodules.scratchpad = scratchpad = Scratchpad(config)
        if sub_cores > 1:
            m.submodules.memory_merge = memory_merge = RoundRobinMerge(memory_op_layout(config),
                                                                       sub_cores)
            m.submodules.scratchpad_merge = spad_merge = RoundRobinMerge(
                scratchpad_op_layout(config), sub_cores)
            memory_ops, spad_ops = memory_merge.o, spad_merge.o
            memory_inputs, spad_inputs = memory_merge.i, spad_merge.i
        else:
            memory_ops = memory_inputs = spad_ops = spad_inputs = None

        def boundary(name, layout, sink):
            """The stream ``sink`` as its sources see it: itself or, in a pipelined engine,
            a skid buffer in front of it, whose outputs (its ``ready`` included) are
            registers, so that no handshake runs through both sides in one cycle."""
            if not engine.pipelined:
                return sink
            m.submodules[name] = buffer = SkidBuffer(layout)
            connect(m, buffer.o, sink)
            return buffer.i

        # Not in front of the ordering station: an op it refuses must stay with its µthread,
        # which replays it (docs/engine.md, "Ordering station").
        connect(m, flipped(self.events), boundary("events_stage", trigger_event_layout(config),
                                                  spawner.events))
        connect(m, order.o, boundary("scratchpad_stage", scratchpad_op_layout(config),
                                     scratchpad.ops))
        memory_sink = boundary("memory_stage", memory_op_layout(config), load_store.ops)
        if sub_cores > 1:
            connect(m, memory_ops, memory_sink)
            connect(m, spad_ops, order.i)
        # A posted store is counted as it leaves its sub-core (the merge holds nothing), so
        # it counts before the µthread that sent it can end.
        m.d.comb += [
            posted_stores.sent_valid.eq(memory_sink.valid & memory_sink.ready &
                                        memory_sink.payload.posted),
            posted_stores.sent_entry.eq(memory_sink.payload.entry),
            posted_stores.stored_valid.eq(load_store.stored_valid),
            posted_stores.stored_entry.eq(load_store.stored_entry),
            control.stores_pending.eq(posted_stores.pending),
        ]
        connect(m, load_store.mem, flipped(self.mem))
        connect(m, flipped(self.scratchpad_bus), scratchpad.host)

        m.d.comb += [
            control.entry_config.eq(self.entry_config),
            control.arm.eq(self.arm),
            control.clear_error.eq(self.clear_error),
            self.status.eq(control.status),
            self.first_error.eq(control.first_error),
            self.error_recorded.eq(control.error_recorded),
            spawner.entry_config.eq(self.entry_config),
            spawner.accepts.eq(control.accepts),
            spawner.init_request.eq(control.init_request),
            spawner.final_request.eq(control.final_request),
            spawner.seq.eq(control.seq),
            spawner.helper_seq.eq(control.helper_seq),
            control.spawned.eq(spawner.spawned),
            control.spawned_entry.eq(spawner.spawned_entry),
            control.spawned_kind.eq(spawner.spawned_kind),
            control.drained.eq(spawner.drained),
            control.drained_entry.eq(spawner.drained_entry),
            order.arm.eq(self.arm),
        ]
        stopped = Cat(*(control.status[entry].stopped
                        for entry in range(config.trigger.filter_entries)))
        completed = Signal(data.ArrayLayout(unsigned(config.counter_width),
                                            config.trigger.filter_entries))
        for entry in range(config.trigger.filter_entries):
            m.d.comb += completed[entry].eq(control.status[entry].completed)
        m.d.comb += [spawner.stopped.eq(stopped), order.stopped.eq(stopped)]

        issued = 0
        active = 0
        for index, core in enumerate(cores):
            connect(m, spawner.spawn[index], core.spawn)
            if sub_cores > 1:
                connect(m, core.memory_ops, memory_inputs[index])
                connect(m, core.scratchpad_ops, spad_inputs[index])
            else:
                connect(m, core.memory_ops, memory_sink)
                connect(m, core.scratchpad_ops, order.i)
            connect(m, load_store.completions[index], core.memory_done)
            m.d.comb += core.memory_room.eq(load_store.room)
            connect(m, scratchpad.completions[index], core.scratchpad_done)
            m.d.comb += [
                spawner.free[index].eq(core.free),
                core.completed.eq(completed),
                core.turn.eq(order.turn),
                core.holding.eq(order.holding[index * engine.slots:(index + 1) * engine.slots]),
                core.stopped.eq(stopped),
                core.window_base.eq(self.window_base),
                core.window_end.eq(self.window_end),
                core.watchdog.eq(self.watchdog),
                order.release[index].eq(core.release),
            ]
            # Retirements only count towards completion, so a pipelined engine registers
            # them: the entry control's counters are then not at the end of a dispatch.
            retire_domain = m.d.sync if engine.pipelined else m.d.comb
            for port in range(RETIRE_PORTS):
                retire_domain += [
                    control.retire_valid[index * RETIRE_PORTS + port].eq(core.retire_valid[port]),
                    control.retire[index * RETIRE_PORTS + port].eq(core.retire[port])]
            for port in range(ERROR_PORTS):
                m.d.comb += [control.error_valid[index * ERROR_PORTS + port].eq(core.error_valid[port]),
                             control.error[index * ERROR_PORTS + port].eq(core.error[port])]
            issued = issued + core.issued
            active = active + sum(core.free[slot] == 0 for slot in range(engine.slots))
        m.d.comb += [self.issued.eq(issued), self.active.eq(active)]

        # Host windows onto the instruction memory and the argument blocks: 32-bit words,
        # two per 64-bit entry (low word first); every sub-core's copy is written together,
        # reads come from sub-core 0's.
        for bus, write_name, read_name in ((self.imem_bus, "imem_write", "imem_host"),
                                           (self.args_bus, "args_write", "args_host")):
            word = bus.addr[3:]
            half = bus.addr[2]
            for core in cores:
                write = getattr(core, write_name)
                m.d.comb += [write.addr.eq(word), write.data.eq(Cat(bus.w_data, bus.w_data)),
                             write.en.eq(_half_enables(bus.w_en & (bus.addr[:2] == 0), half))]
            read_half = Signal()
            m.d.comb += getattr(cores[0], read_name + "_addr").eq(word)
            m.d.sync += [
                bus.ack.eq(bus.r_en | bus.w_en),
                bus.err.eq((bus.r_en | bus.w_en) & (bus.addr[:2] != 0)),
                read_half.eq(half),
            ]
            m.d.comb += bus.r_data.eq(getattr(cores[0], read_name + "_data").word_select(read_half, 32))
        return m


def _half_enables(enable, half):
    """Write enables of the two 32-bit halves for a write of half ``half``."""
    return Cat(enable & ~half, enable & half)
