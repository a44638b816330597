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
           "PIPELINED_EVENT_DELAY", "PIPELINED_REUSE_DELAY", "PIPELINED_RESPONSE_LATENCY"]


#: Requests the pipelined request side holds at most, and the cycles it adds.
PIPELINED_REQUEST_PLACES = 5
PIPELINED_REQUEST_LATENCY = 4
#: Pipelined, the cycles from a transfer leaving to its event entering its queue.
PIPELINED_EVENT_DELAY = 2
#: Filter entries that share one copy of the address in the pipelined request side: the
#: copies keep each address bit's load to one entry's comparators, placed beside them.
ENTRIES_PER_ADDRESS_COPY = 1
#: Pipelined, the filter entries of one group in the request side's choice of the winner
#: (a power of two).
WINNER_GROUP = 4
#: Pipelined, the offset bits behind one copy of the winning group in the request side's
#: fourth stage.
OFFSET_BITS_PER_WINNER_COPY = 8
#: Payload bits behind one copy of a ring's read turn or of the event merge's choice.
RING_SELECT_FANOUT = 32
#: Pipelined, the cycles from a read leaving to ``id_reuse`` reporting its id's reuse.
PIPELINED_REUSE_DELAY = 2
#: Pipelined, the low id bits that pick an outstanding-read bit within a group in the
#: reuse check's first step.
REUSE_GROUP_BITS = 4
#: Pipelined, the outstanding-read bits cleared from one copy of the answered read's id.
CLEAR_GROUP_BITS = 64
#: Pipelined, the places of each ring around the event merge.
EVENT_BUFFER_PLACES = 3
#: Read responses the pipelined response side holds at most (three keep one per cycle),
#: and the cycles from a response's arrival to its offer to the GPU.
RESPONSE_BUFFER_PLACES = 3
PIPELINED_RESPONSE_LATENCY = 2


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


def _header_layout(config):
    """A request without its sector, as the pipelined request side's stages carry it."""
    return data.StructLayout({
        "addr":  unsigned(config.addr_width),
        "write": unsigned(1),
        "id":    unsigned(config.id_width),
    })


def _sector_layout(config):
    """A request's sector: its data and byte mask."""
    return data.StructLayout({
        "data": unsigned(config.data_width),
        "mask": unsigned(config.sector_bytes),
    })


def _chosen_header_layout(config):
    """A request in the pipelined request side's ring: the winner and its offset chosen,
    the sector apart."""
    return data.StructLayout({
        "request": _header_layout(config),
        "hit":     unsigned(1),
        "entry":   unsigned(config.trigger.entry_bits),
        "offset":  unsigned(config.addr_width),
    })


def _chosen_request_layout(config):
    """A request leaving the pipelined request side: the winner and its offset chosen, the
    sector joined again."""
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


def _bit_of(layout, *path):
    """The bit index of the one-bit field at ``path`` in the struct ``layout``."""
    bit = 0
    for name in path:
        field = layout[name]
        bit += field.offset
        layout = field.shape
    return bit


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
    cycle, never below zero. Returns the count it is about to have."""
    next_places = Signal.like(places, name=f"next_{places.name}")
    m.d.comb += next_places.eq(Mux(take & ~free, places + 1,
                                   Mux(free & ~take & (places != 0), places - 1, places)))
    m.d.sync += places.eq(next_places)
    return next_places


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

        # Pipelined, each queue's memory is in banks, each with its own copies of the
        # queue's positions, so that neither position is one net to every memory cell.
        bank_bits = RING_SELECT_FANOUT if pipelined else None
        m.submodules.write_events = write_events = Queue(event_layout, depth, bank_bits=bank_bits)
        m.submodules.read_events = read_events = Queue(event_layout, depth, bank_bits=bank_bits)
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
        # Pipelined, read into a register (the read of a deep distributed RAM is several
        # levels of logic): the response waits a cycle for it.
        tags_read = pending_tags.read_port(domain="sync" if pipelined else "comb")
        outstanding = Signal(1 << config.id_width)

        # --- request path: gpu.req -> request side -> mem.req -------------------------------
        # The match is decided as a request enters (pipelined: in the cycle after) and
        # travels with it, so that reprogramming an entry cannot withdraw or alter a
        # request already offered. Which entry matched (one-hot) and every entry's offset
        # travel rather than the winner's offset: selecting it would put a wide multiplexer
        # behind the range comparisons. The selection is made from the registers while the
        # request waits.
        if pipelined:
            head, next_head = self._pipelined_request_side(m)
        else:
            head = self._request_stage(m)
        staged_request = head.payload
        request = staged_request.request
        write_hit = staged_request.hit & request.write
        read_hit = staged_request.hit & ~request.write
        # Places in the read queue taken or reserved by triggering reads in memory.
        read_places = Signal(range(depth + 1))
        # Whether the head is held: a triggering write or read while its queue is full
        # (pipelined, a register: below).
        request_held = Signal()
        if pipelined:
            # Write events not yet taken from their queue, the one on its way in included.
            write_places = Signal(range(depth + 1))
        else:
            read_queue_full = read_places == depth
            write_queue_full = ~write_events.i.ready
            m.d.comb += request_held.eq((write_hit & write_queue_full) |
                                        (read_hit & read_queue_full))
        request_fire = _leave_unless_held(m, head, self.mem.req, request,
                                          request_held, "request")

        if pipelined:
            next_write_places = _count_places(m, write_places, request_fire & write_hit,
                                              write_taken)

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

        # Events, formed from the request as it left: pipelined, a cycle later again, from
        # registers. A read's pending record is written with its tag.
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
        ]
        m.d.comb += [
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
        # Pipelined, a read's tag and record are written a cycle after it leaves. Memory
        # answers a cycle after the read at the earliest; the tag being written is passed to
        # a response that meets it, and the record is read as the response leaves for the
        # GPU, a cycle after it entered the response ring at the earliest, so it is always
        # in place.

        # --- response path: mem.resp -> response stage -> gpu.resp --------------------------
        response_accept = Signal()
        m.d.comb += [
            response_accept.eq(self.mem.resp.valid & self.mem.resp.ready),
            tags_read.addr.eq(self.mem.resp.payload.id),
        ]
        if pipelined:
            # A response waits a cycle in a register while its tag is read, then in a ring
            # whose load enables come from its fill side: the GPU's ready and the
            # read-event queue's room (the response's hold) reach no enable of the wide
            # response registers. Like the request side, the response side counts the
            # responses inside it and takes one while fewer than RESPONSE_BUFFER_PLACES
            # are (memory's ready is a flop); the ring has a place more, so a response
            # never waits for the ring.
            staged_layout = _staged_response_layout(config)
            m.submodules.response_stage = response_stage = RegisterRing(
                staged_layout, RESPONSE_BUFFER_PLACES + 1,
                fill_side_enables=True, select_fanout=RING_SELECT_FANOUT)
            responses_inside = Signal(range(RESPONSE_BUFFER_PLACES + 1))
            response_room = Signal(init=1)
            arrived = Signal()
            arrived_response = Signal(response_layout(config), reset_less=True)
            # A tag written as its response arrives is not in the read: passed on.
            met = Signal(reset_less=True)
            met_tag = Signal(tag_layout, reset_less=True)
            left_side = response_stage.o.valid & response_stage.o.ready
            next_inside = responses_inside + response_accept - left_side
            m.d.sync += [
                responses_inside.eq(next_inside),
                response_room.eq(next_inside < RESPONSE_BUFFER_PLACES),
                arrived.eq(response_accept),
                arrived_response.eq(self.mem.resp.payload),
                met.eq(tags_write.en & (tags_write.addr == self.mem.resp.payload.id)),
                met_tag.eq(tags_write.data),
            ]
            m.d.comb += [
                self.mem.resp.ready.eq(response_room),
                response_stage.i.valid.eq(arrived),
                response_stage.i.payload.response.eq(arrived_response),
                response_stage.i.payload.tag.eq(Mux(met, met_tag, tags_read.data)),
            ]
        else:
            m.submodules.response_stage = response_stage = RegisterSlice(
                _staged_response_layout(config))
            m.d.comb += [
                response_stage.i.valid.eq(self.mem.resp.valid),
                response_stage.i.payload.response.eq(self.mem.resp.payload),
                self.mem.resp.ready.eq(response_stage.i.ready),
                response_stage.i.payload.tag.eq(tags_read.data),
            ]
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
        late += [
            answered.eq(response_fire & returned_hit),
            answered_entry.eq(returned_tag.entry),
            answered_data.eq(response.data),
        ]
        if pipelined:
            # The record, out of block RAM (whose clock-to-output delay is half a cycle)
            # into registers: read by the id of the response as it leaves, it is on the
            # read port in the cycle after and is taken into the event's registers then.
            m.d.comb += pending_read.addr.eq(response.id)
            answered_record = Signal(pending_layout, reset_less=True)
            m.d.sync += answered_record.eq(returned)
            returned = answered_record
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
            # A copy of the register per group of bits (marked ``keep``), each decoded beside
            # its group.
            for lsb in range(0, len(outstanding), CLEAR_GROUP_BITS):
                group = lsb // CLEAR_GROUP_BITS
                answered_read = Signal(name=f"answered_read_copy{group}", attrs={"keep": 1})
                answered_read_id = Signal.like(self.mem.resp.payload.id, reset_less=True,
                                               name=f"answered_read_id_copy{group}",
                                               attrs={"keep": 1})
                m.d.sync += [answered_read.eq(response_accept),
                             answered_read_id.eq(self.mem.resp.payload.id)]
                bits = range(lsb, min(lsb + CLEAR_GROUP_BITS, len(outstanding)))
                m.d.comb += clear_bits[bits.start:bits.stop].eq(
                    Cat(answered_read & (answered_read_id == bit) for bit in bits))
            # The id as it left, in two more copies (marked ``keep``): the set's decoder and
            # the reuse check's selection each load every one of the bits, and the tag
            # memory's address is a third load of the same value.
            set_id = Signal.like(left.request.id, name="set_id", reset_less=True, attrs={"keep": 1})
            reuse_id = Signal.like(left.request.id, name="reuse_id", reset_less=True,
                                   attrs={"keep": 1})
            late += [set_id.eq(staged_request.request.id), reuse_id.eq(staged_request.request.id)]
            with m.If(tags_write.en):
                m.d.comb += set_bits.eq(1 << set_id)
            # Looked up with the tag's write, a cycle after the read leaves, from the bit its
            # id has then: that bit still holds any read answered in the cycle the read
            # left, whose clear is a cycle late, so it is what the bit was as the read left.
            # The lookup takes two steps, each into registers (the bit of each group of
            # sixteen that the id's low bits name, then the group its high bits name), and
            # is reported a cycle later again.
            low_bits = min(REUSE_GROUP_BITS, config.id_width)
            groups = 1 << (config.id_width - low_bits)
            in_groups = Signal(groups)
            reuse_group = Signal(config.id_width - low_bits + 1, reset_less=True)
            looked_up = Signal()
            m.d.sync += [
                in_groups.eq(Cat(outstanding[group << low_bits:][:1 << low_bits]
                                 .bit_select(reuse_id[:low_bits], 1) for group in range(groups))),
                reuse_group.eq(reuse_id[low_bits:]),
                looked_up.eq(tags_write.en),
            ]
            m.d.comb += self.id_reuse.eq(looked_up & in_groups.bit_select(reuse_group, 1))
        else:
            with m.If(response_accept):
                m.d.comb += clear_bits.eq(1 << self.mem.resp.payload.id)
            with m.If(issue_read):
                m.d.comb += set_bits.eq(1 << request.id)
            m.d.comb += self.id_reuse.eq(issue_read & outstanding.bit_select(request.id, 1))
        # A read issued as a response with its id is taken reuses that id: it is
        # outstanding from then on.
        m.d.sync += outstanding.eq((outstanding & ~clear_bits) | set_bits)

        next_read_places = _count_places(m, read_places, issue_read & staged_request.hit,
                                         read_taken)
        if pipelined:
            # Whether the head is held, a register formed from what the head and the queues'
            # fullness are about to be: the request's handshake, which reaches every bank of
            # the sectors' queue and every copy of the ring's turns, starts at flops alone.
            next_hit, next_write = next_head[0], next_head[1]
            m.d.sync += request_held.eq(next_hit & Mux(next_write, next_write_places == depth,
                                                       next_read_places == depth))

        # --- the two queues into the event stream ----------------------------------------------
        queues = (write_events, read_events)
        if pipelined:
            # Registers on both sides of the merge, and its choice a register too: each
            # queue reaches it through a ring and it reaches ``events`` through another,
            # rings whose enables and ``i.ready`` come from their own state, so no handshake
            # reaches a wide enable or multiplexer in its cycle. Three places each keep one
            # transfer per cycle.
            # (The queues' buffers give their queue its ``ready`` from a register of their
            # own, beside the queue's banks.)
            def event_buffer(separate_ready=False):
                return RegisterRing(event_layout, EVENT_BUFFER_PLACES,
                                    select_fanout=RING_SELECT_FANOUT, fill_side_enables=True,
                                    separate_ready=separate_ready)
            m.submodules.event_merge = event_merge = RoundRobinMerge(
                event_layout, len(queues), registered_choice=True,
                select_fanout=RING_SELECT_FANOUT)
            for name, queue, port in zip(("write", "read"), queues, event_merge.i):
                m.submodules[f"{name}_event_buffer"] = buffer = event_buffer(separate_ready=True)
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
        """Four stages: the request with copies of its address (one per entry); the range
        comparisons against the table of that cycle; the winner within groups of entries
        and among the groups; the winner's index and offset, into a ring of registers
        whose head is offered to memory. No stage waits on another: the GPU side takes a
        request while fewer than :data:`PIPELINED_REQUEST_PLACES` are inside, as many as
        the ring holds. The stages and the ring carry the request without its sector
        (data and byte mask), which waits in a queue of its own, in distributed RAM, from
        the cycle the request enters to the cycle it leaves. Returns the stream of
        requests toward memory, sector included."""
        config = self.config
        entries = config.trigger.filter_entries

        inside = Signal(range(PIPELINED_REQUEST_PLACES + 1))
        enter = Signal()
        m.d.comb += [
            self.gpu.req.ready.eq(inside != PIPELINED_REQUEST_PLACES),
            enter.eq(self.gpu.req.valid & self.gpu.req.ready),
        ]

        # The sectors, in the order the requests entered: a request's sector is at the
        # queue's head (in its output register) by the time the request reaches the ring's
        # head, two cycles after it entered at the earliest, and the queue holds as many as
        # the side does.
        m.submodules.request_sectors = sectors = Queue(
            _sector_layout(config), PIPELINED_REQUEST_PLACES, bank_bits=RING_SELECT_FANOUT)
        m.d.comb += [
            sectors.i.valid.eq(enter),
            sectors.i.payload.data.eq(self.gpu.req.payload.data),
            sectors.i.payload.mask.eq(self.gpu.req.payload.mask),
        ]

        # Stage 1. The copies are marked ``keep``: a synthesis tool would merge them.
        copies = [Signal(config.addr_width, name=f"address_copy{index}", attrs={"keep": 1},
                         reset_less=True)
                  for index in range(-(-entries // ENTRIES_PER_ADDRESS_COPY))]
        entered = Signal()
        # What the stages carry is meaningful only with its valid bit: no reset.
        entered_request = Signal(_header_layout(config), reset_less=True)
        m.d.sync += [entered.eq(enter),
                     entered_request.addr.eq(self.gpu.req.payload.addr),
                     entered_request.write.eq(self.gpu.req.payload.write),
                     entered_request.id.eq(self.gpu.req.payload.id)]
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

        # Stage 3: the winner in two parts, each a few levels of logic from the matches:
        # within each group of WINNER_GROUP entries the lowest match and its offset (and
        # index), and which group is the lowest with a match. Stage 4 selects among the
        # groups' offsets, so that neither the sixteen-way priority nor a sixteen-way
        # selection of forty bits is in one cycle. The group choice has a copy per
        # OFFSET_BITS_PER_WINNER_COPY bits of the offset (marked ``keep``).
        chosen = Signal()
        chosen_request = Signal.like(entered_request, reset_less=True)
        chosen_hit = Signal(reset_less=True)
        m.d.sync += [chosen.eq(matched), chosen_request.eq(matched_request),
                     chosen_hit.eq(matches.any())]
        group_indices = [range(lsb, min(lsb + WINNER_GROUP, entries))
                         for lsb in range(0, entries, WINNER_GROUP)]
        local_bits = max(1, (WINNER_GROUP - 1).bit_length())
        group_offsets = []
        group_entries = []
        for number, indices in enumerate(group_indices):
            local_first = first_one(Cat(matches[index] for index in indices))
            group_offset = Signal(config.addr_width, name=f"group_offset{number}", reset_less=True)
            group_entry = Signal(local_bits, name=f"group_entry{number}", reset_less=True)
            m.d.sync += [group_offset.eq(one_hot_select(local_first,
                                                        [offsets[index] for index in indices])),
                         group_entry.eq(one_hot_index(local_first))]
            group_offsets.append(group_offset)
            group_entries.append(group_entry)
        group_first = first_one(Cat(Cat(matches[index] for index in indices).any()
                                    for indices in group_indices))
        winner_group = Signal(len(group_indices), reset_less=True)
        m.d.sync += winner_group.eq(group_first)
        winner_offset = []
        for lsb in range(0, config.addr_width, OFFSET_BITS_PER_WINNER_COPY):
            copy = Signal(len(group_indices), reset_less=True, attrs={"keep": 1},
                          name=f"winner_group_copy{lsb // OFFSET_BITS_PER_WINNER_COPY}")
            m.d.sync += copy.eq(group_first)
            winner_offset.append(one_hot_select(
                copy, [offset[lsb:lsb + OFFSET_BITS_PER_WINNER_COPY] for offset in group_offsets]))
        winner_entry = Cat(one_hot_select(winner_group, group_entries)[:local_bits],
                           one_hot_index(winner_group))

        # Stage 4: the ring, which carries the winner's offset alone. It always has room for
        # what the stages before it hold. A place the head leaves is filled again four
        # cycles later at the earliest (by a request that enters the cycle after and
        # reaches the ring three cycles later), so the ring's enables can come from its
        # fill side alone.
        # Whether the head is held (a triggering write or read while its queue is full)
        # and whether it is a write start at registers of their own.
        chosen_layout = _chosen_header_layout(config)
        held_bits = (_bit_of(chosen_layout, "hit"), _bit_of(chosen_layout, "request", "write"))
        m.submodules.request_ring = ring = RegisterRing(chosen_layout, PIPELINED_REQUEST_PLACES,
                                                        select_fanout=RING_SELECT_FANOUT,
                                                        fill_side_enables=True,
                                                        registered_bits=held_bits)
        m.d.comb += [
            ring.i.valid.eq(chosen),
            ring.i.payload.request.eq(chosen_request),
            ring.i.payload.hit.eq(chosen_hit),
            ring.i.payload.entry.eq(winner_entry),
            ring.i.payload.offset.eq(Cat(*winner_offset)),
        ]
        # The ring's head joined with its sector.
        head = stream.Signature(_chosen_request_layout(config)).create(path=("request_head",))
        header = ring.o.payload
        m.d.comb += [
            head.valid.eq(ring.o.valid),
            ring.o.ready.eq(head.ready),
            sectors.o.ready.eq(ring.o.valid & head.ready),
            head.payload.request.addr.eq(header.request.addr),
            head.payload.request.write.eq(header.request.write),
            head.payload.request.id.eq(header.request.id),
            head.payload.request.data.eq(sectors.o.payload.data),
            head.payload.request.mask.eq(sectors.o.payload.mask),
            head.payload.hit.eq(header.hit),
            head.payload.entry.eq(header.entry),
            head.payload.offset.eq(header.offset),
        ]
        leave = ring.o.valid & ring.o.ready
        m.d.sync += inside.eq(inside + enter - leave)
        return head, ring.next_head
