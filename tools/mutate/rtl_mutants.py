"""The catalog of RTL mutants (docs/testing.md): plausible single bugs in ``hw/``, each an
exact snippet of one source file, its replacement, and the tests that should catch it.

Every snippet must occur exactly once in its file (a test checks the whole catalog against
the tree, so a mutant cannot silently stop applying when the code moves). A mutant that
cannot change behaviour is kept with ``equivalent`` saying why, and is not counted in the
kill rate. The tests are Amaranth-simulator tests where one can catch the mutant: they
take seconds, where a Verilator build takes a minute.
"""

from dataclasses import dataclass
import pathlib


__all__ = ["Mutant", "MUTANTS", "part_of_file"]


def part_of_file(file):
    """The part of ``hw/`` a file is reported under: its sub-package or its module."""
    path = pathlib.PurePosixPath(file)
    assert path.parts[0] == "hw", file
    return path.parts[1] if len(path.parts) > 2 else path.stem


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str
    snippet: str
    replacement: str
    tests: tuple
    equivalent: str = ""
    note: str = ""

    def __post_init__(self):
        if self.snippet == self.replacement:
            raise ValueError(f"mutant {self.id} changes nothing")
        if not self.tests:
            raise ValueError(f"mutant {self.id} names no test")

    @property
    def part(self):
        return part_of_file(self.file)


# Test groups (pytest arguments).
TRIGGER = ("tests/hw/trigger",)
GATHER = ("tests/hw/trigger/test_gather.py",)
SLICE_COUNTERS = ("tests/hw/test_ndp_slice_counters.py",)
SLICE = (*SLICE_COUNTERS, "tests/hw/test_ndp_slice.py::test_windows_without_targets_answer_with_errors",
         "tests/hw/test_ndp_slice.py::test_entries_beyond_32_reach_the_high_mask_words",
         "tests/hw/test_ndp_slice.py::test_no_request_meets_a_new_range_half_formed")
BUS = ("tests/hw/bus",)
STREAM = ("tests/hw/test_stream.py",)
ARBITER = ("tests/hw/test_arbiter.py",)
_NO_HDL_SIMULATOR = ("-k", "not verilator and not icarus")


def _fp(*ops):
    """The FP tests of ``ops`` in Amaranth's simulator: the shared building blocks on their
    own, the hand-worked vectors, then the directed tables and the random vectors under
    back-pressure."""
    return ("tests/hw/fp/test_float32.py", "tests/hw/fp/test_hand_worked.py",
            *(f"tests/hw/fp/test_ops.py::test_directed[amaranth-{op}]" for op in ops),
            *(f"tests/hw/fp/test_ops.py::test_random[amaranth-random-pressure-{op}]" for op in ops))


FP_ADD = _fp("add", "sub")
FP_MUL = _fp("mul")
FP_FMA = _fp("fma")
FP_ROUNDED = _fp("add", "sub", "mul", "fma")
FP_COMPARE = ("tests/hw/fp/test_compare.py", *_NO_HDL_SIMULATOR)
FP_MINMAX = ("tests/hw/fp/test_minmax.py", *_NO_HDL_SIMULATOR)
FP_SIGN = ("tests/hw/fp/test_sign.py", *_NO_HDL_SIMULATOR)
FP_CONVERT = ("tests/hw/fp/test_convert.py", *_NO_HDL_SIMULATOR)
FP_SELECT = ("tests/hw/fp/test_select.py", *_NO_HDL_SIMULATOR)
FP_SQRT = ("tests/hw/fp/test_sqrt.py", *_NO_HDL_SIMULATOR)
FP_DIVIDE = ("tests/hw/fp/test_divide.py", *_NO_HDL_SIMULATOR)
ENGINE_UNITS = ("tests/hw/engine/test_vector_units.py",)
ENGINE_DIVIDE = ("tests/hw/engine/test_divide.py",)
ENGINE_ALU = ("tests/hw/engine/test_alu.py",)
ENGINE_SCOREBOARD = ("tests/hw/engine/pipeline/test_scoreboard.py",)
ENGINE_PICK = ("tests/hw/engine/pipeline/test_pick.py",)
ENGINE_DISPATCH = ("tests/hw/engine/pipeline/test_dispatch.py",)
ENGINE_CHECK = ("tests/hw/engine/pipeline/test_check.py", *ENGINE_DISPATCH)
ENGINE_WRITEBACK = ("tests/hw/engine/pipeline/test_writeback.py",)
ENGINE_SLOTS = ("tests/hw/engine/pipeline/test_slots.py",)
ENGINE_SPAWNER = ("tests/hw/engine/test_spawner.py",)
ENGINE_ENTRIES = ("tests/hw/engine/test_entries.py",)
ENGINE_LOAD_STORE = ("tests/hw/engine/test_load_store.py",)
ENGINE_POSTED_STORES = ("tests/hw/engine/test_posted_stores.py",)
# The proof alone: its test of the catalog's station mutants would find a mutant's snippet
# missing from a copy that mutant has already changed, and fail for that.
ENGINE_ORDERING = ("tests/hw/engine/test_ordering.py",
                   "tests/sim/formal/test_ordering.py::test_the_station_keeps_the_orders")


def _m(id, file, snippet, replacement, tests, **kwargs):
    return Mutant(id, file, snippet, replacement, tuple(tests), **kwargs)


_TRIGGER = "hw/trigger/trigger.py"
_VDIVIDE = "hw/engine/divide.py"
_LANE_GROUPS = "hw/engine/lane_groups.py"
_MATCH = "hw/trigger/filter_match.py"
_GATHER = "hw/trigger/gather.py"
_SLICE = "hw/ndp_slice.py"
_ACTION = "hw/bus/action.py"
_REGISTERS = "hw/bus/register_file.py"
_DECODER = "hw/bus/decoder.py"
_STREAM = "hw/stream.py"
_ONEHOT = "hw/onehot.py"
_ARBITER = "hw/arbiter.py"
_SCOREBOARD = "hw/engine/pipeline/scoreboard.py"
_DISPATCH = "hw/engine/pipeline/dispatch.py"
_CHECK = "hw/engine/pipeline/check.py"
_WRITEBACK = "hw/engine/pipeline/writeback.py"
_SLOTS = "hw/engine/pipeline/slots.py"
_ORDERING = "hw/engine/ordering.py"
_FLOAT = "hw/fp/float32.py"
_ROUNDING = "hw/fp/rounding.py"

MUTANTS = (
    # --- the filter matcher ------------------------------------------------------------------
    _m("match-base-bound", _MATCH, "(addr >= entry.base)", "(addr > entry.base)", TRIGGER),
    _m("match-end-bound", _MATCH, "(addr < end)", "(addr <= end)", TRIGGER),
    _m("match-end-no-carry", _MATCH, "end = Signal(width + 1, name=f\"end{index}\")",
       "end = Signal(width, name=f\"end{index}\")", TRIGGER),
    _m("match-read-direction", _MATCH, "(~write & entry.on_read)", "(~write & entry.on_write)",
       TRIGGER),
    _m("match-ignores-enable", _MATCH, "match.eq(entry.enable & direction & in_range)",
       "match.eq(direction & in_range)", TRIGGER),
    _m("match-offset-sign", _MATCH, "offset.eq(addr - entry.base)", "offset.eq(entry.base - addr)",
       TRIGGER),
    _m("match-highest-wins", _MATCH, "self.winner.eq(first_one(matched))",
       "self.winner.eq(first_one(matched[::-1])[::-1])", TRIGGER),
    # --- the trigger -------------------------------------------------------------------------
    # --- the arrival-gathering table -----------------------------------------------------------
    _m("gather-arming-clears-nothing", _GATHER,
       "gathering_armed.eq(self.arm & Cat(gather.ports >= 2 for gather in self.gather))",
       "gathering_armed.eq(0)", GATHER),
    _m("gather-count-kept-after-the-last", _GATHER, "Cat(Mux(last, 0, count + 1)[:count_bits]",
       "Cat((count + 1)[:count_bits]", GATHER),
    _m("gather-passes-one-arrival-early", _GATHER, "last.eq(count + 1 == layout.ports)",
       "last.eq(count + 2 == layout.ports)", GATHER),
    _m("gather-clears-the-words-slots-before-the-range", _GATHER,
       "write.en.eq(Cat((word_base + index >= clear_at) & ", "write.en.eq(Cat((word_base + index >= 0) & ",
       GATHER),
    _m("gather-clears-the-words-slots-after-the-range", _GATHER,
       "& (word_base + index < clear_end)", "& (word_base + index >= 0)", GATHER),
    _m("gather-counts-into-every-slot-of-the-word", _GATHER, "write.en.eq(1 << lane)",
       "write.en.eq(-1)", GATHER),
    _m("gather-clearing-position-wraps-in-the-last-word", _GATHER,
       "clear_at = Signal(range(words * lanes + 1))", "clear_at = Signal(range(sectors + 1))",
       GATHER),
    _m("gather-slot-ignores-the-entrys-base", _GATHER,
       "slot.eq(layout.slot + (within >> offset_bits))", "slot.eq(within >> offset_bits)", GATHER),
    _m("gather-counts-while-clearing", _GATHER,
       "self.i.ready.eq(~self.clearing & (out.i.ready | ~passes))",
       "self.i.ready.eq(out.i.ready | ~passes)", GATHER),
    _m("gather-slot-beyond-the-table-counted", _GATHER,
       "outside.eq((copy >= layout.ports) | (slot >= sectors) |",
       "outside.eq((copy >= layout.ports) |", GATHER),
    _m("trigger-held-ignores-queue", _TRIGGER, "request_held.eq((write_hit & write_queue_full) |",
       "request_held.eq((write_hit & 0) |", TRIGGER),
    _m("trigger-held-on-any-write", _TRIGGER, "request_held.eq((write_hit & write_queue_full) |",
       "request_held.eq((request.write & write_queue_full) |", TRIGGER),
    _m("trigger-pipelined-read-places-bound", _TRIGGER, "next_read_places == depth))",
       "next_read_places == depth + 1))", TRIGGER),
    _m("trigger-pipelined-places-bound", _TRIGGER, "Mux(next_write, next_write_places == depth,",
       "Mux(next_write, next_write_places == depth + 1,", TRIGGER),
    _m("trigger-pipelined-events-in-their-cycle", _TRIGGER,
       "late = m.d.sync if pipelined else m.d.comb", "late = m.d.comb", TRIGGER),
    _m("trigger-pipelined-one-place-short", _TRIGGER,
       "self.gpu.req.ready.eq(inside != PIPELINED_REQUEST_PLACES)",
       "self.gpu.req.ready.eq(inside < PIPELINED_REQUEST_PLACES - 1)", TRIGGER),
    _m("trigger-pipelined-tag-not-passed-on", _TRIGGER,
       "Mux(met, met_tag, tags_read.data)", "Mux(0, met_tag, tags_read.data)", TRIGGER),
    _m("trigger-clear-wins", _TRIGGER,
       "m.d.sync += outstanding.eq((outstanding & ~clear_bits) | set_bits)",
       "m.d.sync += outstanding.eq((outstanding | set_bits) & ~clear_bits)", TRIGGER),
    _m("trigger-pipelined-never-cleared", _TRIGGER,
       "m.d.sync += [answered_read.eq(response_accept),",
       "m.d.sync += [answered_read.eq(0),", TRIGGER),
    _m("trigger-pipelined-match-on-old-copy", _TRIGGER,
       "copies[index // ENTRIES_PER_ADDRESS_COPY],",
       "matched_request.addr,", TRIGGER),
    _m("trigger-read-held-ignores-reservations", _TRIGGER, "(read_hit & read_queue_full))",
       "(read_hit & 0))", TRIGGER),
    _m("trigger-read-places-bound", _TRIGGER,
       "read_queue_full = read_places == depth",
       "read_queue_full = read_places == depth + 1", TRIGGER),
    _m("trigger-write-event-data", _TRIGGER, "write_event.data.eq(left.request.data)",
       "write_event.data.eq(left.request.data >> 1)", TRIGGER),
    _m("trigger-read-event-write-flag", _TRIGGER, "read_event.write.eq(0)", "read_event.write.eq(1)",
       TRIGGER),
    _m("trigger-read-event-offset", _TRIGGER, "read_event.offset.eq(returned.offset)",
       "read_event.offset.eq(returned.addr)", TRIGGER),
    _m("trigger-read-event-mask", _TRIGGER, "record.mask.eq(left.request.mask)", "record.mask.eq(0)", TRIGGER),
    _m("trigger-pending-read-every-cycle", _TRIGGER, "pending_read.en.eq(response_accept)",
       "pending_read.en.eq(1)", TRIGGER),
    _m("trigger-issue-read-on-write", _TRIGGER, "issue_read = request_fire & ~request.write",
       "issue_read = request_fire", TRIGGER),
    _m("trigger-tag-ignores-hit", _TRIGGER, "tag.hit.eq(left.hit)", "tag.hit.eq(1)", TRIGGER),
    _m("trigger-id-reuse-unqualified", _TRIGGER,
       "self.id_reuse.eq(issue_read & outstanding.bit_select(request.id, 1))",
       "self.id_reuse.eq(outstanding.bit_select(request.id, 1))", TRIGGER),
    _m("trigger-pipelined-response-ring-small", _TRIGGER,
       "staged_layout, RESPONSE_BUFFER_PLACES + 1,", "staged_layout, RESPONSE_BUFFER_PLACES,", TRIGGER),
    _m("trigger-pipelined-response-ring-drain-side", _TRIGGER,
       "fill_side_enables=True, select_fanout=RING_SELECT_FANOUT)\n            responses_inside",
       "fill_side_enables=False, select_fanout=RING_SELECT_FANOUT)\n            responses_inside", TRIGGER),
    _m("trigger-pipelined-response-room-bound", _TRIGGER,
       "response_room.eq(next_inside < RESPONSE_BUFFER_PLACES)",
       "response_room.eq(next_inside <= RESPONSE_BUFFER_PLACES)", TRIGGER),
    _m("trigger-pipelined-record-read-late", _TRIGGER,
       "m.d.comb += pending_read.addr.eq(response.id)",
       "m.d.comb += pending_read.addr.eq(answered_record.addr)", TRIGGER),
    _m("trigger-pipelined-reuse-group-from-high-bits", _TRIGGER,
       ".bit_select(reuse_id[:low_bits], 1) for group in range(groups))),",
       ".bit_select(reuse_id[-low_bits:], 1) for group in range(groups))),", TRIGGER),
    _m("trigger-pipelined-winner-copy-stale", _TRIGGER, "m.d.sync += copy.eq(group_first)",
       "m.d.sync += copy.eq(winner_group)", TRIGGER),
    _m("trigger-pipelined-group-priority-reversed", _TRIGGER,
       "local_first = first_one(Cat(matches[index] for index in indices))",
       "local_first = first_one(Cat(matches[index] for index in indices)[::-1])[::-1]", TRIGGER),
    _m("trigger-pipelined-reuse-id-late", _TRIGGER, "reuse_id.eq(staged_request.request.id)",
       "reuse_id.eq(left.request.id)", TRIGGER),
    _m("trigger-pipelined-set-id-late", _TRIGGER, "set_id.eq(staged_request.request.id)",
       "set_id.eq(left.request.id)", TRIGGER),
    _m("trigger-outstanding-never-cleared", _TRIGGER,
       "outstanding.eq((outstanding & ~clear_bits) | set_bits)", "outstanding.eq(outstanding | set_bits)",
       TRIGGER),
    _m("trigger-stall-off-by-a-cycle", _TRIGGER,
       "self.stall.eq((head.valid & request_held) |",
       "self.stall.eq((head.valid & request_held & self.mem.req.ready) |", TRIGGER),
    _m("trigger-stall-response-path", _TRIGGER, "(response_stage.o.valid & response_held))",
       "(response_stage.o.valid & ~self.gpu.resp.ready))", TRIGGER),
    _m("trigger-produced-writes-only", _TRIGGER,
       "self.produced.eq(write_events.i.valid + read_events.i.valid)",
       "self.produced.eq(write_events.i.valid | read_events.i.valid)", TRIGGER),
    _m("trigger-hit-pulse-read-entry", _TRIGGER, "(read_events.i.valid & (read_event_entry == index)))",
       "(read_events.i.valid & (write_event.entry == index)))", TRIGGER),
    # --- the slice's counters ----------------------------------------------------------------
    _m("slice-stall-counts-refused-offers", _SLICE, "stall_cycles.increment.eq(trigger.stall)",
       "stall_cycles.increment.eq(self.gpu.req.valid & ~self.gpu.req.ready)", SLICE_COUNTERS),
    _m("slice-stall-counts-held-requests-only", _SLICE, "stall_cycles.increment.eq(trigger.stall)",
       "stall_cycles.increment.eq(trigger.gpu.req.valid & ~trigger.gpu.req.ready & trigger.stall)",
       SLICE_COUNTERS),
    _m("slice-event-count-one-per-cycle", _SLICE, "event_count.increment.eq(trigger.produced)",
       "event_count.increment.eq(trigger.produced.any())", SLICE_COUNTERS),
    _m("slice-end-from-stored-size", _SLICE, "                       Cat(storage.data for storage in size)),",
       "                       Cat(storage.data for storage in size[:-1])),", SLICE),
    _m("slice-hit-done-bound", _SLICE, "(hits.count >= expected)", "(hits.count > expected)", SLICE),
    _m("slice-irq-ignores-enable", _SLICE, "self.irq.eq((complete & irq_enable).any())",
       "self.irq.eq(complete.any())", SLICE),
    # --- field behaviours --------------------------------------------------------------------
    _m("counter-load-adds", _ACTION, "m.d.sync += self.count.eq(self.port.w_data)",
       "m.d.sync += self.count.eq(self.port.w_data + pending)", BUS),
    _m("counter-skips-register-stage", _ACTION, "self.count.eq(self.count + pending)",
       "self.count.eq(self.count + self.increment)", BUS),
    _m("sticky-clear-wins", _ACTION, "self.flags.eq((self.flags & ~cleared) | self.set)",
       "self.flags.eq((self.flags | self.set) & ~cleared)", BUS),
    _m("sticky-not-sticky", _ACTION, "self.flags.eq((self.flags & ~cleared) | self.set)",
       "self.flags.eq(self.set)", BUS),
    _m("clearable-clear-unstrobed", _ACTION, "self.clear.eq(Mux(self.port.w_stb, self.port.w_data, 0))",
       "self.clear.eq(self.port.w_data)", BUS),
    # --- the register file -------------------------------------------------------------------
    _m("registers-write-field-shift", _REGISTERS,
       "m.d.comb += stored.next.eq(data[field.lsb:][:field.width])",
       "m.d.comb += stored.next.eq(data[field.lsb + 1:][:field.width])", BUS),
    _m("registers-read-field-shift", _REGISTERS,
       "value |= field_logic(register, field, write, w_data) << field.lsb",
       "value |= field_logic(register, field, write, w_data)", BUS),
    _m("registers-write-ignores-select", _REGISTERS,
       "write.eq(writing_late & (offset == register_offset))", "write.eq(writing_late & 1)", BUS),
    _m("registers-write-strobe-early", _REGISTERS,
       "write.eq(writing_late & (offset == register_offset))",
       "write.eq(writing & (offset == register_offset))", BUS),
    _m("registers-misaligned-accepted", _REGISTERS, "in_block.eq(aligned & (", "in_block.eq((", BUS),
    _m("registers-read-only-writable", _REGISTERS,
       "refused.eq((reading | writing) & (~present | (writing & read_only)))",
       "refused.eq((reading | writing) & ~present)", BUS),
    _m("registers-ack-reads-only", _REGISTERS, "accessed.eq(access)", "accessed.eq(bus.r_en)", BUS),
    _m("registers-read-data-on-write", _REGISTERS,
       "select.eq(reading & (offset == register_offset))",
       "select.eq((reading | writing) & (offset == register_offset))", BUS),
    _m("registers-read-select-ignores-offset", _REGISTERS,
       "select.eq(reading & (offset == register_offset))", "select.eq(reading)", BUS),
    _m("registers-action-strobe-unselected", _REGISTERS, "port.w_stb.eq(write)",
       "port.w_stb.eq(writing)", BUS),
    # --- the bus decoder ---------------------------------------------------------------------
    _m("decoder-window-ignores-rules", _DECODER,
       "allowed = ((bus.r_en if window.readable else 0) |\n"
       "                                   (bus.w_en if window.writable else 0))",
       "allowed = bus.r_en | bus.w_en", BUS),
    _m("decoder-misaligned-window", _DECODER, "+ \"0\" * _WORD_OFFSET_BITS", "+ \"-\" * _WORD_OFFSET_BITS",
       BUS),
    _m("decoder-late-answer-heard", _DECODER, "answered = pending[index] & target.ack",
       "answered = target.ack", BUS),
    _m("decoder-refusal-forgotten", _DECODER, "refused.eq(selected == 0)", "refused.eq(0)", BUS),
    # --- stream parts ------------------------------------------------------------------------
    _m("spill-ready-while-full", _STREAM, "self.i.ready.eq(~full | self.o.ready)",
       "self.i.ready.eq(1)", STREAM),
    _m("spill-register-passed-over", _STREAM, "self.o.payload.eq(Mux(full, spill, self.i.payload))",
       "self.o.payload.eq(self.i.payload)", STREAM),
    _m("slice-ready-when-full", _STREAM, "self.i.ready.eq(~self.o.valid | self.o.ready)",
       "self.i.ready.eq(self.o.ready)", STREAM),
    _m("slice-payload-every-cycle", _STREAM, "with m.If(self.i.valid & self.i.ready):\n"
       "            m.d.sync += self.o.payload.eq(self.i.payload)",
       "with m.If(self.i.ready):\n            m.d.sync += self.o.payload.eq(self.i.payload)", STREAM),
    _m("ring-separate-ready-a-cycle-late", _STREAM, "m.d.sync += ready.eq(next_room)",
       "m.d.sync += ready.eq(room)", STREAM),
    _m("skid-ready-ignores-skid", _STREAM, "m.d.comb += self.i.ready.eq(~skid_full)",
       "m.d.comb += self.i.ready.eq(~skid_full | self.o.ready)", STREAM),
    _m("skid-drops-skid", _STREAM, "Mux(full, skid_bits, Value.cast(self.i.payload)[bits])",
       "Mux(0, skid_bits, Value.cast(self.i.payload)[bits])", STREAM),
    _m("skid-register-overwritten-while-full", _STREAM,
       "with m.If(~full):\n                m.d.sync += skid_bits.eq(",
       "with m.If(1):\n                m.d.sync += skid_bits.eq(", STREAM),
    _m("skid-copy-stuck", _STREAM, "m.d.sync += [full.eq(next_skid_full), offering.eq(next_valid)]",
       "m.d.sync += [full.eq(full), offering.eq(next_valid)]", STREAM),
    _m("queue-read-position-stuck", _STREAM,
       "Mux(self.o.ready, state[\"reads_at\"] + stored[0],",
       "Mux(self.o.ready, state[\"reads_at\"],", STREAM),
    _m("pingpong-loads-while-full", _STREAM, "loads = write_turn & ~full", "loads = write_turn", STREAM),
    _m("pingpong-read-turn-stuck", _STREAM, "next_read_turn = _moved_on(read_turn, pop)",
       "next_read_turn = read_turn", STREAM),
    _m("ring-turn-copy-stuck", _STREAM, "m.d.sync += [turn.eq(_moved_on(turn, pop)),",
       "m.d.sync += [turn.eq(turn),", STREAM),
    _m("ring-load-copy-ignores-full", _STREAM, "load = filling & ~full", "load = filling", STREAM),
    _m("ring-write-turn-skips-last", _STREAM, "return Mux(step, Cat(turn[-1], turn[:-1]), turn)",
       "return Mux(step, Cat(turn[-2], turn[-1], turn[:-2]), turn)", STREAM),
    _m("ring-fill-side-loads-ignore-full", _STREAM, "return _moved_on(turn, push) & ~full",
       "return _moved_on(turn, push)", STREAM),
    _m("ring-fill-side-ready-from-fullness", _STREAM,
       "next_room = loads_after(write_turn).any()", "next_room = ~full.all()", STREAM),
    _m("ring-registered-head-stale", _STREAM,
       "self.next_head[position].eq(one_hot_select(next_read_turn, held_next))",
       "self.next_head[position].eq(one_hot_select(read_turn, held_next))", STREAM),
    _m("ring-write-copy-stuck", _STREAM, "filling.eq(_moved_on(filling, push))]",
       "filling.eq(filling)]", STREAM),
    _m("merge-registered-choice-moves-while-waiting", _STREAM,
       "Mux((self.o.valid & ~self.o.ready) | ~candidates.any(),",
       "Mux(~candidates.any(),", STREAM),
    _m("merge-registered-no-rotation", _STREAM,
       "candidates = Mux(preferred.any(), preferred, waiting)", "candidates = waiting", STREAM),
    _m("merge-registered-copy-stuck", _STREAM, "m.d.sync += chooser.eq(next_grant)",
       "m.d.sync += chooser.eq(chooser)", STREAM),
    _m("pingpong-ready-when-one-free", _STREAM, "next_room = ~next_full.all()",
       "next_room = ~next_full.any()", STREAM),
    _m("queue-depth-off-by-one", _STREAM,
       "(next_offering & (next_stored[depth - 2] if depth > 1 else 1))",
       "(0 & (next_stored[depth - 2] if depth > 1 else 1))", STREAM),
    _m("queue-count-ignores-simultaneous", _STREAM, "Mux(push & ~pop, one_more, Mux(pop & ~push,",
       "Mux(push, one_more, Mux(pop,", STREAM),
    _m("merge-choice-not-held", _STREAM, "grant.eq(Mux(held, held_grant, first_one(candidates)))",
       "grant.eq(first_one(candidates))", STREAM),
    _m("merge-no-rotation", _STREAM, "candidates = Mux(preferred.any(), preferred, eligible)",
       "candidates = eligible", STREAM),
    _m("merge-after-last-includes-last", _STREAM, "after_last[index].eq(last[:index].any())",
       "after_last[index].eq(last[:index + 1].any())", STREAM),
    _m("onehot-first-one-keeps-all", _ONEHOT, "bits[index] & ~bits[:index].any() if index else bits[0]",
       "bits[index] if index else bits[0]", (*STREAM, *TRIGGER)),
    _m("onehot-index-bit", _ONEHOT, "if (index >> bit) & 1]", "if (index >> bit) & 1 and index != 1]",
       (*STREAM, *TRIGGER)),
    # --- the arbiter -------------------------------------------------------------------------
    _m("arbiter-share-off-by-one", _ARBITER, "share_due.eq(waited == period - 1)",
       "share_due.eq(waited == period)", ARBITER),
    _m("arbiter-choice-not-held", _ARBITER, "choose_ndp = Mux(held, held_ndp, fresh_ndp)",
       "choose_ndp = fresh_ndp", ARBITER),
    _m("arbiter-engine-wins", _ARBITER, "fresh_ndp = ndp.req.valid & (~gpu.req.valid | share_due)",
       "fresh_ndp = ndp.req.valid", ARBITER),
    _m("arbiter-response-route-bit", _ARBITER, "to_ndp = mem.resp.payload.id[source_bit]",
       "to_ndp = mem.resp.payload.id[0]", ARBITER),
    _m("arbiter-engine-id-bit", _ARBITER, "Cat(ndp.req.payload.id, 1)", "Cat(ndp.req.payload.id, 0)",
       ARBITER),
    _m("arbiter-waited-not-reset", _ARBITER, "m.d.sync += waited.eq(0)", "m.d.sync += waited.eq(waited)",
       ARBITER),
    _m("arbiter-slot-without-gpu", _ARBITER,
       "self.ndp_slot.eq(ndp.req.valid & ndp.req.ready & gpu.req.valid)",
       "self.ndp_slot.eq(ndp.req.valid & ndp.req.ready)", ARBITER),
    _m("arbiter-gpu-response-ready", _ARBITER, "mem.resp.ready.eq(Mux(to_ndp, 1, gpu.resp.ready))",
       "mem.resp.ready.eq(1)", ARBITER),
    # --- FP: shared building blocks and the back end -----------------------------------------
    _m("fp-sticky-lost-below-range", _ROUNDING, "\"sticky\": (below_range & a[\"right_lost\"]) | a[\"sticky\"]",
       "\"sticky\": a[\"sticky\"]", FP_MUL,
       note="the bits a tiny product loses on its way into the subnormal range"),
    _m("fp-below-range-bound", _ROUNDING, "below_range = a[\"exponent\"].as_signed() < 1",
       "below_range = a[\"exponent\"].as_signed() < 0", FP_ROUNDED),
    _m("fp-zero-sign", _ROUNDING, "\"sign\": Mux(significand == 0, zero_sign, sign)", "\"sign\": sign",
       FP_ROUNDED),
    _m("fp-round-ties-away", _FLOAT, "increment = guard & (below | kept[0])", "increment = guard",
       FP_ROUNDED),
    _m("fp-round-ignores-sticky", _FLOAT, "below = significand[:width - PRECISION - 1].any() | sticky",
       "below = significand[:width - PRECISION - 1].any()", FP_ROUNDED),
    _m("fp-overflow-bound", _FLOAT, "overflow = hidden & (exponent >= EXPONENT_MAX)",
       "overflow = hidden & (exponent > EXPONENT_MAX)", FP_ROUNDED),
    _m("fp-subnormal-exponent-field", _FLOAT, "field = Mux(hidden, exponent[:EXPONENT_BITS], 0)",
       "field = exponent[:EXPONENT_BITS]", FP_ROUNDED),
    _m("fp-unpack-subnormal-exponent", _FLOAT, "unpacked.exponent.eq(Mux(exponent_zero, 1, fields.exponent))",
       "unpacked.exponent.eq(fields.exponent)", FP_ROUNDED),
    _m("fp-unpack-nan-as-inf", _FLOAT, "unpacked.inf.eq(exponent_ones & fraction_zero)",
       "unpacked.inf.eq(exponent_ones)", FP_ROUNDED),
    _m("fp-sticky-shift-mask", _FLOAT, "lost_positions = Mux(everything, all_ones, ~(all_ones << low)[:width])",
       "lost_positions = Mux(everything, all_ones, ~(all_ones << (low + 1))[:width])", FP_ROUNDED),
    _m("fp-sticky-shift-everything", _FLOAT, "return Mux(everything, 0, (value >> low)[:width])",
       "return Mux(everything, value, (value >> low)[:width])", FP_ROUNDED),
    _m("fp-leading-zeros-half", _FLOAT, "Mux(high_zero, Cat(low_count, 1), Cat(high_count, 0))",
       "Mux(high_zero, Cat(low_count, 0), Cat(high_count, 0))", FP_ROUNDED),
    _m("fp-subnormal-limit-room", _FLOAT, "room = (Value.cast(exponent).as_signed() - 1).as_signed()",
       "room = (Value.cast(exponent).as_signed() - 2).as_signed()", FP_ROUNDED),
    _m("fp-right-shift-amount", _FLOAT, "return (1 - exponent).as_unsigned()[:len(exponent)]",
       "return (-exponent).as_unsigned()[:len(exponent)]", FP_ROUNDED),
    _m("fp-left-shift-exponent", _FLOAT, "Mux(below_range, 1, exponent - left_shift).as_signed())",
       "Mux(below_range, 1, exponent - left_shift + 1).as_signed())", FP_ROUNDED),
    # --- FP: add/subtract --------------------------------------------------------------------
    _m("add-swap-bound", "hw/fp/addsub.py", "swap = record.b[:31] > record.a[:31]",
       "swap = record.b[:30] > record.a[:30]", FP_ADD),
    _m("add-sub-op-ignored", "hw/fp/addsub.py", "record.b[31] ^ (record.op == AddSubOp.SUB)",
       "record.b[31]", FP_ADD),
    _m("add-zero-sign", "hw/fp/addsub.py", "\"zero_sign\": a.sign & b.sign,", "\"zero_sign\": a.sign,",
       FP_ADD),
    _m("add-inf-minus-inf", "hw/fp/addsub.py", "nan = a.nan | b.nan | (a.inf & b.inf & subtract)",
       "nan = a.nan | b.nan", FP_ADD),
    _m("add-alignment-sticky", "hw/fp/addsub.py", "\"small\": Cat(shifted[0] | lost, shifted[1:]),",
       "\"small\": shifted,", FP_ADD),
    # --- FP: multiply ------------------------------------------------------------------------
    _m("mul-exponent-bias", "hw/fp/multiply.py", "(a.exponent + b.exponent - BIAS + 1).as_signed()",
       "(a.exponent + b.exponent - BIAS).as_signed()", FP_MUL),
    _m("mul-carry-save-carries", "hw/fp/multiply.py", "carries = ((x & y) | (x & z) | (y & z)) << 1",
       "carries = ((x & y) | (x & z) | (y & z))", FP_MUL),
    _m("mul-inf-times-zero", "hw/fp/multiply.py", "nan = a.nan | b.nan | (a.inf & b.zero) | (a.zero & b.inf)",
       "nan = a.nan | b.nan | (a.inf & b.zero)", FP_MUL),
    _m("mul-partial-split", "hw/fp/multiply.py", "\"hl\": x[_SPLIT:] * y[:_SPLIT]",
       "\"hl\": x[_SPLIT:] * y[:_SPLIT - 1]", FP_MUL),
    # --- FP: fused multiply-add --------------------------------------------------------------
    _m("fma-addend-on-top-bound", "hw/fp/fma.py", "addend_on_top = (shift < 0) | s1[\"product_zero\"]",
       "addend_on_top = (shift <= 0) | s1[\"product_zero\"]", FP_FMA),
    _m("fma-addend-sticky", "hw/fp/fma.py", "\"addend\": Cat(shifted[0] | lost, shifted[1:]),",
       "\"addend\": shifted,", FP_FMA),
    _m("fma-product-sticky", "hw/fp/fma.py", "Mux(s2[\"addend_on_top\"], ~s2[\"product_zero\"],",
       "Mux(s2[\"addend_on_top\"], 0,", FP_FMA),
    _m("fma-zero-sign", "hw/fp/fma.py", "\"zero_sign\": s3[\"product_sign\"] & s3[\"addend_sign\"],",
       "\"zero_sign\": s3[\"product_sign\"],", FP_FMA),
    _m("fma-larger-sign", "hw/fp/fma.py",
       "\"sign\": Mux(subtract & addend_larger, s3[\"addend_sign\"], s3[\"product_sign\"]),",
       "\"sign\": Mux(addend_larger, s3[\"addend_sign\"], s3[\"product_sign\"]),", FP_FMA,
       equivalent="without a subtraction the product and the addend have the same sign, so "
                  "which of the two is taken cannot matter"),
    _m("fma-inf-minus-inf", "hw/fp/fma.py", "| (product_inf & c.inf & (product_sign ^ c.sign)))",
       ")", FP_FMA),
    # --- FP: the one-cycle units, division and square root -----------------------------------
    _m("compare-zeros-unequal", "hw/fp/compare.py", "equal = ordered & ((record.a == record.b) | both_zero)",
       "equal = ordered & (record.a == record.b)", FP_COMPARE),
    _m("compare-negative-order", "hw/fp/compare.py", "Mux(a[31], ~magnitude_below & ~magnitude_equal, magnitude_below)",
       "Mux(a[31], ~magnitude_below, magnitude_below)", (*FP_COMPARE,)),
    _m("compare-le-is-lt", "hw/fp/compare.py", "Mux(record.op == CompareOp.LE, less | equal, 0)",
       "Mux(record.op == CompareOp.LE, less, 0)", FP_COMPARE),
    _m("minmax-nan-passes", "hw/fp/minmax.py", "value = Mux(a.nan | b.nan, CANONICAL_NAN,",
       "value = Mux(a.nan, CANONICAL_NAN,", FP_MINMAX),
    _m("minmax-max-is-min", "hw/fp/minmax.py",
       "take_a = Mux(selects(record.op, MinMaxOp.MAX), ~a_below_b, a_below_b)", "take_a = a_below_b",
       FP_MINMAX),
    _m("sign-abs-keeps-sign", "hw/fp/sign.py", "sign = Mux(selects(record.op, SignOp.NEG), ~record.a[31], 0)",
       "sign = Mux(selects(record.op, SignOp.NEG), ~record.a[31], record.a[31])", FP_SIGN),
    _m("convert-round-half-up", "hw/fp/convert.py", "rounded = (record.a + 0x7FFF + record.a[16])[16:32]",
       "rounded = (record.a + 0x8000)[16:32]", FP_CONVERT),
    _m("convert-widen-nan-kept", "hw/fp/convert.py", "widened_value = Mux(widened.nan, CANONICAL_NAN, widened_bits)",
       "widened_value = widened_bits", FP_CONVERT),
    _m("convert-tie-bit", "hw/fp/convert.py", "rounded = (record.a + 0x7FFF + record.a[16])[16:32]",
       "rounded = (record.a + 0x7FFF + record.a[15])[16:32]", FP_CONVERT),
    _m("compare-magnitude-bits", "hw/fp/compare.py", "magnitude_below = a[0:31] < b[0:31]",
       "magnitude_below = a[0:30] < b[0:30]", FP_COMPARE),
    _m("select-mask-bit", "hw/fp/select.py", "value = Mux(record.c[0], record.a, record.b)",
       "value = Mux(record.c[1], record.a, record.b)", FP_SELECT),
    _m("divide-carry-bit", "hw/fp/divide.py", "fits = total[PRECISION + 1]", "fits = total[PRECISION]",
       FP_DIVIDE),
    _m("divide-keeps-remainder", "hw/fp/divide.py", "Mux(fits, total, remainder)[:PRECISION]",
       "Mux(fits, total, remainder)[:PRECISION - 1]", FP_DIVIDE),
    _m("divide-divisor-shift", "hw/fp/divide.py", "(s1[\"negated_b\"] << s1[\"b_shift\"])",
       "(s1[\"negated_b\"] << s1[\"a_shift\"])", FP_DIVIDE),
    _m("divide-normal-range-bound", "hw/fp/divide.py", "values[\"normal_range\"] = exponent >= 2",
       "values[\"normal_range\"] = exponent >= 1", FP_DIVIDE),
    _m("divide-subnormal-shift", "hw/fp/divide.py", "_SHIFT_SATURATED, (2 - exponent)[:5])",
       "_SHIFT_SATURATED, (1 - exponent)[:5])", FP_DIVIDE),
    _m("divide-remainder-not-sticky", "hw/fp/divide.py", "\"sticky\": lost | (stage[\"remainder\"] != 0),",
       "\"sticky\": lost,", FP_DIVIDE),
    _m("divide-exponent-below-one", "hw/fp/divide.py",
       "Mux(stage[\"normal_range\"], stage[\"exponent\"] - below_one, 1)",
       "Mux(stage[\"normal_range\"], stage[\"exponent\"], 1)", FP_DIVIDE),
    _m("divide-by-infinity-not-zero", "hw/fp/divide.py", "\"zero\": a.zero | b.inf,", "\"zero\": a.zero,",
       FP_DIVIDE),
    _m("sqrt-carry-bit", "hw/fp/sqrt.py", "fits = total[len(extended)]", "fits = total[len(extended) - 1]",
       FP_SQRT),
    _m("sqrt-trial-low-bits", "hw/fp/sqrt.py", "Cat(Const(0b11, 2), inverted_root,",
       "Cat(Const(0b10, 2), inverted_root,", FP_SQRT),
    _m("sqrt-remainder-width", "hw/fp/sqrt.py", "Mux(fits, total, extended)[:step + 2]",
       "Mux(fits, total, extended)[:step + 1]", FP_SQRT),
    _m("sqrt-exponent-parity", "hw/fp/sqrt.py", "odd = ~(s1[\"exponent\"][0] ^ s1[\"shift\"][0])",
       "odd = s1[\"exponent\"][0] ^ s1[\"shift\"][0]", FP_SQRT),
    _m("sqrt-halved-exponent", "hw/fp/sqrt.py", "+ BIAS - stage[\"odd\"])", "+ BIAS + stage[\"odd\"])",
       FP_SQRT),
    _m("sqrt-remainder-not-sticky", "hw/fp/sqrt.py", "~inverted_root, remainder != 0)", "~inverted_root, 0)",
       FP_SQRT),
    # --- the engine --------------------------------------------------------------------------
    _m("alu-sra-logical", "hw/engine/alu.py", "value.eq(a.as_signed() >> amount)", "value.eq(a >> amount)",
       ENGINE_ALU),
    _m("alu-slt-unsigned", "hw/engine/alu.py", "value.eq(a.as_signed() < b.as_signed())", "value.eq(a < b)",
       ENGINE_ALU),
    _m("alu-shift-amount-bits", "hw/engine/alu.py", "amount = b[:6]", "amount = b[:5]", ENGINE_ALU),
    _m("vdivide-vdiv-overtakes", _VDIVIDE, "no_reciprocals = reciprocals_in_roots == 0",
       "no_reciprocals = 1", ENGINE_DIVIDE),
    _m("vdivide-leaving-not-counted", _VDIVIDE, "reciprocals_in_roots + entering - leaving)",
       "reciprocals_in_roots + entering)", ENGINE_DIVIDE),
    _m("vdivide-rsqrt-not-forwarded", _VDIVIDE, "flags.w_data.eq(reciprocal),", "flags.w_data.eq(0),",
       ENGINE_DIVIDE),
    _m("vdivide-rsqrt-collected-from-roots", _VDIVIDE, "Cat(current.slot, ~dividing & ~reciprocal)",
       "Cat(current.slot, ~dividing)", ENGINE_DIVIDE),
    # The groups of lanes, shared by the divide unit and the FMA lanes; the shared divider's
    # tests found these when the logic was the divide unit's own.
    _m("vdivide-taken-with-its-last-group", _LANE_GROUPS,
       "self.request.ready.eq(~self.holding & self.start_room & takes)",
       "self.request.ready.eq(self.last & self.start_room & takes)", ENGINE_DIVIDE),
    _m("vdivide-later-groups-from-the-offer", _LANE_GROUPS,
       "Mux(self.holding, self.held.as_value(),", "Mux(0, self.held.as_value(),", ENGINE_DIVIDE),
    _m("vdivide-last-group", _LANE_GROUPS, "self.last = self.group == passes - 1", "self.last = self.group == 0",
       ENGINE_DIVIDE),
    _m("vdivide-collected-early", _LANE_GROUPS, "self.finished = self.group == passes - 1",
       "self.finished = self.group == 0", ENGINE_DIVIDE),
    _m("vdivide-overwrites-offered-result", _LANE_GROUPS, "self.room = ~self.complete | result.ready", "self.room = 1",
       ENGINE_DIVIDE),
    _m("reduce-pairs-a-lane-with-itself", "hw/engine/reduce.py",
       "unit.operands.payload.b.eq(inputs[2 * index + 1])",
       "unit.operands.payload.b.eq(inputs[2 * index])", ENGINE_UNITS),
    _m("reduce-max-is-sum", "hw/engine/reduce.py",
       "summing = request.opcode == Opcode.VREDSUM", "summing = request.opcode == request.opcode",
       ENGINE_UNITS),
    _m("reduce-result-from-the-wrong-tree", "hw/engine/reduce.py",
       "head_summing = slots.r_data[-1]", "head_summing = summing", ENGINE_UNITS),
    _m("serial-reduce-last-pair-bound", "hw/engine/serial_reduce.py",
       "with m.If(received == pairs - 1):", "with m.If(received == pairs):", ENGINE_UNITS),
    _m("serial-reduce-first-level-pairs", "hw/engine/serial_reduce.py", "pairs.eq(lanes // 2)",
       "pairs.eq(lanes // 4)", ENGINE_UNITS),
    _m("serial-reduce-halving", "hw/engine/serial_reduce.py", "pairs.eq(pairs >> 1)",
       "pairs.eq(pairs - 1)", ENGINE_UNITS),
    # the scoreboard: a µthread's next instruction issued too early
    _m("scoreboard-vector-reads-unchecked", _SCOREBOARD,
       "((need.vector & busy.vector) == 0)", "1", ENGINE_SCOREBOARD),
    _m("scoreboard-scalar-reads-unchecked", _SCOREBOARD,
       "clear = ((need.scalar & busy.scalar) == 0)", "clear = 1", ENGINE_SCOREBOARD),
    _m("scoreboard-destination-unchecked", _SCOREBOARD,
       "_register_bits(control.rd_type, control.rd, OperandClass.VECTOR)),",
       "0),", ENGINE_SCOREBOARD),
    _m("scoreboard-second-memory-access", _SCOREBOARD,
       "~(need.memory & busy.memory)", "1", ENGINE_SCOREBOARD),
    _m("scoreboard-exit-before-drain", _SCOREBOARD, "~need.drain &", "", ENGINE_SCOREBOARD),
    _m("scoreboard-limit-off-by-one", _SCOREBOARD, "(count < limit))", "(count <= limit))",
       ENGINE_SCOREBOARD),
    _m("scoreboard-answer-clears-nothing", _SCOREBOARD,
       "m.d.sync += pending[slot].eq((now & ~clear_bits) | set_bits)",
       "m.d.sync += pending[slot].eq(now | set_bits)", ENGINE_SCOREBOARD),
    _m("scoreboard-lookahead-a-cycle-early", _SCOREBOARD,
       "m.d.sync += [looking.eq(self.lookahead_valid), looking_slot.eq(self.lookahead_slot)]",
       "m.d.comb += [looking.eq(self.lookahead_valid), looking_slot.eq(self.lookahead_slot)]",
       ENGINE_SCOREBOARD),
    # DISPATCH and WRITE-BACK: where instructions in flight and ending µthreads go
    _m("dispatch-frees-with-instructions-in-flight", _DISPATCH,
       "frees_now = completes_here & idle if looks_ahead else 1",
       "frees_now = completes_here if looks_ahead else 1", ENGINE_DISPATCH),
    _m("dispatch-ends-with-instructions-in-flight", _DISPATCH,
       "                with m.If(idle):\n                    m.d.comb += self.end.eq(slot_bit)",
       "                with m.If(1):\n                    m.d.comb += self.end.eq(slot_bit)", ENGINE_DISPATCH),
    _m("dispatch-no-room-ignored", _DISPATCH,
       "unit_ready.eq(request.ready & self.room[position])", "unit_ready.eq(request.ready)",
       ENGINE_DISPATCH),
    _m("check-watchdog-a-cycle-late", _CHECK,
       "age_at_dispatch.eq(self.age[self.slot] + 1)", "age_at_dispatch.eq(self.age[self.slot])",
       ENGINE_CHECK),
    _m("check-window-end-exclusive-of-the-sector", _CHECK,
       "sector_before_end = sign_of(imm + config.sector_bytes - 1 - self.window_end)",
       "sector_before_end = sign_of(imm - 1 - self.window_end)", ENGINE_CHECK),
    _m("check-window-end-a-byte-short", _CHECK,
       "sign_of(imm + config.sector_bytes - 1 - self.window_end)",
       "sign_of(imm + config.sector_bytes - self.window_end)", ENGINE_CHECK),
    _m("check-window-base-a-byte-high", _CHECK,
       "at_or_above_base = ~sign_of(imm - self.window_base)",
       "at_or_above_base = ~sign_of(imm - self.window_base - 1)", ENGINE_CHECK),
    _m("check-window-compared-in-too-few-bits", _CHECK,
       "width = config.addr_width + 2", "width = config.addr_width + 1", ENGINE_CHECK),
    _m("check-wide-window-end-exclusive-of-the-sector", _CHECK,
       "sector_before_end = address + config.sector_bytes <= self.window_end",
       "sector_before_end = address < self.window_end", ENGINE_CHECK),
    _m("writeback-ends-before-the-pipeline-empties", _WRITEBACK,
       "ahead = bit(self.in_pipe) & ~bit(self.decided)", "ahead = 0", ENGINE_WRITEBACK),
    _m("writeback-ends-before-the-last-answer", _WRITEBACK,
       "with m.If(finishing & bit(self.last) & ~ahead):", "with m.If(finishing & ~ahead):",
       ENGINE_WRITEBACK),
    _m("writeback-destination-queue-not-popped", _WRITEBACK,
       "queue.r_en.eq(merge.i[position].valid & merge.i[position].ready),",
       "queue.r_en.eq(merge.i[position].valid),", ENGINE_WRITEBACK),
    _m("slots-dying-still-picked", _SLOTS,
       "active & ~busy & ~self.exit_pending & ~self.dying & self.ready",
       "active & ~busy & ~self.exit_pending & self.ready", ENGINE_SLOTS),
    # the spawner and the entry control
    _m("spawner-events-before-helpers", "hw/engine/spawner.py", "helper_goes = helper_waiting & ~yield_to_event",
       "helper_goes = helper_waiting & ~self.events.valid", ENGINE_SPAWNER),
    _m("spawner-taken-without-a-slot", "hw/engine/spawner.py", "self.events.ready.eq(found),",
       "self.events.ready.eq(1),", ENGINE_SPAWNER),
    _m("spawner-stopped-entry-not-drained", "hw/engine/spawner.py",
       "with m.If(self.stopped.bit_select(entry, 1)):", "with m.If(0):", ENGINE_SPAWNER),
    _m("dispatch-pipelined-turn-ignored", "hw/engine/pipeline/dispatch.py",
       "needs_turn, turn_ok = record.needs_turn, record.turn_ok",
       "needs_turn, turn_ok = record.needs_turn, 1", ENGINE_DISPATCH),
    _m("operands-stop-of-the-slot-not-the-entry", "hw/engine/pipeline/operands.py",
       "out.entry_stopped.eq(self.stopped.bit_select(entry, 1))",
       "out.entry_stopped.eq(self.stopped.bit_select(record.slot, 1))",
       ("tests/hw/engine/pipeline/test_operands.py",)),
    _m("turn-checks-ignore-the-queued-atomics", "hw/engine/pipeline/check.py",
       "has_turn = (turn[entry] == seq) & ~holding.bit_select(slot, 1)",
       "has_turn = (turn[entry] == seq)", ENGINE_CHECK),
    _m("spawner-told-helper-started-again", "hw/engine/spawner.py",
       "            helpers &= ~helper_told\n", "\n", ENGINE_SPAWNER),
    _m("spawner-told-main-numbered-again", "hw/engine/spawner.py",
       "main_seq += self.spawned & (self.spawned_kind == ThreadKind.MAIN)",
       "main_seq += 0 & (self.spawned_kind == ThreadKind.MAIN)", ENGINE_SPAWNER),
    _m("entries-reached-one-late", "hw/engine/entries.py",
       "(completed_next >= config_e.expected)", "(completed_next > config_e.expected)",
       ENGINE_ENTRIES),
    _m("entries-error-overwrites-first", "hw/engine/entries.py",
       "with m.If(self.error_valid[port] & (~self.error_recorded | self.clear_error)):",
       "with m.If(self.error_valid[port]):", ENGINE_ENTRIES),
    _m("entries-run-after-the-first-initializer-thread", "hw/engine/entries.py",
       "with m.If((init_ended_next == init_threads) & stored):",
       "with m.If((init_ended_next != 0) & stored):",
       ENGINE_ENTRIES),
    _m("entries-failed-main-counts", "hw/engine/entries.py",
       "(self.retire[port].kind == ThreadKind.MAIN) & ~self.retire[port].error",
       "(self.retire[port].kind == ThreadKind.MAIN)", ENGINE_ENTRIES),
    # the load/store unit's queue of memory operations
    _m("load-store-overtakes-the-waiting-ops", "hw/engine/load_store.py",
       "direct = register_free & (waiting.level == 0)", "direct = register_free", ENGINE_LOAD_STORE),
    _m("load-store-refused-op-queued", "hw/engine/load_store.py",
       "waiting.i.valid.eq(self.ops.valid & offered_legal & ~direct),",
       "waiting.i.valid.eq(self.ops.valid & ~direct),", ENGINE_LOAD_STORE),
    _m("load-store-queue-head-dropped", "hw/engine/load_store.py",
       "take = Mux(waiting.o.valid, 1, self.ops.valid & offered_legal & direct)",
       "take = Mux(waiting.o.valid, 0, self.ops.valid & offered_legal & direct)", ENGINE_LOAD_STORE),
    _m("load-store-marks-posted-stores", "hw/engine/load_store.py",
       "store_mark.valid.eq(accepted & request.payload.write & ~request_posted),",
       "store_mark.valid.eq(accepted & request.payload.write),", ENGINE_LOAD_STORE),
    _m("load-store-stored-before-the-port-takes-it", "hw/engine/load_store.py",
       "self.stored_valid.eq(accepted & request_posted),",
       "self.stored_valid.eq(request.valid & request_posted),", ENGINE_LOAD_STORE),
    _m("stream-deferred-inputs-not-deferred", _STREAM, "undeferred = offering & ~mask",
       "undeferred = offering", STREAM),
    _m("writeback-completions-not-deferred", _WRITEBACK,
       "if name in SHARED_UNITS.values()])", "if False])", ENGINE_WRITEBACK),
    # memory first
    _m("pick-ignores-the-preference", "hw/engine/pipeline/pick.py",
       "candidates.eq(Mux(preferred.any(), preferred, self.eligible))",
       "candidates.eq(self.eligible)", ENGINE_PICK),
    _m("pick-prefers-ineligible-slots", "hw/engine/pipeline/pick.py",
       "preferred.eq(self.eligible & self.prefer)", "preferred.eq(self.prefer)", ENGINE_PICK),
    _m("scoreboard-memory-next-of-the-op-in-flight", _SCOREBOARD,
       "self.memory_next[slot].eq(need.memory)", "self.memory_next[slot].eq(busy.memory)",
       ENGINE_SCOREBOARD),
    _m("load-store-room-while-full", "hw/engine/load_store.py",
       "self.room.eq(waiting.i.ready),", "self.room.eq(1),", ENGINE_LOAD_STORE),
    # posted stores
    _m("dispatch-posts-every-memory-op", _DISPATCH,
       "posted_store = (ctl.unit == UnitCode.MEMORY) & store if",
       "posted_store = (ctl.unit == UnitCode.MEMORY) if", ENGINE_DISPATCH),
    _m("posted-stores-pending-misses-this-cycle-s", "hw/engine/posted_stores.py",
       "self.pending[entry].eq((count != 0) | sent)", "self.pending[entry].eq(count != 0)",
       ENGINE_POSTED_STORES),
    _m("posted-stores-count-only-goes-up", "hw/engine/posted_stores.py",
       "with m.Elif(stored & ~sent):", "with m.Elif(0):", ENGINE_POSTED_STORES),
    _m("entries-initializer-ends-with-stores-on-their-way", "hw/engine/entries.py",
       "with m.If((init_ended_next == init_threads) & stored):",
       "with m.If(init_ended_next == init_threads):", ENGINE_ENTRIES),
    _m("entries-finalizer-starts-with-stores-on-their-way", "hw/engine/entries.py",
       "with m.If(reached & ~finalized & stored):", "with m.If(reached & ~finalized):",
       ENGINE_ENTRIES),
    _m("entries-complete-with-stores-on-their-way", "hw/engine/entries.py",
       "with m.If((final_ended_next == final_threads) & stored):",
       "with m.If(final_ended_next == final_threads):", ENGINE_ENTRIES),
    # the ordering station
    _m("ordering-ignores-the-turn", _ORDERING, "(head.seq == self.turn[head.entry])",
       "(head.seq == head.seq)", ENGINE_ORDERING),
    _m("ordering-turn-moves-on-any-pick", _ORDERING,
       "picked_release = pick_valid & picked_tag.release & (picked_tag.entry == entry)",
       "picked_release = pick_valid & (picked_tag.entry == entry)", ENGINE_ORDERING),
    _m("ordering-straight-overtakes-queued", _ORDERING,
       "straight_offered = ~op.ordered & ~self.holding.bit_select(op.thread, 1)",
       "straight_offered = ~op.ordered", ENGINE_ORDERING),
    _m("ordering-offered-op-changes-while-held", _ORDERING,
       "queued_over_straight = Mux(held, held_queued, queued_valid & ~prefer_straight)",
       "queued_over_straight = queued_valid & ~prefer_straight", ENGINE_ORDERING),
    _m("ordering-round-robin-wraps-at-the-bit-width", _ORDERING,
       "ahead = Mux(ahead >= threads, ahead - threads, ahead)", "ahead = ahead", ENGINE_ORDERING),
)
