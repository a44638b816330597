# amaranth: UnusedElaboratable=no
# (Amaranth's linter option: a part whose constructor refuses its arguments still exists
# and would be reported as never elaborated. Every part these tests build is simulated.)
"""The shared stream parts in Amaranth's simulator: random back-pressure on both sides,
nothing lost, duplicated or reordered, the stream rules on every output, throughput,
the merge's fairness, and every constructor error."""

import random

import pytest
from amaranth.hdl import Module, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out, connect, flipped
from amaranth.sim import Simulator

from matndp.hw.export import export_verilog
from functools import partial

from matndp.hw.stream import (PingPongBuffer, Queue, RegisterRing, RegisterSlice, RoundRobinMerge,
                              SkidBuffer, SpillRegister, WideStage)
from matndp.sim.drivers.packing import StructCodec
from tests.hw.stream_bench import Monitor, Pause, Sink, Source, run



def _ring_of(places, select_fanout=None, fill_side_enables=False, registered_bits=(),
             separate_ready=False):
    make = partial(RegisterRing, places=places, select_fanout=select_fanout,
                   fill_side_enables=fill_side_enables, registered_bits=registered_bits,
                   separate_ready=separate_ready)
    make.__name__ = (f"RegisterRing{places}" + (f"by{select_fanout}" if select_fanout else "")
                     + ("FillSide" if fill_side_enables else "")
                     + (f"Registered{'_'.join(map(str, registered_bits))}" if registered_bits else "")
                     + ("SeparateReady" if separate_ready else ""))
    return make


# With copies: of the read turn per three payload bits (the payloads here are 8 to 16 bits
# wide, so the last group is a short one).
RING3, RING4, RING4_COPIES = _ring_of(3), _ring_of(4), _ring_of(4, select_fanout=3)
RING3_FILL_SIDE = _ring_of(3, fill_side_enables=True)
RING4_COPIES_FILL_SIDE = _ring_of(4, select_fanout=3, fill_side_enables=True)
# With the head's value of some payload bits in registers of their own (every payload here
# has bits 0 to 7).
RING3_REGISTERED = _ring_of(3, registered_bits=(1,))
RING5_COPIES_FILL_SIDE_REGISTERED = _ring_of(5, select_fanout=3, fill_side_enables=True,
                                             registered_bits=(0, 4, 7))
# With ``i.ready`` a register of its own.
RING3_SEPARATE_READY = _ring_of(3, separate_ready=True)
RING4_COPIES_FILL_SIDE_SEPARATE_READY = _ring_of(4, select_fanout=3, fill_side_enables=True,
                                                 separate_ready=True)
RINGS = [RING3, RING4, RING4_COPIES, RING3_FILL_SIDE, RING4_COPIES_FILL_SIDE, WideStage,
         RING3_REGISTERED, RING5_COPIES_FILL_SIDE_REGISTERED, RING3_SEPARATE_READY,
         RING4_COPIES_FILL_SIDE_SEPARATE_READY]
# A skid buffer with copies of its state per three payload bits.
SKID_COPIES = partial(SkidBuffer, select_fanout=3)
SKID_COPIES.__name__ = "SkidBufferBy3"
STAGES = [RegisterSlice, SkidBuffer, SKID_COPIES, PingPongBuffer, *RINGS]


def _capacity(stage):
    """Items a stage holds at most: its registers."""
    return {SpillRegister: 1, RegisterSlice: 1, SkidBuffer: 2}.get(type(stage)) or stage.places
PRESSURES = [(0.0, 0.0), (0.5, 0.0), (0.0, 0.5), (0.5, 0.5), (0.2, 0.8), (0.8, 0.2)]


def _words(count, width, seed):
    rng = random.Random(seed)
    return [rng.getrandbits(width) for _ in range(count)]


def _run_stage(stage, items, *, source_pause, sink_pause, seed):
    source = Source(stage.i, items, pause=Pause(source_pause, seed))
    sink = Sink(stage.o, "o", pause=Pause(sink_pause, seed + 1))

    def check(ctx, cycle):
        # Items inside after this cycle's transfers, from the handshakes alone.
        inside = len(source.sent) - len(sink.items)
        assert 0 <= inside <= _capacity(stage), f"cycle {cycle}: {inside} items inside"

    run(stage, [source, sink], until=lambda: len(sink.items) == len(items),
        limit=40 * len(items) + 100, check=check)
    return source, sink


@pytest.mark.parametrize("part", STAGES)
@pytest.mark.parametrize("source_pause, sink_pause", PRESSURES)
def test_stage_passes_everything_in_order_under_back_pressure(part, source_pause, sink_pause):
    items = _words(300, 16, seed=3)
    source, sink = _run_stage(part(16), items, source_pause=source_pause,
                              sink_pause=sink_pause, seed=11)
    assert sink.items == items
    # At least one cycle through the register.
    assert all(out > into for into, out in zip(source.cycles, sink.cycles))


@pytest.mark.parametrize("part", STAGES)
def test_stage_sustains_one_transfer_per_cycle_one_cycle_late(part):
    items = _words(64, 8, seed=4)
    source, sink = _run_stage(part(8), items, source_pause=0.0, sink_pause=0.0, seed=1)
    assert source.cycles == list(range(len(items)))
    assert sink.cycles == list(range(1, len(items) + 1))
    assert sink.items == items


@pytest.mark.parametrize("source_pause, sink_pause", PRESSURES)
def test_spill_register_passes_everything_in_order_under_back_pressure(source_pause, sink_pause):
    items = _words(300, 16, seed=5)
    _, sink = _run_stage(SpillRegister(16), items, source_pause=source_pause,
                         sink_pause=sink_pause, seed=17)
    assert sink.items == items


def test_spill_register_adds_no_cycle_and_sustains_one_transfer_per_cycle():
    items = _words(64, 8, seed=6)
    source, sink = _run_stage(SpillRegister(8), items, source_pause=0.0, sink_pause=0.0, seed=1)
    assert source.cycles == sink.cycles == list(range(len(items)))
    assert sink.items == items


def test_register_slice_payload_loads_only_on_a_transfer():
    """Between transfers the register keeps the payload last taken in (no toggling on the
    wires behind it while the input offers nothing)."""
    stage = RegisterSlice(8)
    kept = []

    async def bench(ctx):
        ctx.set(stage.o.ready, 1)
        for cycle, (valid, payload) in enumerate([(1, 0x5A), (0, 0x33), (0, 0xC4), (1, 0x0F), (0, 0x77),
                                                  (0, 0x81)]):
            ctx.set(stage.i.valid, valid)
            ctx.set(stage.i.payload, payload)
            await ctx.tick()
            kept.append(ctx.get(stage.o.payload))
    simulator = Simulator(stage)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    assert kept == [0x5A, 0x5A, 0x5A, 0x0F, 0x0F, 0x0F]


@pytest.mark.parametrize("part", STAGES)
def test_stage_carries_a_struct_payload(part):
    layout = data.StructLayout({"addr": unsigned(12), "write": unsigned(1), "tag": unsigned(3)})
    packing = StructCodec(layout)
    rng = random.Random(8)
    records = [dict(addr=rng.getrandbits(12), write=rng.getrandbits(1), tag=rng.getrandbits(3))
               for _ in range(100)]
    _, sink = _run_stage(part(layout), [packing.pack(r) for r in records],
                         source_pause=0.3, sink_pause=0.3, seed=5)
    assert [packing.unpack(word) for word in sink.items] == records


@pytest.mark.parametrize("part, taken", [(SpillRegister, 1), (RegisterSlice, 1), (SkidBuffer, 2), (SKID_COPIES, 2),
                                         (PingPongBuffer, 2), (RING3, 3), (RING4, 4),
                                         (RING4_COPIES, 4), (RING3_FILL_SIDE, 3),
                                         (RING4_COPIES_FILL_SIDE, 4), (WideStage, 3),
                                         (RING3_REGISTERED, 3),
                                         (RING5_COPIES_FILL_SIDE_REGISTERED, 5)])
def test_stage_with_its_output_stopped_takes_only_what_it_holds(part, taken):
    stage = part(8)
    source = Source(stage.i, list(range(10)))
    sink = Sink(stage.o, "o")
    sink.pause.hold = True
    cycles = 0

    def release_after_20():
        nonlocal cycles
        cycles += 1
        if cycles == 20:
            assert len(source.sent) == taken
            sink.pause.hold = False
        return len(sink.items) == 10

    run(stage, [source, sink], until=release_after_20, limit=100)
    assert sink.items == list(range(10))


def test_a_two_place_ring_with_fill_side_enables_refills_a_register_two_cycles_after():
    """The price of enables from the fill side alone: each register is filled again two
    cycles after it empties at the earliest, so two places take two transfers in three."""
    items = _words(30, 8, seed=13)
    source, sink = _run_stage(_ring_of(2, fill_side_enables=True)(8), items,
                              source_pause=0.0, sink_pause=0.0, seed=1)
    assert source.cycles == [3 * (k // 2) + k % 2 for k in range(len(items))]
    assert sink.items == items


class _Dependence:
    """Whether ``observed`` follows ``driven`` within a cycle: after the others have
    sampled, flips ``driven`` and back, noting any change of ``observed``."""

    def __init__(self, driven, observed):
        self.driven, self.observed = driven, observed
        self.followed = False

    def sample(self, ctx, cycle):
        value = ctx.get(self.driven)
        before = ctx.get(self.observed)
        ctx.set(self.driven, not value)
        after = ctx.get(self.observed)
        ctx.set(self.driven, value)
        self.followed |= before != after


@pytest.mark.parametrize("part, combinational", [(SpillRegister, True), (RegisterSlice, True),
                                                  (SkidBuffer, False),
                                                  (SKID_COPIES, False), (PingPongBuffer, False),
                                                  *((ring, False) for ring in RINGS)])
def test_only_the_two_register_stages_cut_the_ready_path(part, combinational):
    stage = part(8)
    items = list(range(200))
    source = Source(stage.i, items, pause=Pause(0.3, 2))
    sink = Sink(stage.o, "o", pause=Pause(0.5, 3))
    probe = _Dependence(stage.o.ready, stage.i.ready)
    run(stage, [source, sink, probe], until=lambda: len(sink.items) == len(items), limit=2000)
    assert sink.items == items
    assert probe.followed == combinational


class _Pipeline(wiring.Component):
    """Parts composed with connect(): a register slice, a skid buffer, a register slice."""

    def __init__(self, width):
        self.parts = [RegisterSlice(width), SkidBuffer(width), RegisterSlice(width)]
        super().__init__({"i": In(self.parts[0].i.signature.flip()),
                          "o": Out(self.parts[-1].o.signature)})

    def elaborate(self, platform):
        m = Module()
        for index, part in enumerate(self.parts):
            m.submodules[f"part{index}"] = part
        connect(m, flipped(self.i), self.parts[0].i)
        for upstream, downstream in zip(self.parts, self.parts[1:]):
            connect(m, upstream.o, downstream.i)
        connect(m, self.parts[-1].o, flipped(self.o))
        return m


def test_parts_compose_with_connect():
    pipeline = _Pipeline(10)
    items = _words(300, 10, seed=6)
    source = Source(pipeline.i, items, pause=Pause(0.4, 7))
    sink = Sink(pipeline.o, "o", pause=Pause(0.4, 8))
    run(pipeline, [source, sink], until=lambda: len(sink.items) == len(items), limit=5000)
    assert sink.items == items
    unthrottled = _Pipeline(10)
    source = Source(unthrottled.i, items)
    sink = Sink(unthrottled.o, "o")
    run(unthrottled, [source, sink], until=lambda: len(sink.items) == len(items), limit=5000)
    assert sink.cycles == list(range(3, 3 + len(items)))


# --- the queue ----------------------------------------------------------------------------

def _run_queue(depth, items, *, source_pause, sink_pause, seed, bank_bits=None):
    queue = Queue(16, depth, bank_bits=bank_bits)
    source = Source(queue.i, items, pause=Pause(source_pause, seed))
    sink = Sink(queue.o, "o", pause=Pause(sink_pause, seed + 1))
    full_cycles = 0

    def check(ctx, cycle):
        nonlocal full_cycles
        # Held before this cycle's transfers: what entered minus what left, so far.
        inside = len(source.sent) - source.transfer - (len(sink.items) - sink.transfer)
        assert ctx.get(queue.level) == inside, f"cycle {cycle}: level {ctx.get(queue.level)}, {inside} inside"
        assert ctx.get(queue.i.ready) == (inside < depth), f"cycle {cycle}: ready with {inside} inside"
        full_cycles += inside == depth

    run(queue, [source, sink], until=lambda: len(sink.items) == len(items),
        limit=40 * len(items) + 100, check=check)
    return source, sink, full_cycles


# Banks of five columns: the 16-bit payload in three of five bits and one of one.
QUEUE_BANKS = pytest.mark.parametrize("bank_bits", [None, 5])


@QUEUE_BANKS
@pytest.mark.parametrize("depth", [1, 2, 3, 8])
@pytest.mark.parametrize("source_pause, sink_pause", PRESSURES)
def test_queue_holds_exactly_its_depth_in_order(depth, source_pause, sink_pause, bank_bits):
    items = _words(200, 16, seed=depth)
    _, sink, full_cycles = _run_queue(depth, items, source_pause=source_pause,
                                      sink_pause=sink_pause, seed=30 + depth, bank_bits=bank_bits)
    assert sink.items == items
    if sink_pause > source_pause:
        assert full_cycles > 10          # room was exercised to the last entry


@QUEUE_BANKS
@pytest.mark.parametrize("depth", [3, 8])
def test_queue_sustains_one_transfer_per_cycle_two_cycles_late(depth, bank_bits):
    items = _words(100, 16, seed=1)
    source, sink, _ = _run_queue(depth, items, source_pause=0.0, sink_pause=0.0, seed=1,
                                 bank_bits=bank_bits)
    assert source.cycles == list(range(100))
    assert sink.cycles == list(range(2, 102))


def test_queue_room_does_not_wait_for_an_offer():
    queue = Queue(8, 2)
    items = list(range(100))
    source = Source(queue.i, items, pause=Pause(0.3, 4))
    sink = Sink(queue.o, "o", pause=Pause(0.6, 5))
    probe = _Dependence(queue.i.valid, queue.i.ready)
    run(queue, [source, sink, probe], until=lambda: len(sink.items) == len(items), limit=2000)
    assert sink.items == items and not probe.followed


# --- the merge ----------------------------------------------------------------------------

MERGE_LAYOUT = data.StructLayout({"value": unsigned(10), "source": unsigned(3)})
MERGE_CODEC = StructCodec(MERGE_LAYOUT)


# The merge as it decides in the cycle of the transfer, and with its choice registered (with
# copies of it per five payload bits, so the 13-bit payload has a short last group).
MERGES = {"combinational": {}, "registered": {"registered_choice": True},
          "registered_copies": {"registered_choice": True, "select_fanout": 5}}
merge_kinds = pytest.mark.parametrize("kind", list(MERGES))
# Merges with inputs 0 and 2 deferred (taken only while no other input offers).
DEFERRED_MERGES = {"deferred": {"deferred": (0, 2)},
                   "registered_deferred": {"registered_choice": True, "deferred": (0, 2)}}
deferred_kinds = pytest.mark.parametrize("kind", list(DEFERRED_MERGES))


def _run_merge(count, per_source, *, source_pauses, sink_pause, seed, withdraw=0.0,
               kind="combinational", check=None):
    merge = RoundRobinMerge(MERGE_LAYOUT, count, **{**MERGES, **DEFERRED_MERGES}[kind])
    rng = random.Random(seed)
    items = [[MERGE_CODEC.pack(dict(value=rng.getrandbits(10), source=k))
              for _ in range(per_source[k])] for k in range(count)]
    sources = [Source(merge.i[k], items[k], pause=Pause(source_pauses[k], seed + 1 + k),
                      withdraw=Pause(withdraw, seed + 11 + k)) for k in range(count)]
    # An input that withdraws takes back what the output offered: then only the transfers
    # are checked, not the rules on the output.
    sink = Sink(merge.o, "o", pause=Pause(sink_pause, seed), rules=not withdraw)
    indices = []

    extra_check = check

    def check(ctx, cycle):
        if sink.transfer:
            indices.append(ctx.get(merge.index))
        # A transfer leaves exactly the input the output names.
        taking = [k for k in range(count) if ctx.get(merge.i[k].valid) and ctx.get(merge.i[k].ready)]
        assert taking == ([ctx.get(merge.index)] if sink.transfer else []), \
            f"cycle {cycle}: inputs {taking} taken, output transfer {sink.transfer}"
        if extra_check is not None:
            extra_check(merge, ctx, cycle, taking)

    total = sum(per_source)
    run(merge, [*sources, sink], until=lambda: len(sink.items) == total,
        limit=60 * total + 100, check=check)
    return sources, sink, indices, items


@pytest.mark.parametrize("count", [1, 2, 3, 5])
@pytest.mark.parametrize("source_pause, sink_pause", [(0.0, 0.0), (0.6, 0.0), (0.0, 0.6), (0.5, 0.5)])
@merge_kinds
def test_merge_loses_duplicates_and_reorders_nothing(count, source_pause, sink_pause, kind):
    per_source = [40 + 17 * k for k in range(count)]
    sources, sink, indices, items = _run_merge(
        count, per_source, source_pauses=[source_pause] * count, sink_pause=sink_pause,
        seed=20 + count, kind=kind)
    received = [MERGE_CODEC.unpack(word) for word in sink.items]
    assert indices == [item["source"] for item in received]
    for k in range(count):
        assert [word for word, item in zip(sink.items, received) if item["source"] == k] == items[k]


@pytest.mark.parametrize("count", [2, 3, 5])
@merge_kinds
def test_merge_takes_the_inputs_in_turn_when_all_offer(count, kind):
    per_source = [30] * count
    _, sink, indices, _ = _run_merge(count, per_source, source_pauses=[0.0] * count,
                                     sink_pause=0.5, seed=3, kind=kind)
    assert indices == [k % count for k in range(30 * count)]


@pytest.mark.parametrize("count", [2, 3, 5])
@merge_kinds
def test_merge_sustains_one_transfer_per_cycle(count, kind):
    per_source = [25] * count
    _, sink, _, _ = _run_merge(count, per_source, source_pauses=[0.0] * count,
                               sink_pause=0.0, seed=4, kind=kind)
    assert sink.cycles == list(range(25 * count))


@pytest.mark.parametrize("count", [2, 3, 5])
@merge_kinds
def test_merge_serves_an_offering_input_within_one_round(count, kind):
    """Round-robin bound: while an input offers, each other input is taken at most once
    before it, whatever the others and the output do."""
    per_source = [60] * count
    sources, sink, indices, _ = _run_merge(
        count, per_source, source_pauses=[0.2 + 0.15 * k for k in range(count)],
        sink_pause=0.4, seed=9, kind=kind)
    for k, source in enumerate(sources):
        for offered, taken in zip(source.offer_cycles, source.cycles):
            others = [sink_index for cycle, sink_index in zip(sink.cycles, indices)
                      if offered <= cycle < taken]
            assert len(others) == len(set(others)) <= count - 1, \
                f"input {k} offered at {offered} waited for {others} until {taken}"


@pytest.mark.parametrize("count", [2, 3])
@merge_kinds
def test_merge_takes_nothing_from_an_input_that_withdrew(count, kind):
    """Inputs that break the stream rules (withdrawing offers) still lose, duplicate and
    reorder nothing, and the output transfers only what an input hands over."""
    per_source = [80] * count
    sources, sink, indices, items = _run_merge(
        count, per_source, source_pauses=[0.2] * count, sink_pause=0.5, seed=12, withdraw=0.3,
        kind=kind)
    received = [MERGE_CODEC.unpack(word) for word in sink.items]
    for k in range(count):
        assert [word for word, item in zip(sink.items, received) if item["source"] == k] == items[k]


@deferred_kinds
@pytest.mark.parametrize("source_pause, sink_pause", [(0.0, 0.0), (0.6, 0.0), (0.5, 0.5)])
def test_a_merge_with_deferred_inputs_loses_duplicates_and_reorders_nothing(
        kind, source_pause, sink_pause):
    per_source = [40, 55, 30, 45]
    sources, sink, indices, items = _run_merge(
        4, per_source, source_pauses=[source_pause] * 4, sink_pause=sink_pause, seed=31,
        kind=kind)
    received = [MERGE_CODEC.unpack(word) for word in sink.items]
    assert indices == [item["source"] for item in received]
    for k in range(4):
        assert [word for word, item in zip(sink.items, received) if item["source"] == k] == items[k]


@deferred_kinds
def test_a_deferred_input_is_taken_only_while_no_other_input_offers(kind):
    """Inputs 0 and 2 of four deferred: a transfer from one of them happens only where no
    other input offered when the choice was made (in the transfer's cycle, or with a
    registered choice in the cycle before, counting only offers not taken then); and with
    the others pausing, the deferred inputs are served too."""
    deferred = DEFERRED_MERGES[kind]["deferred"]
    registered = DEFERRED_MERGES[kind].get("registered_choice", False)
    history = []           # per cycle: (the inputs offering, the input taken or None)
    seen = {"deferred_taken": 0, "deferred_waited": 0}

    def check(merge, ctx, cycle, taking):
        offering = {k for k in range(4) if ctx.get(merge.i[k].valid)}
        taken = taking[0] if taking else None
        history.append((offering, taken))
        if taken in deferred:
            seen["deferred_taken"] += 1
            chosen_in = history[-2] if registered and len(history) > 1 else history[-1]
            if registered and len(history) == 1:
                return
            others = {k for k in chosen_in[0] if k not in deferred} - \
                ({chosen_in[1]} if registered else set())
            assert not others, f"cycle {cycle}: input {taken} taken while {others} offered"
        elif offering & set(deferred):
            seen["deferred_waited"] += 1

    _run_merge(4, [60] * 4, source_pauses=[0.2, 0.5, 0.2, 0.5], sink_pause=0.0, seed=8,
               kind=kind, check=check)
    assert seen["deferred_taken"] == 120 and seen["deferred_waited"] > 20, seen


@merge_kinds
def test_merge_of_one_stream_is_a_wire(kind):
    _, sink, _, items = _run_merge(1, [50], source_pauses=[0.3], sink_pause=0.3, seed=2,
                                   kind=kind)
    sources, unthrottled, _, _ = _run_merge(1, [50], source_pauses=[0.0], sink_pause=0.0,
                                            seed=2, kind=kind)
    assert unthrottled.cycles == sources[0].cycles == list(range(50))
    assert sink.items == items[0]


@pytest.mark.parametrize("kind", ["registered", "registered_copies"])
def test_a_registered_choice_costs_a_cycle_only_where_it_moves_to_a_new_offer(kind):
    """Input 1 alone, then input 0 alone: the choice (input 0 after reset) waits a cycle
    to move to input 1 as it starts offering, and again to move back once input 1 has
    nothing left; a stream from one input flows at one transfer per cycle."""
    merge = RoundRobinMerge(MERGE_LAYOUT, 2, **MERGES[kind])
    words = [MERGE_CODEC.pack(dict(value=value, source=0)) for value in range(6)]
    late = [MERGE_CODEC.pack(dict(value=value, source=1)) for value in range(4)]
    second = Source(merge.i[1], late)
    first = Source(merge.i[0], words, pause=Pause(0.0, 1))
    first.pause.hold = True
    sink = Sink(merge.o, "o")

    def release_the_first_input():
        if len(sink.items) == len(late):
            first.pause.hold = False
        return len(sink.items) == len(words) + len(late)

    run(merge, [first, second, sink], until=release_the_first_input, limit=100)
    assert sink.items == late + words
    assert sink.cycles == [1, 2, 3, 4] + [6, 7, 8, 9, 10, 11]


class _MergePayloadProbe:
    """Whether the merge's offered payload follows an input's ``valid`` within a cycle."""

    def __init__(self, merge):
        self.probes = [_Dependence(port.valid, merge.o.payload) for port in merge.i]

    def sample(self, ctx, cycle):
        for probe in self.probes:
            probe.sample(ctx, cycle)

    @property
    def followed(self):
        return any(probe.followed for probe in self.probes)


@pytest.mark.parametrize("kind, follows", [("combinational", True), ("registered", False),
                                           ("registered_copies", False)])
def test_only_the_combinational_choice_puts_valid_before_the_payload(kind, follows):
    merge = RoundRobinMerge(MERGE_LAYOUT, 2, **MERGES[kind])
    rng = random.Random(5)
    items = [[MERGE_CODEC.pack(dict(value=rng.getrandbits(10), source=k)) for _ in range(60)]
             for k in range(2)]
    sources = [Source(merge.i[k], items[k], pause=Pause(0.4, 30 + k)) for k in range(2)]
    sink = Sink(merge.o, "o", pause=Pause(0.3, 40))
    probe = _MergePayloadProbe(merge)
    run(merge, [*sources, sink, probe], until=lambda: len(sink.items) == 120, limit=2000)
    assert probe.followed == follows


# --- construction -----------------------------------------------------------------------

@pytest.mark.parametrize("make, error, message", [
    (lambda: RegisterSlice("wide"), TypeError, "payload_shape must be a shape"),
    (lambda: SpillRegister("x"), TypeError, "payload_shape must be a shape"),
    (lambda: SkidBuffer(None), TypeError, "payload_shape must be a shape"),
    (lambda: SkidBuffer(8, select_fanout=0), ValueError, "select_fanout must be at least 1, not 0"),
    (lambda: SkidBuffer(8, select_fanout="4"), TypeError, "select_fanout must be an int"),
    (lambda: WideStage("x"), TypeError, "payload_shape must be a shape"),
    (lambda: PingPongBuffer("x"), TypeError, "payload_shape must be a shape"),
    (lambda: RegisterRing("x", 3), TypeError, "payload_shape must be a shape"),
    (lambda: RegisterRing(8, 1), ValueError, "places must be at least 2, not 1"),
    (lambda: RegisterRing(8, 0), ValueError, "places must be at least 2, not 0"),
    (lambda: RegisterRing(8, 3.0), TypeError, "places must be an int"),
    (lambda: RegisterRing(8, 3, select_fanout=0), ValueError, "select_fanout must be at least 1, not 0"),
    (lambda: RegisterRing(8, 3, select_fanout=2.5), TypeError, "select_fanout must be an int"),
    (lambda: RegisterRing(8, 3, fill_side_enables=1), TypeError,
     "fill_side_enables must be a bool, not 1"),
    (lambda: RegisterRing(8, 3, separate_ready=1), TypeError,
     "separate_ready must be a bool, not 1"),
    (lambda: WideStage(8, separate_ready=None), TypeError,
     "separate_ready must be a bool, not None"),
    (lambda: RegisterRing(8, 3, registered_bits=(8,)), ValueError,
     r"registered_bits must be distinct bit indices below the payload's 8 bits, not \(8,\)"),
    (lambda: RegisterRing(8, 3, registered_bits=(1, 1)), ValueError, "must be distinct bit indices"),
    (lambda: RegisterRing(8, 3, registered_bits=(True,)), ValueError, "must be distinct bit indices"),
    (lambda: RegisterSlice(-1), TypeError, "payload_shape must be a shape"),
    (lambda: RoundRobinMerge(2.5, 2), TypeError, "payload_shape must be a shape"),
    (lambda: RoundRobinMerge(8, 0), ValueError, "count must be at least 1, not 0"),
    (lambda: RoundRobinMerge(8, -3), ValueError, "count must be at least 1"),
    (lambda: RoundRobinMerge(8, 2.0), TypeError, "count must be an int"),
    (lambda: RoundRobinMerge(8, True), TypeError, "count must be an int"),
    (lambda: RoundRobinMerge(8, 2, registered_choice=1), TypeError,
     "registered_choice must be a bool, not 1"),
    (lambda: RoundRobinMerge(8, 2, select_fanout=4), ValueError,
     "select_fanout needs registered_choice"),
    (lambda: RoundRobinMerge(8, 2, registered_choice=True, select_fanout=0), ValueError,
     "select_fanout must be at least 1, not 0"),
    (lambda: RoundRobinMerge(8, 2, deferred=1), TypeError,
     "deferred must be a collection of input indices, not 1"),
    (lambda: RoundRobinMerge(8, 2, deferred=(2,)), ValueError,
     r"deferred must be distinct input indices below 2, not \(2,\)"),
    (lambda: RoundRobinMerge(8, 3, deferred=(1, 1)), ValueError,
     "deferred must be distinct input indices below 3"),
    (lambda: RoundRobinMerge(8, 3, deferred=(True,)), ValueError,
     "deferred must be distinct input indices below 3"),
    (lambda: RoundRobinMerge(8, 3, deferred=(-1,)), ValueError,
     "deferred must be distinct input indices below 3"),
    (lambda: Queue("x", 4), TypeError, "payload_shape must be a shape"),
    (lambda: Queue(8, 0), ValueError, "depth must be at least 1, not 0"),
    (lambda: Queue(8, 4.0), TypeError, "depth must be an int"),
    (lambda: Queue(8, False), TypeError, "depth must be an int"),
    (lambda: Queue(8, 4, bank_bits=0), ValueError, "bank_bits must be at least 1, not 0"),
    (lambda: Queue(8, 4, bank_bits=2.0), TypeError, "bank_bits must be an int"),
])
def test_bad_construction_is_refused_by_name(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_parts_have_the_stream_signatures_they_promise_and_export():
    layout = data.StructLayout({"a": unsigned(4)})
    stages = [SpillRegister(layout), RegisterSlice(layout), SkidBuffer(layout), SkidBuffer(layout, select_fanout=3),
              PingPongBuffer(layout), WideStage(layout), Queue(layout, 4, bank_bits=2),
              Queue(layout, 4)]
    for part in stages:
        assert part.i.signature == part.o.signature.flip()
        assert part.payload_shape is layout
    merge = RoundRobinMerge(layout, 3)
    assert all(port.signature == merge.o.signature.flip() for port in merge.i)
    assert len(merge.i) == 3 and len(merge.index) == 2
    assert stages[-1].depth == 4 and len(stages[-1].level) == 3
    for part in [*stages, merge]:
        assert "module part" in export_verilog(part, "part")
