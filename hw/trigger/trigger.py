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

With ``TriggerConfig.pipelined`` the request side is four register stages instead of one
and events reach their queues ``PIPELINED_EVENT_DELAY`` cycles after their transfers
leave, so that no cycle holds more than one step of the match (docs/trigger.md, "The
pipelined request side").
"""

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out, connect, flipped

from .filter_match import FilterMatcher, entry_match, filter_entry_layout, range_end
from ..layouts import MemoryPortSignature, request_layout, response_layout, trigger_event_layout
from ..onehot import first_one, one_hot_index, one_hot_select
from ..stream import Queue, RegisterRing, RegisterSlice, RoundRobinMerge


__all__ = ["Trigger", "PIPELINED_REQUEST_PLACES", "PIPELINED_REQUEST_LATENCY",
           "PIPELINED_EVENT_DELAY"]


#: Requests the pipelined request side holds at most, and the cycles it adds.
PIPELINED_REQUEST_PLACES = 5
PIPELINED_REQUEST_LATENCY = 4
#: Pipelined, the cycles from a transfer leaving to its event entering its queue.
PIPELINED_EVENT_DELAY = 2
#: Filter entries that share one copy of the address in the pipelined request side: the
#: copies keep each address bit's load to a few entries' comparators.
ENTRIES_PER_ADDRESS_COPY = 4
#: Payload bits behind one copy of a ring's read turn or of the event merge's choice.
RING_SELECT_FANOUT = 32
#: Pipelined, the places of each ring around the event merge.
EVENT_BUFFER_PLACES = 3
#: Places of the pipelined build's response ring (three keep one response per cycle).
RESPONSE_BUFFER_PLACES = 3


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


def _chosen_request_layout(config):
    """A request in the pipelined request side's ring: the winner and its offset chosen."""
    return data.StructLayout({
        "request": request_layout(config),
        "hit":     unsigned(1),
        "entry":   unsigned(config.trigger.entry_bits),
        "offset":  unsigned(config.addr_width),
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


def _count_places(m, places, take, free):
    """Keep ``places`` counting queue places taken (``take``) and freed (``free``) in a
    cycle, never below zero."""
    with m.If(take & ~free):
        m.d.sync += places.eq(places + 1)
    with m.Elif(free & ~take & (places != 0)):
        m.d.sync += places.eq(places - 1)


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
        pipelined = config.trigger.pipelined
        depth = config.trigger.event_queue_depth
        event_layout = trigger_event_layout(config)
        # Where each step from a transfer to its event, tag and record is taken: in the
        # transfer's cycle, or (pipelined) in registers a cycle after the step before.
        late = m.d.sync if pipelined else m.d.comb

        m.submodules.write_events = write_events = Queue(event_layout, depth)
        m.submodules.read_events = read_events = Queue(event_layout, depth)
        # An event frees its place as it leaves on ``events`` (pipelined, a buffer stands
        # between the queues and the port, and its place counts as the queue's).
        write_taken = Signal()
        read_taken = Signal()
        taken = self.events.valid & self.events.ready
        m.d.comb += [
            write_taken.eq(taken & self.events.payload.write),
            read_taken.eq(taken & ~self.events.payload.write),
        ]

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

        # --- request path: gpu.req -> request side -> mem.req -------------------------------
        # The match is decided as a request enters (pipelined: in the cycle after) and
        # travels with it, so that reprogramming an entry cannot withdraw or alter a
        # request already offered. Which entry matched (one-hot) and every entry's offset
        # travel rather than the winner's offset: selecting it would put a wide multiplexer
        # behind the range comparisons. The selection is made from the registers while the
        # request waits.
        if pipelined:
            head = self._pipelined_request_side(m)
        else:
            head = self._request_stage(m)
        staged_request = head.payload
        request = staged_request.request
        write_hit = staged_request.hit & request.write
        read_hit = staged_request.hit & ~request.write
        # Places in the read queue taken or reserved by triggering reads in memory.
        read_places = Signal(range(depth + 1))
        read_queue_full = Signal()
        m.d.comb += read_queue_full.eq(read_places == depth)
        write_queue_full = Signal()
        if pipelined:
            # Write events not yet taken from their queue, the one on its way in included.
            write_places = Signal(range(depth + 1))
            m.d.comb += write_queue_full.eq(write_places == depth)
        else:
            m.d.comb += write_queue_full.eq(~write_events.i.ready)
        request_held = Signal()
        m.d.comb += request_held.eq((write_hit & write_queue_full) |
                                    (read_hit & read_queue_full))
        request_fire = _leave_unless_held(m, head, self.mem.req, request,
                                          request_held, "request")

        if pipelined:
            _count_places(m, write_places, request_fire & write_hit, write_taken)

        # The request as it left, and whether it left as a triggering write or as a read:
        # pipelined, in registers a cycle later (and meaningful only with those bits: no
        # reset), so that the handshake reaches no wide selection, queue or memory port.
        issue_read = request_fire & ~request.write
        left = Signal.like(staged_request, reset_less=True)
        left_write_hit = Signal()
        left_read = Signal()
        late += [
            left.eq(staged_request),
            left_write_hit.eq(request_fire & write_hit),
            left_read.eq(issue_read),
        ]
        if pipelined:
            left_entry, offset = left.entry, left.offset
        else:
            left_entry, offset = one_hot_index(left.winner), one_hot_select(left.winner, left.offsets)

        tag = data.View(tag_layout, tags_write.data)
        m.d.comb += [
            tags_write.addr.eq(left.request.id),
            tags_write.en.eq(left_read),
            tag.hit.eq(left.hit),
            tag.entry.eq(left_entry),
        ]

        # Events and pending records, formed from the request as it left: pipelined, a
        # cycle later again, so that the winner's offset is selected from registers.
        write_event = Signal(event_layout, reset_less=True)
        write_event_valid = Signal()
        record = data.View(pending_layout, pending_write.data)
        late += [
            write_event.entry.eq(left_entry),
            write_event.addr.eq(left.request.addr),
            write_event.offset.eq(offset),
            write_event.data.eq(left.request.data),
            write_event.mask.eq(left.request.mask),
            write_event.write.eq(1),
            write_event_valid.eq(left_write_hit),
            pending_write.addr.eq(left.request.id),
            pending_write.en.eq(left_read),
            record.addr.eq(left.request.addr),
            record.offset.eq(offset),
            record.mask.eq(left.request.mask),
        ]
        m.d.comb += [
            write_events.i.payload.eq(write_event),
            write_events.i.valid.eq(write_event_valid),
        ]
        # Pipelined, a read's tag is written a cycle after it leaves and its record a cycle
        # after that. Memory answers a cycle after the read at the earliest; the tag being
        # written is passed to a response that meets it, and the record is read two cycles
        # after the response leaves for the GPU, so it is always in place.

        # --- response path: mem.resp -> response stage -> gpu.resp --------------------------
        if pipelined:
            # A ring whose load enables come from its fill side: the GPU's ready and the
            # read-event queue's room (the response's hold) reach no enable of the wide
            # response registers, and memory's ready is a flop.
            response_stage = RegisterRing(_staged_response_layout(config), RESPONSE_BUFFER_PLACES,
                                          fill_side_enables=True, select_fanout=RING_SELECT_FANOUT)
        else:
            response_stage = RegisterSlice(_staged_response_layout(config))
        m.submodules.response_stage = response_stage
        response_accept = Signal()
        m.d.comb += [
            response_stage.i.valid.eq(self.mem.resp.valid),
            response_stage.i.payload.response.eq(self.mem.resp.payload),
            self.mem.resp.ready.eq(response_stage.i.ready),
            response_accept.eq(self.mem.resp.valid & self.mem.resp.ready),
            tags_read.addr.eq(self.mem.resp.payload.id),
        ]
        if pipelined:
            meets_written = tags_write.en & (tags_write.addr == self.mem.resp.payload.id)
            m.d.comb += response_stage.i.payload.tag.eq(
                Mux(meets_written, tags_write.data, tags_read.data))
        else:
            m.d.comb += response_stage.i.payload.tag.eq(tags_read.data)
        response = response_stage.o.payload.response
        if not pipelined:
            # Read as the response enters the stage, so it is on the read port's output
            # exactly while the response sits in the stage.
            m.d.comb += [
                pending_read.addr.eq(self.mem.resp.payload.id),
                pending_read.en.eq(response_accept),
            ]
        returned = data.View(pending_layout, pending_read.data)
        returned_tag = response_stage.o.payload.tag
        returned_hit = returned_tag.hit
        # Never true while read ids are unique: the read reserved its place when it left.
        # Reused ids (flagged by ``id_reuse``) can attribute a response to the wrong read.
        read_events_full = Signal()
        if pipelined:
            # Read events not yet taken from their queue, the one on its way in included.
            read_queued = Signal(range(depth + 1))
            m.d.comb += read_events_full.eq(read_queued == depth)
        else:
            m.d.comb += read_events_full.eq(~read_events.i.ready)
        response_held = Signal()
        m.d.comb += response_held.eq(returned_hit & read_events_full)
        response_fire = _leave_unless_held(m, response_stage.o, self.gpu.resp, response,
                                           response_held, "response")

        # The response as it left, then its read event: pipelined, each a cycle later, the
        # event with the record read by the id of the response as it left.
        answered = Signal()
        answered_entry = Signal.like(returned_tag.entry, reset_less=True)
        answered_data = Signal.like(response.data, reset_less=True)
        answered_id = Signal.like(response.id, reset_less=True)
        late += [
            answered.eq(response_fire & returned_hit),
            answered_entry.eq(returned_tag.entry),
            answered_data.eq(response.data),
            answered_id.eq(response.id),
        ]
        if pipelined:
            m.d.comb += pending_read.addr.eq(answered_id)
        read_event = read_events.i.payload
        read_event_valid = Signal()
        read_event_entry = Signal.like(returned_tag.entry, reset_less=True)
        read_event_data = Signal.like(response.data, reset_less=True)
        late += [
            read_event_valid.eq(answered),
            read_event_entry.eq(answered_entry),
            read_event_data.eq(answered_data),
        ]
        m.d.comb += [
            read_event.entry.eq(read_event_entry),
            read_event.addr.eq(returned.addr),
            read_event.offset.eq(returned.offset),
            read_event.data.eq(read_event_data),
            read_event.mask.eq(returned.mask),
            read_event.write.eq(0),
            read_events.i.valid.eq(read_event_valid),
        ]
        if pipelined:
            _count_places(m, read_queued, response_fire & returned_hit, read_taken)

        # --- outstanding-read bookkeeping -----------------------------------------------------
        set_bits = Signal.like(outstanding)
        clear_bits = Signal.like(outstanding)
        if pipelined:
            # Both a cycle late: set from the tag's write, a cycle after the read leaves,
            # and cleared from a register of the response taken, so that the response's
            # handshake reaches no decoder of the bits. A clear then never meets the set of
            # the read it answers (memory answers a cycle after the read at the earliest),
            # so the set wins: a bit set and cleared together belongs to a new read that
            # reused the id of an answered one.
            answered_read = Signal()
            answered_read_id = Signal.like(self.mem.resp.payload.id, reset_less=True)
            m.d.sync += [answered_read.eq(response_accept),
                         answered_read_id.eq(self.mem.resp.payload.id)]
            with m.If(answered_read):
                m.d.comb += clear_bits.eq(1 << answered_read_id)
            # The id as it left, in two more copies (marked ``keep``): the set's decoder and
            # the reuse check's selection each load every one of the bits, and the tag
            # memory's address is a third load of the same value.
            set_id = Signal.like(left.request.id, name="set_id", reset_less=True, attrs={"keep": 1})
            reuse_id = Signal.like(left.request.id, name="reuse_id", reset_less=True,
                                   attrs={"keep": 1})
            late += [set_id.eq(staged_request.request.id), reuse_id.eq(staged_request.request.id)]
            with m.If(tags_write.en):
                m.d.comb += set_bits.eq(1 << set_id)
            # Reported with the tag, a cycle after the read leaves, from the bit its id has
            # then: that bit still holds any read answered in the cycle the read left,
            # whose clear is a cycle late, so it is what the bit was as the read left.
            m.d.comb += self.id_reuse.eq(tags_write.en & outstanding.bit_select(reuse_id, 1))
        else:
            with m.If(response_accept):
                m.d.comb += clear_bits.eq(1 << self.mem.resp.payload.id)
            with m.If(issue_read):
                m.d.comb += set_bits.eq(1 << request.id)
            m.d.comb += self.id_reuse.eq(issue_read & outstanding.bit_select(request.id, 1))
        # A read issued as a response with its id is taken reuses that id: it is
        # outstanding from then on.
        m.d.sync += outstanding.eq((outstanding & ~clear_bits) | set_bits)

        _count_places(m, read_places, issue_read & staged_request.hit, read_taken)

        # --- the two queues into the event stream ----------------------------------------------
        queues = (write_events, read_events)
        if pipelined:
            # Registers on both sides of the merge, and its choice a register too: each
            # queue reaches it through a ring and it reaches ``events`` through another,
            # rings whose enables and ``i.ready`` come from their own state, so no handshake
            # reaches a wide enable or multiplexer in its cycle. Three places each keep one
            # transfer per cycle.
            def event_buffer():
                return RegisterRing(event_layout, EVENT_BUFFER_PLACES,
                                    select_fanout=RING_SELECT_FANOUT, fill_side_enables=True)
            m.submodules.event_merge = event_merge = RoundRobinMerge(
                event_layout, len(queues), registered_choice=True,
                select_fanout=RING_SELECT_FANOUT)
            for name, queue, port in zip(("write", "read"), queues, event_merge.i):
                m.submodules[f"{name}_event_buffer"] = buffer = event_buffer()
                connect(m, queue.o, buffer.i)
                connect(m, buffer.o, port)
            m.submodules.event_buffer = buffer = event_buffer()
            connect(m, event_merge.o, buffer.i)
            connect(m, buffer.o, flipped(self.events))
        else:
            m.submodules.event_merge = event_merge = RoundRobinMerge(event_layout, len(queues))
            for queue, port in zip(queues, event_merge.i):
                connect(m, queue.o, port)
            connect(m, event_merge.o, flipped(self.events))

        # --- observation ----------------------------------------------------------------------
        for index in range(config.trigger.filter_entries):
            m.d.comb += self.hit_pulse[index].eq(
                (write_events.i.valid & (write_event.entry == index)) +
                (read_events.i.valid & (read_event_entry == index)))
        m.d.comb += self.produced.eq(write_events.i.valid + read_events.i.valid)
        m.d.comb += self.stall.eq((head.valid & request_held) |
                                  (response_stage.o.valid & response_held))
        return m

    def _ends(self, m):
        """Every entry's range end, given or formed here."""
        if self.precomputed_ends:
            return list(self.ends)
        return [range_end(m, self.table[index], self.config.addr_width, index)
                for index in range(self.config.trigger.filter_entries)]

    def _request_stage(self, m):
        """One register stage, the match decided as a request enters it; returns the
        stage's output stream."""
        config = self.config
        m.submodules.matcher = matcher = FilterMatcher(
            config, precomputed_ends=self.precomputed_ends)
        m.d.comb += matcher.table.eq(self.table)
        if self.precomputed_ends:
            m.d.comb += matcher.ends.eq(self.ends)
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
        return request_stage.o

    def _pipelined_request_side(self, m):
        """Four stages: the request with copies of its address; the range comparisons
        against the table of that cycle; the winner, with the offsets of the others
        cleared; the winner's index and offset, into a ring of registers whose head is
        offered to memory. No stage waits on another: the GPU side takes a request
        while fewer than :data:`PIPELINED_REQUEST_PLACES` are inside, as many as the ring
        holds. Returns the ring's output stream."""
        config = self.config
        entries = config.trigger.filter_entries

        inside = Signal(range(PIPELINED_REQUEST_PLACES + 1))
        enter = Signal()
        m.d.comb += [
            self.gpu.req.ready.eq(inside != PIPELINED_REQUEST_PLACES),
            enter.eq(self.gpu.req.valid & self.gpu.req.ready),
        ]

        # Stage 1. The copies are marked ``keep``: a synthesis tool would merge them.
        copies = [Signal(config.addr_width, name=f"address_copy{index}", attrs={"keep": 1},
                         reset_less=True)
                  for index in range(-(-entries // ENTRIES_PER_ADDRESS_COPY))]
        entered = Signal()
        # What the stages carry is meaningful only with its valid bit: no reset.
        entered_request = Signal.like(self.gpu.req.payload, reset_less=True)
        m.d.sync += [entered.eq(enter), entered_request.eq(self.gpu.req.payload)]
        m.d.sync += [copy.eq(self.gpu.req.payload.addr) for copy in copies]

        # Stage 2.
        matched = Signal()
        matched_request = Signal.like(entered_request, reset_less=True)
        matches = Signal(entries, reset_less=True)
        offsets = Signal(data.ArrayLayout(unsigned(config.addr_width), entries), reset_less=True)
        m.d.sync += [matched.eq(entered), matched_request.eq(entered_request)]
        for index, end in enumerate(self._ends(m)):
            match, offset = entry_match(m, self.table[index], end,
                                        copies[index // ENTRIES_PER_ADDRESS_COPY],
                                        entered_request.write, index)
            m.d.sync += [matches[index].eq(match), offsets[index].eq(offset)]

        # Stage 3: the winner, and every entry's offset kept only for the winner, so that
        # the next stage's selection is an OR.
        chosen = Signal()
        chosen_request = Signal.like(entered_request, reset_less=True)
        chosen_hit = Signal(reset_less=True)
        winner = Signal(entries, reset_less=True)
        winner_offsets = Signal.like(offsets, reset_less=True)
        first = first_one(matches)
        m.d.sync += [chosen.eq(matched), chosen_request.eq(matched_request),
                     chosen_hit.eq(matches.any()), winner.eq(first)]
        m.d.sync += [winner_offsets[index].eq(Mux(first[index], offsets[index], 0))
                     for index in range(entries)]

        # Stage 4: the ring, which carries the winner's offset alone. It always has room for
        # what the stages before it hold. A place the head leaves is filled again four
        # cycles later at the earliest (by a request that enters the cycle after and
        # reaches the ring three cycles later), so the ring's enables can come from its
        # fill side alone.
        m.submodules.request_ring = ring = RegisterRing(_chosen_request_layout(config),
                                                        PIPELINED_REQUEST_PLACES,
                                                        select_fanout=RING_SELECT_FANOUT,
                                                        fill_side_enables=True)
        winner_offset = 0
        for index in range(entries):
            winner_offset |= winner_offsets[index]
        m.d.comb += [
            ring.i.valid.eq(chosen),
            ring.i.payload.request.eq(chosen_request),
            ring.i.payload.hit.eq(chosen_hit),
            ring.i.payload.entry.eq(one_hot_index(winner)),
            ring.i.payload.offset.eq(winner_offset),
        ]
        leave = ring.o.valid & ring.o.ready
        m.d.sync += inside.eq(inside + enter - leave)
        return ring.o
