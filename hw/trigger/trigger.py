"""The memory-access trigger (ARCHITECTURE §4.2).

Sits in the GPU ↔ memory path. Every request and every read response passes through one
register stage, unchanged and in order, at one transfer per cycle. A request that matches
a filter entry produces a trigger event: a write at once (with the written data), a read
when its response comes back (with the returned data). Events wait in one queue per
source; the GPU path is held only while the queue an access needs is full.

Reads are matched when issued and remembered by id until their response returns, so
memory may answer reads out of order. A read id must not be reused while outstanding;
a violation is flagged (``id_reuse``) rather than silently mis-attributed.
"""

from amaranth.hdl import Module, Signal, Shape, Mux, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .filter_match import FilterMatcher, filter_entry_layout
from ..layouts import MemoryPortSignature, request_layout, response_layout, trigger_event_layout


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


class Trigger(wiring.Component):
    """Ports:

    gpu, mem:   the pass-through path (GPU-facing target, memory-facing initiator).
    events:     trigger events toward the NDP engine.
    table:      the filter entries (from the register file).
    ends:       with ``precomputed_ends``, ``base + size`` of every entry, kept in step
                with ``table`` by its owner (see :class:`~hw.filter_match.FilterMatcher`).
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
        event_width = Shape.cast(event_layout).width

        m.submodules.matcher = matcher = FilterMatcher(
            config, precomputed_ends=self.precomputed_ends)
        m.submodules.write_events = write_events = SyncFIFOBuffered(
            width=event_width, depth=config.trigger.event_queue_depth)
        m.submodules.read_events = read_events = SyncFIFOBuffered(
            width=event_width, depth=config.trigger.event_queue_depth)
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
        request = Signal(request_layout(config))
        request_valid = Signal()
        request_hit = Signal()
        # Which entry matched (one-hot) and every entry's offset are registered rather than
        # the winner's offset: selecting it would put a wide multiplexer behind the range
        # comparisons. The selection is made from the registers while the request waits.
        request_winner = Signal(config.trigger.filter_entries)
        request_offsets = Signal(data.ArrayLayout(unsigned(config.addr_width),
                                                  config.trigger.filter_entries))
        request_entry = FilterMatcher.encode(request_winner)
        request_offset = FilterMatcher.select(request_winner, request_offsets)
        m.d.comb += [
            matcher.addr.eq(self.gpu.req.payload.addr),
            matcher.write.eq(self.gpu.req.payload.write),
        ]
        write_hit = request_hit & request.write
        request_can_leave = ~write_hit | write_events.w_rdy
        request_fire = Signal()
        m.d.comb += [
            self.mem.req.valid.eq(request_valid & request_can_leave),
            self.mem.req.payload.eq(request),
            request_fire.eq(self.mem.req.valid & self.mem.req.ready),
            self.gpu.req.ready.eq(~request_valid | request_fire),
        ]
        with m.If(self.gpu.req.valid & self.gpu.req.ready):
            m.d.sync += [
                request.eq(self.gpu.req.payload),
                request_valid.eq(1),
                request_hit.eq(matcher.hit),
                request_winner.eq(matcher.winner),
                request_offsets.eq(matcher.offsets),
            ]
        with m.Elif(request_fire):
            m.d.sync += request_valid.eq(0)

        write_event = data.View(event_layout, write_events.w_data)
        m.d.comb += [
            write_event.entry.eq(request_entry),
            write_event.addr.eq(request.addr),
            write_event.offset.eq(request_offset),
            write_event.data.eq(request.data),
            write_event.mask.eq(request.mask),
            write_event.write.eq(1),
            write_events.w_en.eq(request_fire & write_hit),
        ]

        issue_read = request_fire & ~request.write
        record = data.View(pending_layout, pending_write.data)
        tag = data.View(tag_layout, tags_write.data)
        m.d.comb += [
            pending_write.addr.eq(request.id),
            pending_write.en.eq(issue_read),
            tags_write.addr.eq(request.id),
            tags_write.en.eq(issue_read),
            tag.hit.eq(request_hit),
            tag.entry.eq(request_entry),
            record.addr.eq(request.addr),
            record.offset.eq(request_offset),
            record.mask.eq(request.mask),
        ]

        # --- response path: mem.resp -> response stage -> gpu.resp --------------------------
        response = Signal(response_layout(config))
        response_valid = Signal()
        returned = data.View(pending_layout, pending_read.data)
        returned_tag = Signal(tag_layout)
        read_hit = returned_tag.hit
        response_can_leave = ~read_hit | read_events.w_rdy
        response_fire = Signal()
        response_accept = Signal()
        m.d.comb += [
            self.gpu.resp.valid.eq(response_valid & response_can_leave),
            self.gpu.resp.payload.eq(response),
            response_fire.eq(self.gpu.resp.valid & self.gpu.resp.ready),
            self.mem.resp.ready.eq(~response_valid | response_fire),
            response_accept.eq(self.mem.resp.valid & self.mem.resp.ready),
            # The pending record is read as the response enters the stage, so it is on
            # the read port's output exactly while the response sits in the stage.
            pending_read.addr.eq(self.mem.resp.payload.id),
            pending_read.en.eq(response_accept),
            tags_read.addr.eq(self.mem.resp.payload.id),
        ]
        with m.If(response_accept):
            m.d.sync += [response.eq(self.mem.resp.payload), response_valid.eq(1),
                         returned_tag.eq(tags_read.data)]
        with m.Elif(response_fire):
            m.d.sync += response_valid.eq(0)

        read_event = data.View(event_layout, read_events.w_data)
        m.d.comb += [
            read_event.entry.eq(returned_tag.entry),
            read_event.addr.eq(returned.addr),
            read_event.offset.eq(returned.offset),
            read_event.data.eq(response.data),
            read_event.mask.eq(returned.mask),
            read_event.write.eq(0),
            read_events.w_en.eq(response_fire & read_hit),
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

        # --- merge the two queues into the event stream ---------------------------------------
        # The choice is held while an offered event waits, so the payload never changes
        # under a valid that has not been taken.
        prefer_read = Signal()
        held = Signal()
        held_read = Signal()
        fresh_read = Mux(write_events.r_rdy & read_events.r_rdy, prefer_read, read_events.r_rdy)
        choose_read = Mux(held, held_read, fresh_read)
        m.d.comb += [
            self.events.valid.eq(write_events.r_rdy | read_events.r_rdy),
            self.events.payload.eq(Mux(choose_read, read_events.r_data, write_events.r_data)),
            read_events.r_en.eq(self.events.ready & choose_read),
            write_events.r_en.eq(self.events.ready & ~choose_read),
        ]
        with m.If(self.events.valid & self.events.ready):
            m.d.sync += [held.eq(0), prefer_read.eq(~choose_read)]
        with m.Elif(self.events.valid):
            m.d.sync += [held.eq(1), held_read.eq(choose_read)]

        # --- observation ----------------------------------------------------------------------
        for index in range(config.trigger.filter_entries):
            m.d.comb += self.hit_pulse[index].eq(
                (write_events.w_en & request_winner[index]) +
                (read_events.w_en & (returned_tag.entry == index)))
        m.d.comb += self.produced.eq(write_events.w_en + read_events.w_en)
        m.d.comb += self.stall.eq(
            (request_valid & write_hit & ~write_events.w_rdy) |
            (response_valid & read_hit & ~read_events.w_rdy))
        return m
