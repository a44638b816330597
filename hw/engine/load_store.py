"""The engine's load/store unit: the sub-cores' memory operations, merged into one stream,
become requests on the engine's memory port; each access completes on its sub-core's
completion stream.

Protocol
--------
``ops``: one :func:`~.layouts.memory_op_layout` record per transfer. The sub-core has
checked the address against the window and its alignment; the unit still refuses (below)
what it cannot perform rather than guess.

``mem``: requests ``{addr, write, data, mask, id}``, the address sector-aligned and the
id the op's ``thread``; read responses ``{data, id, status}``, in any order; a response
whose status is an error completes its load with ``error`` set (the sub-core records
``MEMORY_ERROR``) and no value. Responses are
always taken (``resp.ready`` is high): a µthread has at most one access in the unit,
so its completion always finds room (see :mod:`.completion`). Response ids are read
in their low ``thread_bits``.

``completions[i]``: sub-core i's completions ``{slot, value, error}``, exactly one per
accepted op, in whatever order the accesses finish.

=========== ================================================ ===========================
op          request                                          completion
=========== ================================================ ===========================
``vld``     read of the sector at addr                       value: the sector
``lw``      read of the sector holding the word at addr,     value lane 0: the word,
            mask: the word's 4 bytes                         other lanes 0
``vst``     write of ``data``, every byte enabled            when the request is accepted
``vstm``    write of ``data`` with the op's ``mask``         when the request is accepted
``sw``      write of ``data`` with the mask of the word at   when the request is accepted
            addr: lane ``addr % sector / 4`` of ``data``
            is stored in place (a sub-core may broadcast
            the word to every lane)
=========== ================================================ ===========================

A store completes when the memory port accepts its request: from then on it is ahead
of every later request of the port, which is what "the µthread's stores are accepted"
means to the engine. Refused ops — an opcode other than these, a ``vld``/
``vst``/``vstm`` address that is not sector-aligned, a ``lw``/``sw`` address that is not
4-byte aligned — send no request and complete with ``error`` set.

Timing
------
An op accepted in cycle t is offered on ``mem.req`` from cycle t + 1 (one register;
``ops.ready`` is ``mem.req.ready`` or a free register, so the unit passes one request
per cycle while the port takes one). A store or refused op marked in cycle c (the cycle
its request is accepted, or t for a refused op) is offered on its completion stream
from c + 3. A load whose response arrives in cycle r is offered from r + 3 (the response
register, the completion queue, the stream register), a failed one, marked from the
response register in r + 1, from r + 4; see :mod:`.completion`.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .completion import CompletingUnit
from .isa import Opcode
from .layouts import memory_op_layout, ndp_memory_port_signature, vector_layout


__all__ = ["LoadStoreUnit"]


class LoadStoreUnit(CompletingUnit):
    """The load/store unit of an engine with ``config.engine.sub_cores`` sub-cores."""

    def __init__(self, config):
        super().__init__(config, {
            "ops": In(stream.Signature(memory_op_layout(config))),
            "mem": Out(ndp_memory_port_signature(config)),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        engine = config.engine
        lanes = config.lanes
        word_bits = (lanes - 1).bit_length()

        # Marks: a refused op, a store accepted by the port, and a load memory failed.
        queue = self.completion_queue(m, marks=3)
        refused_mark, store_mark, failed_mark = queue.marks

        op = self.ops.payload
        opcode = op.opcode
        vector_op = (opcode == Opcode.VLD) | (opcode == Opcode.VST) | (opcode == Opcode.VSTM)
        word_op = (opcode == Opcode.LW) | (opcode == Opcode.SW)
        write = (opcode == Opcode.VST) | (opcode == Opcode.VSTM) | (opcode == Opcode.SW)
        aligned = Mux(vector_op, op.addr[:config.offset_bits] == 0, op.addr[:2] == 0)
        legal = (vector_op | word_op) & aligned
        word = op.addr[2:config.offset_bits]
        word_mask = Const(0xF, 4) << Cat(Const(0, 2), word)
        all_bytes = Const((1 << config.sector_bytes) - 1, config.sector_bytes)

        request = self.mem.req
        register_free = ~request.valid | request.ready
        m.d.comb += self.ops.ready.eq(~legal | register_free)
        # How a read's response becomes its completion, kept by µthread until it returns.
        response_format = data.StructLayout({"word_only": 1, "word": unsigned(word_bits)})
        request_format = Signal(response_format)
        with m.If(register_free):
            m.d.sync += request.valid.eq(self.ops.valid & legal)
            with m.If(self.ops.valid & legal):
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
            store_mark.valid.eq(accepted & request.payload.write),
            store_mark.payload.thread.eq(request.payload.id),
            store_mark.payload.error.eq(0),
            refused_mark.valid.eq(self.ops.valid & ~legal),
            refused_mark.payload.thread.eq(op.thread),
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
