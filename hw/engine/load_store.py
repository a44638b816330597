"""The engine's load/store unit: the sub-cores' memory operations, merged into one stream,
become requests on the engine's memory port (ids name µthreads, read responses come back in
any order); each access completes on its sub-core's completion stream, a store when the
port accepts its request, unless it is posted: then it completes nothing, and ``stored``
names its entry as the port takes it. ``room`` says whether it would take an op now (for
PICK's preference). The protocol, what each op requests and completes with, and the
timing are in docs/engine.md, "Load/store unit".
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, unsigned
from amaranth.lib import data, stream
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..stream import Queue
from .completion import CompletingUnit
from .isa import MEMORY_STORES, Opcode
from .layouts import memory_op_layout, ndp_memory_port_signature, vector_layout


__all__ = ["LoadStoreUnit"]


class LoadStoreUnit(CompletingUnit):
    """The load/store unit of an engine with ``config.engine.sub_cores`` sub-cores."""

    def __init__(self, config):
        super().__init__(config, {
            "ops": In(stream.Signature(memory_op_layout(config))),
            "mem": Out(ndp_memory_port_signature(config)),
            "stored_valid": Out(1),
            "stored_entry": Out(config.trigger.entry_bits),
            "room":         Out(1),
        })

    def _legal(self, op):
        """Whether the unit performs ``op``: a memory opcode at an aligned address."""
        opcode = op.opcode
        vector_op = (opcode == Opcode.VLD) | (opcode == Opcode.VST) | (opcode == Opcode.VSTM)
        word_op = (opcode == Opcode.LW) | (opcode == Opcode.SW)
        aligned = Mux(vector_op, op.addr[:self.config.offset_bits] == 0, op.addr[:2] == 0)
        return (vector_op | word_op) & aligned

    def elaborate(self, platform):
        m = Module()
        config = self.config
        engine = config.engine
        lanes = config.lanes
        word_bits = (lanes - 1).bit_length()

        # Marks: a refused op, a store accepted by the port, and a load memory failed.
        queue = self.completion_queue(m, marks=3)
        refused_mark, store_mark, failed_mark = queue.marks

        request = self.mem.req
        register_free = ~request.valid | request.ready
        offered = self.ops.payload
        offered_legal = self._legal(offered)
        if engine.memory_queue:
            # Ops the port cannot take yet wait here, in order, while DISPATCH goes on; an op
            # goes straight to the request register only while none waits.
            m.submodules.waiting = waiting = Queue(memory_op_layout(config), engine.memory_queue)
            direct = register_free & (waiting.level == 0)
            m.d.comb += [
                self.ops.ready.eq(~offered_legal | direct | waiting.i.ready),
                waiting.i.valid.eq(self.ops.valid & offered_legal & ~direct),
                waiting.i.payload.eq(offered),
                waiting.o.ready.eq(register_free),
                self.room.eq(waiting.i.ready),
            ]
            op = Mux(waiting.o.valid, Value.cast(waiting.o.payload), Value.cast(offered))
            take = Mux(waiting.o.valid, 1, self.ops.valid & offered_legal & direct)
        else:
            m.d.comb += [self.ops.ready.eq(~offered_legal | register_free),
                         self.room.eq(register_free)]
            op = Value.cast(offered)
            take = self.ops.valid & offered_legal
        op = memory_op_layout(config)(op)
        opcode = op.opcode
        word_op = (opcode == Opcode.LW) | (opcode == Opcode.SW)
        write = Cat(*(opcode == code for code in MEMORY_STORES)).any()
        word = op.addr[2:config.offset_bits]
        word_mask = Const(0xF, 4) << Cat(Const(0, 2), word)
        all_bytes = Const((1 << config.sector_bytes) - 1, config.sector_bytes)

        # How a read's response becomes its completion, kept by µthread until it returns.
        response_format = data.StructLayout({"word_only": 1, "word": unsigned(word_bits)})
        request_format = Signal(response_format)
        request_posted = Signal()
        request_entry = Signal(config.trigger.entry_bits)
        with m.If(register_free):
            m.d.sync += request.valid.eq(take)
            with m.If(take):
                m.d.sync += [
                    request.payload.addr.eq(Cat(Const(0, config.offset_bits),
                                                op.addr[config.offset_bits:])),
                    request.payload.write.eq(write),
                    request.payload.data.eq(op.data),
                    request.payload.mask.eq(Mux(word_op, word_mask,
                                                Mux(opcode == Opcode.VSTM, op.mask, all_bytes))),
                    request.payload.id.eq(op.thread),
                    request_format.word_only.eq(word_op),
                    request_format.word.eq(word),
                    request_posted.eq(op.posted & write),
                    request_entry.eq(op.entry),
                ]

        threads = engine.sub_cores * engine.slots
        m.submodules.formats = formats = Memory(shape=response_format, depth=threads, init=[])
        format_write = formats.write_port()
        format_read = formats.read_port()
        accepted = request.valid & request.ready
        m.d.comb += [
            format_write.addr.eq(request.payload.id),
            format_write.data.eq(request_format),
            format_write.en.eq(accepted & ~request.payload.write),
            store_mark.valid.eq(accepted & request.payload.write & ~request_posted),
            self.stored_valid.eq(accepted & request_posted),
            self.stored_entry.eq(request_entry),
            store_mark.payload.thread.eq(request.payload.id),
            store_mark.payload.error.eq(0),
            refused_mark.valid.eq(self.ops.valid & ~offered_legal),
            refused_mark.payload.thread.eq(offered.thread),
            refused_mark.payload.error.eq(1),
        ]

        # A response is registered while its format is read, then becomes a completion.
        response = self.mem.resp
        response_valid = Signal()
        response_thread = Signal(engine.thread_bits)
        response_sector = Signal(vector_layout(config))
        response_failed = Signal()
        m.d.comb += [
            response.ready.eq(1),
            format_read.addr.eq(response.payload.id),
        ]
        m.d.sync += [
            response_valid.eq(response.valid),
            response_thread.eq(response.payload.id),
            response_sector.eq(response.payload.data),
            response_failed.eq(response.payload.status.as_value()[1]),
        ]
        m.d.comb += [
            failed_mark.valid.eq(response_valid & response_failed),
            failed_mark.payload.thread.eq(response_thread),
            failed_mark.payload.error.eq(1),
        ]
        response_format_now = format_read.data
        word_value = Signal(vector_layout(config))
        m.d.comb += word_value[0].eq(response_sector[response_format_now.word])
        m.d.comb += [
            queue.fill.valid.eq(response_valid & ~response_failed),
            queue.fill.payload.thread.eq(response_thread),
            queue.fill.payload.value.eq(Mux(response_format_now.word_only, word_value,
                                            response_sector)),
        ]
        return m
