"""The memory-access trigger (docs/trigger.md).

Sits in the GPU ↔ memory path. Every request and every read response passes through one
register stage, unchanged and in order, at one transfer per cycle. A request that matches
a filter entry produces a trigger event: a write at once (with the written data), a read
when its response comes back (with the returned data). Events wait in one queue per
source. A triggering write is held while the write queue is full. A triggering read
reserves its place in the read queue as it leaves for memory and is held while every
place is taken or reserved, so its response never waits: the memory's response stream,
which also carries the NDP engine's responses, is never held by the trigger (holding it
while the engine waits for its own loads would deadlock).

Reads are matched when issued and remembered by id until their response returns, so
memory may answer reads out of order. A read id must not be reused while outstanding;
a violation is flagged (``id_reuse``) rather than silently mis-attributed.
"""

from amaranth.hdl import Module, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out, connect, flipped

from .filter_match import FilterMatcher, filter_entry_layout
from ..layouts import MemoryPortSignature, request_layout, response_layout, trigger_event_layout
from ..onehot import one_hot_index, one_hot_select
from ..stream import Queue, RegisterSlice, RoundRobinMerge


__all__ = ["Trigger"]


def _pending_tag_layout(config):
    return data.StructLayout({
        "hit":    unsigned(1),
        "entry":  unsigned(config.trigger.entry_bits),
    })


def _pending_read_layout(config):
    return data.StructLayout({
        "addr":   unsigned(config.addr_width),
        "offset": unsigned(config.addr_width),
        "mask":   unsigned(config.sector_bytes),
    })


def _staged_request_layout(config):
    """A request in the request stage, with the match decided as it entered."""
    return data.StructLayout({
        "request": request_layout(config),
        "hit":     unsigned(1),
        "winner":  unsigned(config.trigger.filter_entries),
        "offsets": data.ArrayLayout(unsigned(config.addr_width), config.trigger.filter_entries),
    })


def _staged_response_layout(config):
    """A read response in the response stage, with its read's tag read as it entered."""
    return data.StructLayout({
        "response": response_layout(config),
        "tag":      _pending_tag_layout(config),
    })


def _leave_unless_held(m, stage, port, payload, held, name):
    """Connect ``stage`` to ``port``, carrying ``payload``, closed while ``held``.
    Returns a signal that is high when a transfer leaves on ``port``."""
    fire = Signal(name=f"{name}_fire")
    m.d.comb += [
        port.valid.eq(stage.valid & ~held),
        port.payload.eq(payload),
        stage.ready.eq(port.ready & ~held),
        fire.eq(port.valid & port.ready),
    ]
    return fire


class Trigger(wiring.Component):
    """Ports:

    gpu, mem:   the pass-through path (GPU-facing target, memory-facing initiator).
    events:     trigger events toward the NDP engine.
    table:      the filter entries (from the register file).
    ends:       with ``precomputed_ends``, ``base + size`` of every entry, kept in step
                with ``table`` by its owner (see
                :class:`~matndp.hw.trigger.filter_match.FilterMatcher`).
    hit_pulse:  per entry, events produced this cycle (0, 1 or 2: one per source).
    produced:   events produced this cycle, all entries (the sum of ``hit_pulse``).
    stall:      a GPU request or response is held this cycle by a full event queue.
    id_reuse:   pulses when a read is issued with an id that is still outstanding.
    """

    def __init__(self, config, *, precomputed_ends=False):
        self.config = config
        self.precomputed_ends = precomputed_ends
        members = {
            "gpu":       In(MemoryPortSignature(config)),
            "mem":       Out(MemoryPortSignature(config)),
            "events":    Out(stream.Signature(trigger_event_layout(config))),
            "table":     In(data.ArrayLayout(filter_entry_layout(config), config.trigger.filter_entries)),
            "hit_pulse": Out(data.ArrayLayout(unsigned(2), config.trigger.filter_entries)),
            "produced":  Out(2),
            "stall":     Out(1),
            "id_reuse":  Out(1),
        }
        if precomputed_ends:
            members["ends"] = In(data.ArrayLayout(unsigned(config.addr_width + 1),
                                                  config.trigger.filter_entries))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        config = self.config
        event_layout = trigger_event_layout(config)

        m.submodules.matcher = matcher = FilterMatcher(
            config, precomputed_ends=self.precomputed_ends)
        m.submodules.write_events = write_events = Queue(
            event_layout, config.trigger.event_queue_depth)
        m.submodules.read_events = read_events = Queue(
            event_layout, config.trigger.event_queue_depth)
        m.d.comb += matcher.table.eq(self.table)
        if self.precomputed_ends:
            m.d.comb += matcher.ends.eq(self.ends)

        # Reads in flight, by id: what to report when the response returns.
        pending_layout = _pending_read_layout(config)
        m.submodules.pending = pending = Memory(
            shape=pending_layout, depth=1 << config.id_width, init=[])
        pending_write = pending.write_port()
        pending_read = pending.read_port(domain="sync")
        # Whether a returning read triggers, and for which entry, decides whether its
        # response may leave and which counter counts it. Kept apart from the block RAM,
        # whose clock-to-output delay alone is half a 100 MHz cycle, in distributed RAM
        # read as the response enters the stage into a register of the stage.
        tag_layout = _pending_tag_layout(config)
        m.submodules.pending_tags = pending_tags = Memory(
            shape=tag_layout, depth=1 << config.id_width, init=[],
            attrs={"ram_style": "distributed"})
        tags_write = pending_tags.write_port()
        tags_read = pending_tags.read_port(domain="comb")
        outstanding = Signal(1 << config.id_width)

        # --- request path: gpu.req -> request stage -> mem.req -----------------------------
        # The match is decided as a request enters the stage and travels with it, so that
        # reprogramming an entry cannot withdraw or alter a request already offered.
        # Which entry matched (one-hot) and every entry's offset are registered rather than
        # the winner's offset: selecting it would put a wide multiplexer behind the range
        # comparisons. The selection is made from the registers while the request waits.
        m.submodules.request_stage = request_stage = RegisterSlice(_staged_request_layout(config))
        m.d.comb += [
            matcher.addr.eq(self.gpu.req.payload.addr),
            matcher.write.eq(self.gpu.req.payload.write),
            request_stage.i.valid.eq(self.gpu.req.valid),
            request_stage.i.payload.request.eq(self.gpu.req.payload),
            request_stage.i.payload.hit.eq(matcher.hit),
            request_stage.i.payload.winner.eq(matcher.winner),
            request_stage.i.payload.offsets.eq(matcher.offsets),
            self.gpu.req.ready.eq(request_stage.i.ready),
        ]
        staged_request = request_stage.o.payload
        request = staged_request.request
        request_entry = one_hot_index(staged_request.winner)
        request_offset = one_hot_select(staged_request.winner, staged_request.offsets)
        write_hit = staged_request.hit & request.write
        read_hit = staged_request.hit & ~request.write
        # Places in the read queue taken or reserved by triggering reads in memory.
        read_places = Signal(range(config.trigger.event_queue_depth + 1))
        read_queue_full = Signal()
        m.d.comb += read_queue_full.eq(read_places == config.trigger.event_queue_depth)
        request_held = Signal()
        m.d.comb += request_held.eq((write_hit & ~write_events.i.ready) |
                                    (read_hit & read_queue_full))
        request_fire = _leave_unless_held(m, request_stage.o, self.mem.req, request,
                                          request_held, "request")

        write_event = write_events.i.payload
        m.d.comb += [
            write_event.entry.eq(request_entry),
            write_event.addr.eq(request.addr),
            write_event.offset.eq(request_offset),
            write_event.data.eq(request.data),
            write_event.mask.eq(request.mask),
            write_event.write.eq(1),
            write_events.i.valid.eq(request_fire & write_hit),
        ]

        issue_read = request_fire & ~request.write
        record = data.View(pending_layout, pending_write.data)
        tag = data.View(tag_layout, tags_write.data)
        m.d.comb += [
            pending_write.addr.eq(request.id),
            pending_write.en.eq(issue_read),
            tags_write.addr.eq(request.id),
            tags_write.en.eq(issue_read),
            tag.hit.eq(staged_request.hit),
            tag.entry.eq(request_entry),
            record.addr.eq(request.addr),
            record.offset.eq(request_offset),
            record.mask.eq(request.mask),
        ]

        # --- response path: mem.resp -> response stage -> gpu.resp --------------------------
        m.submodules.response_stage = response_stage = RegisterSlice(_staged_response_layout(config))
        response_accept = Signal()
        m.d.comb += [
            response_stage.i.valid.eq(self.mem.resp.valid),
            response_stage.i.payload.response.eq(self.mem.resp.payload),
            response_stage.i.payload.tag.eq(tags_read.data),
            self.mem.resp.ready.eq(response_stage.i.ready),
            response_accept.eq(self.mem.resp.valid & self.mem.resp.ready),
            # The pending record is read as the response enters the stage, so it is on
            # the read port's output exactly while the response sits in the stage.
            pending_read.addr.eq(self.mem.resp.payload.id),
            pending_read.en.eq(response_accept),
            tags_read.addr.eq(self.mem.resp.payload.id),
        ]
        response = response_stage.o.payload.response
        returned = data.View(pending_layout, pending_read.data)
        returned_tag = response_stage.o.payload.tag
        returned_hit = returned_tag.hit
        # Never true while read ids are unique: the read reserved its place when it left.
        # Reused ids (flagged by ``id_reuse``) can attribute a response to the wrong read.
        response_held = Signal()
        m.d.comb += response_held.eq(returned_hit & ~read_events.i.ready)
        response_fire = _leave_unless_held(m, response_stage.o, self.gpu.resp, response,
                                           response_held, "response")

        read_event = read_events.i.payload
        m.d.comb += [
            read_event.entry.eq(returned_tag.entry),
            read_event.addr.eq(returned.addr),
            read_event.offset.eq(returned.offset),
            read_event.data.eq(response.data),
            read_event.mask.eq(returned.mask),
            read_event.write.eq(0),
            read_events.i.valid.eq(response_fire & returned_hit),
        ]

        # --- outstanding-read bookkeeping -----------------------------------------------------
        set_bits = Signal.like(outstanding)
        clear_bits = Signal.like(outstanding)
        with m.If(issue_read):
            m.d.comb += set_bits.eq(1 << request.id)
        with m.If(response_accept):
            m.d.comb += clear_bits.eq(1 << self.mem.resp.payload.id)
        m.d.sync += outstanding.eq((outstanding & ~clear_bits) | set_bits)
        m.d.comb += self.id_reuse.eq(issue_read & outstanding.bit_select(request.id, 1))

        reserve = Signal()
        release = Signal()
        m.d.comb += [
            reserve.eq(issue_read & staged_request.hit),
            release.eq(read_events.o.valid & read_events.o.ready),
        ]
        with m.If(reserve & ~release):
            m.d.sync += read_places.eq(read_places + 1)
        with m.Elif(release & ~reserve & (read_places != 0)):
            m.d.sync += read_places.eq(read_places - 1)

        # --- the two queues into the event stream ----------------------------------------------
        queues = (write_events, read_events)
        m.submodules.event_merge = event_merge = RoundRobinMerge(event_layout, len(queues))
        for queue, port in zip(queues, event_merge.i):
            connect(m, queue.o, port)
        connect(m, event_merge.o, flipped(self.events))

        # --- observation ----------------------------------------------------------------------
        for index in range(config.trigger.filter_entries):
            m.d.comb += self.hit_pulse[index].eq(
                (write_events.i.valid & staged_request.winner[index]) +
                (read_events.i.valid & (returned_tag.entry == index)))
        m.d.comb += self.produced.eq(write_events.i.valid + read_events.i.valid)
        m.d.comb += self.stall.eq((request_stage.o.valid & request_held) |
                                  (response_stage.o.valid & response_held))
        return m
