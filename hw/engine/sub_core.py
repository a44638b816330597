"""One sub-core: µthread slots, an issue pipeline of five stages and a write-back, and the
scalar units it owns.

The sub-core composes the stages of :mod:`.pipeline` around its memories (the instruction
memory and argument blocks the host writes, and each slot's scalar and vector registers):
every cycle PICK chooses an eligible µthread, and its instruction passes FETCH, DECODE and
OPERANDS to DISPATCH, which sends it to its unit or replays the µthread; WRITE-BACK puts
one unit answer a cycle into the registers. The design (fine-grained multithreading,
replay instead of stalls, errors) is described in docs/engine.md.
"""

from amaranth.hdl import Cat, Module, Signal, unsigned
from amaranth.lib import data, stream
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out, connect, flipped

from .alu import ALU
from .component import SubCoreComponent
from .decoder import Decoder, OperandClass
from .isa import ARGUMENT_WORDS, REGISTER_COUNT, OperandKind
from .layouts import (SCALAR_BITS, completion_layout, error_layout, memory_op_layout,
                      order_bits, retire_layout, scratchpad_op_layout, spawn_layout,
                      vector_layout, VectorUnitSignature)
from .multiply import Multiply
from .pipeline.decode import Decode
from .pipeline.dispatch import Dispatch
from .pipeline.fetch import Fetch
from .pipeline.layouts import OPERAND_NAMES, SCALAR_UNITS, VECTOR_UNITS
from .pipeline.operands import Operands
from .pipeline.pick import Pick
from .pipeline.scoreboard import Scoreboard
from .pipeline.slots import SlotState
from .pipeline.writeback import WriteBack


__all__ = ["SubCore", "memory_write_layout", "RETIRE_PORTS", "ERROR_PORTS"]


RETIRE_PORTS = 2        # dispatch, write-back
ERROR_PORTS = 2         # dispatch, write-back


def memory_write_layout(depth):
    """A write into a 64-bit-wide memory, 32 bits at a time (the register bus's width)."""
    return data.StructLayout({
        "addr": unsigned(max(1, (depth - 1).bit_length())),
        "data": unsigned(64),
        "en":   unsigned(2),
    })


class SubCore(SubCoreComponent):
    """Ports (besides the execution units it owns):

    spawn:         a µthread to start in the free slot it names.
    free:          slots without a µthread.
    imem_write, args_write: the host's writes into this sub-core's copies of the
                   instruction memory and the argument blocks.
    imem_host_*, args_host_*: the host's reads of them (one cycle).
    completed:     per entry, µthreads finished (the ``COMPLETED`` special).
    turn:          per entry, the sequence number whose turn it is (ordered entries; low
                   :func:`~.layouts.order_bits` bits, from :class:`~.ordering.AtomicOrder`).
    holding:       per slot, ordered atomics of its µthread still wait in the station.
    stopped:       entries stopped by an error; their µthreads end at dispatch.
    window_base, window_end: kernels' memory accesses must fall in [base, end).
    watchdog:      cycles a µthread may live.
    memory_ops / memory_done, scratchpad_ops / scratchpad_done: the shared units.
    memory_room:   the load/store unit has room for an op: PICK prefers the µthreads whose
                   next instruction accesses memory (``EngineConfig.memory_first``).
    fma / vector / divide / reduce / convert: vector execution units (owned by the engine
                   and connected here, so tests may substitute models).
    retire_valid / retire: µthreads that ended (up to RETIRE_PORTS per cycle).
    release:       per entry, an ordered µthread with nothing queued handed the turn on
                   at its exit.
    error_valid / error: errors (up to ERROR_PORTS per cycle).
    issued:        an instruction was dispatched this cycle (for occupancy figures).
    """

    def __init__(self, config, index=0):
        self.config = config
        self.index = index
        engine = config.engine
        entries = config.trigger.filter_entries
        super().__init__({
            "spawn":           In(stream.Signature(spawn_layout(config))),
            "free":            Out(engine.slots),
            "imem_write":      In(memory_write_layout(engine.instruction_words)),
            "args_write":      In(memory_write_layout(engine.argument_blocks * ARGUMENT_WORDS)),
            "imem_host_addr":  In(range(engine.instruction_words)),
            "imem_host_data":  Out(64),
            "args_host_addr":  In(range(engine.argument_blocks * ARGUMENT_WORDS)),
            "args_host_data":  Out(64),
            "completed":       In(data.ArrayLayout(unsigned(config.counter_width), entries)),
            "turn":            In(data.ArrayLayout(unsigned(order_bits(config)), entries)),
            "holding":         In(engine.slots),
            "stopped":         In(entries),
            "window_base":     In(config.addr_width + 1),
            "window_end":      In(config.addr_width + 1),
            "watchdog":        In(32),
            "memory_ops":      Out(stream.Signature(memory_op_layout(config))),
            "memory_done":     In(stream.Signature(completion_layout(config))),
            "memory_room":     In(1),
            "scratchpad_ops":  Out(stream.Signature(scratchpad_op_layout(config))),
            "scratchpad_done": In(stream.Signature(completion_layout(config))),
            "fma":             Out(VectorUnitSignature(config).flip()),
            "vector":          Out(VectorUnitSignature(config).flip()),
            "divide":          Out(VectorUnitSignature(config).flip()),
            "reduce":          Out(VectorUnitSignature(config).flip()),
            "convert":         Out(VectorUnitSignature(config).flip()),
            "retire_valid":    Out(RETIRE_PORTS),
            "retire":          Out(data.ArrayLayout(retire_layout(config), RETIRE_PORTS)),
            "release":         Out(entries),
            "error_valid":     Out(ERROR_PORTS),
            "error":           Out(data.ArrayLayout(error_layout(config), ERROR_PORTS)),
            "issued":          Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        engine = config.engine
        vector = vector_layout(config)

        m.submodules.slots = slots = SlotState(config)
        m.submodules.pick = pick = Pick(config)
        m.submodules.fetch = fetch = Fetch(config)
        m.submodules.decode = decode = Decode(config)
        m.submodules.operands = operands = Operands(config, self.index)
        m.submodules.dispatch = dispatch = Dispatch(config, self.index)
        m.submodules.writeback = writeback = WriteBack(config)
        m.submodules.scoreboard = scoreboard = Scoreboard(config)
        m.submodules.alu = alu = ALU(config)
        m.submodules.multiply = multiply = Multiply(config)

        # The instruction memory and the argument blocks (written and read by the host),
        # and per slot 16 registers of each kind; three read ports each but the
        # instruction memory's, one per source operand position (the vector registers:
        # ``vector_read_ports``, :meth:`_read_c_late`).
        m.submodules.imem = imem = Memory(shape=64, depth=engine.instruction_words, init=[])
        m.submodules.args = args = Memory(shape=64, depth=engine.argument_blocks * ARGUMENT_WORDS,
                                          init=[])
        m.submodules.xrf = xrf = Memory(shape=SCALAR_BITS, depth=engine.slots * REGISTER_COUNT,
                                        init=[])
        m.submodules.vrf = vrf = Memory(shape=vector, depth=engine.slots * REGISTER_COUNT, init=[])
        for memory, write in ((imem, self.imem_write), (args, self.args_write)):
            port = memory.write_port(granularity=32)
            m.d.comb += [port.addr.eq(write.addr), port.data.eq(write.data), port.en.eq(write.en)]
        for memory, address, data_out in ((imem, self.imem_host_addr, self.imem_host_data),
                                          (args, self.args_host_addr, self.args_host_data)):
            host_read = memory.read_port()
            m.d.comb += [host_read.addr.eq(address), data_out.eq(host_read.data)]
        imem_read = imem.read_port()
        m.d.comb += [imem_read.addr.eq(pick.imem_addr), imem_read.en.eq(1),
                     fetch.word.eq(imem_read.data)]
        if engine.in_flight > 1:
            lookahead_read = imem.read_port()
            m.d.comb += [lookahead_read.addr.eq(dispatch.lookahead_pc), lookahead_read.en.eq(1),
                         scoreboard.lookahead.eq(lookahead_read.data)]
        for position in range(len(OPERAND_NAMES)):
            for memory, address, data_in in (
                    (xrf, decode.register_read, operands.scalar_read),
                    (args, decode.argument_read, operands.argument_read)):
                read = memory.read_port()
                m.d.comb += [read.addr.eq(address[position]), read.en.eq(1),
                             data_in[position].eq(read.data)]
        vector_reads = [vrf.read_port() for _ in range(engine.vector_read_ports)]
        for position, read in enumerate(vector_reads):
            m.d.comb += [read.addr.eq(decode.register_read[position]), read.en.eq(1),
                         operands.vector_read[position].eq(read.data)]
        for memory, write in ((xrf, writeback.scalar_write), (vrf, writeback.vector_write)):
            port = memory.write_port()
            m.d.comb += [port.addr.eq(write.addr), port.data.eq(write.data), port.en.eq(write.en)]

        # The stages, in pipeline order.
        connect(m, flipped(self.spawn), slots.spawn)
        m.d.comb += [
            self.free.eq(slots.free),
            pick.eligible.eq(slots.eligible),
            pick.prefer.eq(scoreboard.memory_next & self.memory_room.replicate(engine.slots)
                           if engine.memory_first else 0),
            pick.pc.eq(slots.pc),
            slots.picked.eq(pick.picked),
            decode.arg_block.eq(slots.arg_block),
            slots.thread_read.eq(decode.thread_read),
            operands.event_data.eq(slots.event_data),
            operands.thread_info.eq(slots.thread_info),
            operands.entry.eq(slots.entry),
            operands.seq.eq(slots.seq),
            operands.completed.eq(self.completed),
        ]
        connect(m, pick.o, fetch.i)
        connect(m, fetch.o, decode.i)
        connect(m, decode.o, operands.i)
        if engine.vector_read_ports == len(OPERAND_NAMES):
            connect(m, operands.o, dispatch.i)
        else:
            self._read_c_late(m, imem_read.data, fetch, pick, operands, dispatch,
                              vector_reads[0])

        m.d.comb += [
            operands.age.eq(slots.age),
            operands.window_base.eq(self.window_base),
            operands.window_end.eq(self.window_end),
            operands.watchdog.eq(self.watchdog),
            operands.ordered.eq(slots.ordered),
            operands.released.eq(slots.released),
            operands.turn.eq(self.turn),
            operands.holding.eq(self.holding),
            operands.stopped.eq(self.stopped),
            dispatch.kind.eq(slots.kind),
            dispatch.ordered.eq(slots.ordered),
            dispatch.released.eq(slots.released),
            dispatch.turn.eq(self.turn),
            dispatch.holding.eq(self.holding),
            dispatch.stopped.eq(self.stopped),
            slots.update_valid.eq(dispatch.update_valid),
            slots.update.eq(dispatch.update),
            self.issued.eq(dispatch.issued),
            self.release.eq(dispatch.release),
        ]
        own_units = {"alu": alu, "multiply": multiply}
        for name in SCALAR_UNITS.values():
            connect(m, getattr(dispatch, name), own_units[name].request)
            connect(m, own_units[name].result, getattr(writeback, name))
        for name in VECTOR_UNITS.values():
            connect(m, getattr(dispatch, name), flipped(getattr(self, name).request))
            connect(m, flipped(getattr(self, name).result), getattr(writeback, name))
        connect(m, dispatch.memory_ops, flipped(self.memory_ops))
        connect(m, dispatch.scratchpad_ops, flipped(self.scratchpad_ops))
        connect(m, flipped(self.memory_done), writeback.memory)
        connect(m, flipped(self.scratchpad_done), writeback.scratchpad)

        m.d.comb += [
            dispatch.idle.eq(scoreboard.idle),
            dispatch.dying.eq(slots.dying),
            dispatch.room.eq(writeback.room),
            scoreboard.start.eq(slots.start),
            scoreboard.issue_valid.eq(dispatch.issue_valid),
            scoreboard.issue.eq(dispatch.issue),
            scoreboard.lookahead_valid.eq(dispatch.lookahead_valid),
            scoreboard.lookahead_slot.eq(dispatch.lookahead_slot),
            scoreboard.answer_valid.eq(writeback.answer_valid),
            scoreboard.answer.eq(writeback.answer),
            slots.ready.eq(scoreboard.ready),
            writeback.update_valid.eq(dispatch.update_valid),
            writeback.update.eq(dispatch.update),
            writeback.memory_dest.eq(slots.memory_dest),
            writeback.scratchpad_dest.eq(slots.scratchpad_dest),
            writeback.last.eq(scoreboard.last),
            writeback.exit_pending.eq(slots.exit_pending),
            writeback.dying.eq(slots.dying),
            writeback.in_pipe.eq(slots.in_pipe),
            writeback.entry.eq(slots.entry),
            writeback.kind.eq(slots.kind),
            writeback.killed.eq(dispatch.kill),
            writeback.decided.eq(dispatch.decided),
            slots.decided.eq(dispatch.decided),
            slots.clear.eq(dispatch.clear | scoreboard.looked_up),
            slots.retire.eq(dispatch.end | writeback.end),
            slots.kill.eq(dispatch.kill | writeback.kill),
        ]
        for port, stage in enumerate((dispatch, writeback)):
            m.d.comb += [
                self.retire_valid[port].eq(stage.retire_valid),
                self.retire[port].eq(stage.retire),
                self.error_valid[port].eq(stage.error_valid),
                self.error[port].eq(stage.error),
            ]
        return m

    @staticmethod
    def _read_c_late(m, fetched_word, fetch, pick, operands, dispatch, first_read):
        """With two read ports of the vector registers, an instruction's vector register
        ``c`` is read through the first port while the instruction is in OPERANDS, and
        arrives for DISPATCH in place of OPERANDS's value of it. The port is DECODE's that
        cycle, so PICK picks none while the instruction is in FETCH: DECODE is empty when
        it reaches OPERANDS."""
        c = OPERAND_NAMES.index("c")
        m.submodules.fetched = fetched = Decoder()
        m.d.comb += fetched.instruction.eq(fetched_word)

        def reads_vector_c(control):
            return ((control.c.kind == OperandKind.REGISTER) &
                    (control.c.type == OperandClass.VECTOR))

        record = operands.i.payload
        reading_c = Signal()
        read_c = Signal()
        m.d.comb += [
            pick.hold.eq(fetch.i.valid & reads_vector_c(fetched.control)),
            reading_c.eq(operands.i.valid & reads_vector_c(record.control)),
        ]
        with m.If(reading_c):
            m.d.comb += first_read.addr.eq(Cat(record.control.c.index, record.slot))
        m.d.sync += read_c.eq(reading_c)
        m.d.comb += [dispatch.i.valid.eq(operands.o.valid),
                     dispatch.i.payload.eq(operands.o.payload)]
        with m.If(read_c):
            m.d.comb += dispatch.i.payload.vector[c].eq(first_read.data)
