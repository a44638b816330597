"""DISPATCH fed by the real decoder and the instruction's checks (:class:`Check`, as
OPERANDS registers them): the checks and their precedence, replay when the unit cannot
take the instruction, the next pc, what completes here, the ordered entries' turn, and the
records sent to the units. Every case runs twice: as by default, and in a pipelined engine,
whose OPERANDS hands DISPATCH the turn checks and the entry's stop (``turn_checks``)."""

from dataclasses import replace

import pytest
from amaranth.hdl import Elaboratable, Module, Signal, unsigned
from amaranth.lib import data
from amaranth.sim import Simulator

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.decoder import Decoder
from matndp.hw.engine.isa import Opcode
from matndp.hw.engine.layouts import ErrorCause, order_bits
from matndp.hw.engine.pipeline.check import Check, turn_checks
from matndp.hw.engine.pipeline.dispatch import Dispatch

from ..encode import arg, imm, instruction as I, x


CONFIG = NDPConfig(engine=EngineConfig(sub_cores=2, slots=8, instruction_words=64,
                                       scratchpad_bytes=1024))
PIPELINED = replace(CONFIG, engine=replace(CONFIG.engine, pipelined=True))
SLOT, PC, ENTRY, SEQ = 5, 20, 3, 9
WINDOW = (0x1000, 0x9000)
UNITS = ("alu", "multiply", "fma", "vector", "divide", "reduce", "convert", "memory_ops",
         "scratchpad_ops")


class DecodedDispatch(Elaboratable):
    def __init__(self, config):
        self.config = config
        self.decoder = Decoder()
        self.check = Check(config)
        self.dispatch = Dispatch(config, index=1)
        self.slot = Signal(CONFIG.engine.slot_bits)
        self.pc = Signal(CONFIG.engine.pc_bits)
        self.scalars = Signal(data.ArrayLayout(unsigned(64), 3))
        self.entry = Signal(CONFIG.trigger.entry_bits)
        self.seq = Signal(32)

    def elaborate(self, platform):
        m = Module()
        m.submodules.decoder = self.decoder
        m.submodules.check = check = self.check
        m.submodules.dispatch = self.dispatch
        record = self.dispatch.i.payload
        m.d.comb += [record.control.eq(self.decoder.control), record.slot.eq(self.slot),
                     record.pc.eq(self.pc), record.scalar.eq(self.scalars),
                     record.entry.eq(self.entry), record.seq.eq(self.seq),
                     check.control.eq(self.decoder.control), check.slot.eq(self.slot),
                     check.pc.eq(self.pc), check.a.eq(self.scalars[0]),
                     check.b.eq(self.scalars[1]), record.address.eq(check.address),
                     record.cause.eq(check.cause), record.next_pc.eq(check.next_pc)]
        if self.config.engine.pipelined:
            dispatch = self.dispatch
            needs_turn, turn_ok = turn_checks(
                self.decoder.control, ordered=dispatch.ordered, released=dispatch.released,
                turn=dispatch.turn, holding=dispatch.holding, slot=self.slot,
                entry=self.entry, seq=self.seq[:order_bits(self.config)])
            m.d.comb += [record.needs_turn.eq(needs_turn), record.turn_ok.eq(turn_ok),
                         record.entry_stopped.eq(dispatch.stopped.bit_select(self.entry, 1))]
        return m


def run_cases(cases, config=CONFIG):
    """DISPATCH's outputs for each case of ``cases`` ({name: keyword arguments of
    :func:`_drive`}), all in one simulation (the checks and DISPATCH are combinational: no
    clock)."""
    bench = DecodedDispatch(config)
    outcomes = {}

    async def testbench(ctx):
        for name, arguments in cases.items():
            outcomes[name] = _drive(ctx, bench, **arguments)

    simulator = Simulator(bench)
    simulator.add_testbench(testbench)
    simulator.run()
    return outcomes


def _drive(ctx, bench, word, scalars=(0, 0, 0), *, age=0, stopped=False, ready=True,
           ordered=False, released=False, turn=SEQ, holding=False, idle=True, dying=False,
           room=True, window=WINDOW):
    dut, check = bench.dispatch, bench.check
    ctx.set(bench.decoder.instruction.as_value(), word)
    ctx.set(dut.i.valid, 1)
    ctx.set(bench.slot, SLOT)
    ctx.set(bench.pc, PC)
    for n, value in enumerate(tuple(scalars) + (0,) * (3 - len(scalars))):
        ctx.set(bench.scalars[n], value)
    ctx.set(check.age[SLOT], age)
    ctx.set(bench.entry, ENTRY)
    ctx.set(bench.seq, SEQ)
    ctx.set(dut.ordered, int(ordered) << SLOT)
    ctx.set(dut.released, int(released) << SLOT)
    ctx.set(check.window_base, window[0])
    ctx.set(check.window_end, window[1])
    ctx.set(check.watchdog, 100)
    ctx.set(dut.turn[ENTRY], turn % (1 << order_bits(CONFIG)))
    ctx.set(dut.holding, int(holding) << SLOT)
    ctx.set(dut.stopped, int(stopped) << ENTRY)
    ctx.set(dut.idle, ~(int(not idle) << SLOT) & ((1 << CONFIG.engine.slots) - 1))
    ctx.set(dut.dying, int(dying) << SLOT)
    ctx.set(dut.room, (1 << len(dut.room)) - 1 if room else 0)
    for name in UNITS:
        ctx.set(getattr(dut, name).ready, ready)
    out = {name: ctx.get(getattr(dut, name)) for name in (
        "issued", "update_valid", "clear", "end", "kill", "decided", "release", "retire_valid",
        "error_valid", "update", "retire", "error", "issue_valid", "issue", "lookahead_valid",
        "lookahead_slot", "lookahead_pc")}
    out["requests"] = {name: ctx.get(getattr(dut, name).valid) for name in UNITS}
    out["memory_op"] = ctx.get(dut.memory_ops.payload)
    out["scratchpad_op"] = ctx.get(dut.scratchpad_ops.payload)
    out["fma"] = ctx.get(dut.fma.payload)
    return out


BIT = 1 << SLOT
VLD, SLD = Opcode.VLD, Opcode.SLD
SAMOADD = Opcode.SAMOADD

FAILED_CHECKS = {
    "watchdog first": (dict(word=0, age=100), ErrorCause.WATCHDOG),
    "illegal": (dict(word=0), ErrorCause.ILLEGAL_INSTRUCTION),
    "vld misaligned": (dict(word=I(VLD, 1, x(1), x(2)), scalars=(0, 0x2004)),
                       ErrorCause.MISALIGNED),
    "vld below window": (dict(word=I(VLD, 1, x(1), x(2)), scalars=(0, 0x0fe0)),
                         ErrorCause.OUT_OF_WINDOW),
    "vld misaligned at the end": (dict(word=I(VLD, 1, x(1), x(2)), scalars=(0, WINDOW[1] - 16)),
                                  ErrorCause.MISALIGNED),
    "vld past window": (dict(word=I(VLD, 1, x(1), x(2)), scalars=(0, WINDOW[1])),
                        ErrorCause.OUT_OF_WINDOW),
    "vld across the window's end": (dict(word=I(VLD, 1, x(1), x(2)), scalars=(0, WINDOW[1]),
                                         window=(WINDOW[0], WINDOW[1] + 16)),
                                    ErrorCause.OUT_OF_WINDOW),
    "sld misaligned": (dict(word=I(SLD, 1, x(1), x(2)), scalars=(0, 0x48)),
                       ErrorCause.MISALIGNED),
    "sld past scratchpad": (dict(word=I(SLD, 1, x(1), x(2)), scalars=(0, 1024)),
                            ErrorCause.SCRATCHPAD_RANGE),
}
BRANCHES = {
    "beq taken": (dict(word=I(Opcode.BEQ, 0, x(1), x(2), immediate=-4), scalars=(3, 3)), PC - 4),
    "beq not taken": (dict(word=I(Opcode.BEQ, 0, x(1), x(2), immediate=-4), scalars=(3, 4)),
                      PC + 1),
    "blt signed": (dict(word=I(Opcode.BLT, 0, x(1), x(2), immediate=6),
                        scalars=((1 << 64) - 1, 0)), PC + 6),
    "bltu unsigned": (dict(word=I(Opcode.BLTU, 0, x(1), x(2), immediate=6),
                           scalars=((1 << 64) - 1, 0)), PC + 1),
    "jump": (dict(word=I(Opcode.JUMP, immediate=3)), PC + 3),
}
ATOMIC = I(SAMOADD, 0, x(1), x(0), x(3))
CASES = {
    **{name: arguments for name, (arguments, _) in FAILED_CHECKS.items()},
    **{name: arguments for name, (arguments, _) in BRANCHES.items()},
    "stopped": dict(word=I(Opcode.ADD, 1, x(1), x(2)), stopped=True),
    "stopped in flight": dict(word=I(Opcode.ADD, 1, x(1), x(2)), stopped=True, idle=False),
    "dying": dict(word=I(Opcode.ADD, 1, x(1), x(2)), dying=True),
    "failed in flight": dict(word=0, idle=False),
    "no room": dict(word=I(Opcode.VADD, 1, x(1), x(2)), room=False),
    "jump in flight": dict(word=I(Opcode.JUMP, immediate=3), idle=False),
    "vld": dict(word=I(VLD, 4, x(1), x(2)), scalars=(0, 0x2000)),
    "busy unit": dict(word=I(Opcode.VADD, 1, x(1), x(2)), ready=False),
    "vfma": dict(word=I(Opcode.VFMA, 7, x(1), x(2), x(3))),
    "add": dict(word=I(Opcode.ADD, 1, x(1), imm(), immediate=5)),
    "exit": dict(word=I(Opcode.EXIT)),
    "ordered exit before its turn": dict(word=I(Opcode.EXIT), ordered=True, turn=SEQ - 1),
    "ordered exit holding": dict(word=I(Opcode.EXIT), ordered=True, holding=True),
    "ordered exit": dict(word=I(Opcode.EXIT), ordered=True),
    "released exit": dict(word=I(Opcode.EXIT), ordered=True, released=True, turn=SEQ - 1),
    "posted atomic": dict(word=ATOMIC, scalars=(64,), ordered=True, turn=SEQ - 3),
    "releasing atomic": dict(word=I(SAMOADD, 0, x(1), x(0), x(3), release=True),
                             scalars=(64,), ordered=True),
    "unordered atomic": dict(word=ATOMIC, scalars=(64,)),
    "sw": dict(word=I(Opcode.SW, 0, x(1), arg(0), x(3), immediate=-8),
               scalars=(0x2000, 0x10C, 0x1234_5678_9ABC_DEF0)),
}


@pytest.fixture(scope="module", params=[CONFIG, PIPELINED], ids=["default", "pipelined"])
def outcomes(request):
    return run_cases(CASES, request.param)


@pytest.mark.parametrize("name", FAILED_CHECKS)
def test_a_failed_check_ends_the_thread_with_its_cause(outcomes, name):
    out = outcomes[name]
    assert out["error_valid"] and out["end"] == BIT and out["retire_valid"]
    assert (out["error"].entry, out["error"].pc, ErrorCause(out["error"].cause)) == \
        (ENTRY, PC, FAILED_CHECKS[name][1])
    assert out["retire"].error and out["retire"].entry == ENTRY
    assert not any(out["requests"].values()) and not out["issued"] and not out["update_valid"]


def test_a_stopped_entry_s_thread_ends_without_an_error(outcomes):
    out = outcomes["stopped"]
    assert out["end"] == BIT and out["retire"].error and not out["error_valid"]
    assert not any(out["requests"].values())


def test_a_busy_unit_replays_the_thread(outcomes):
    out = outcomes["busy unit"]
    assert out["requests"]["fma"] and not out["issued"] and not out["update_valid"]
    assert out["clear"] == BIT and out["end"] == 0


def test_an_instruction_goes_to_its_unit_and_the_pc_moves_on(outcomes):
    out = outcomes["vfma"]
    assert out["requests"] == {name: name == "fma" for name in UNITS}
    assert out["issued"] and out["update_valid"] and out["clear"] == 0 and out["end"] == 0
    update = out["update"]
    assert (update.slot, update.next_pc, update.pc, update.rd, update.ends) == \
        (SLOT, PC + 1, PC, 7, 0)
    assert (out["fma"].slot, Opcode(out["fma"].opcode)) == (SLOT, Opcode.VFMA)
    assert outcomes["add"]["requests"] == {name: name == "alu" for name in UNITS}


@pytest.mark.parametrize("name", BRANCHES)
def test_branches_complete_here(outcomes, name):
    out = outcomes[name]
    assert out["issued"] and out["clear"] == BIT and out["update"].next_pc == BRANCHES[name][1]
    assert not any(out["requests"].values())


def test_exit_ends_the_thread_here(outcomes):
    out = outcomes["exit"]
    assert out["end"] == BIT and out["retire_valid"] and not out["retire"].error
    assert not out["error_valid"] and out["release"] == 0


def test_an_ordered_thread_s_exit_waits_for_its_turn_then_hands_it_on(outcomes):
    for name in ("ordered exit before its turn", "ordered exit holding"):
        out = outcomes[name]
        assert out["clear"] == BIT and out["end"] == 0 and not out["issued"], name
    out = outcomes["ordered exit"]
    assert out["end"] == BIT and out["release"] == 1 << ENTRY
    out = outcomes["released exit"]
    assert out["end"] == BIT and out["release"] == 0


def test_an_ordered_atomic_is_posted_unless_it_hands_the_turn_on(outcomes):
    out = outcomes["posted atomic"]         # not its turn: it goes to the station all the same
    op = out["scratchpad_op"]
    assert out["issued"] and out["clear"] == BIT
    assert (op.ordered, op.posted, op.release, op.seq, op.entry) == \
        (1, 1, 0, SEQ % (1 << order_bits(CONFIG)), ENTRY)
    out = outcomes["releasing atomic"]
    op = out["scratchpad_op"]
    assert (op.ordered, op.posted, op.release) == (1, 0, 1) and out["clear"] == 0
    assert out["update"].releases
    op = outcomes["unordered atomic"]["scratchpad_op"]
    assert (op.ordered, op.posted) == (0, 0)


def test_memory_requests_name_the_thread_and_the_address(outcomes):
    op = outcomes["sw"]["memory_op"]
    assert op.thread == CONFIG.engine.slots + SLOT and op.addr == 0x2104
    assert [op.data[lane] for lane in range(CONFIG.lanes)] == [0x9ABC_DEF0] * CONFIG.lanes


def test_a_store_is_posted_and_completes_here(outcomes):
    out = outcomes["sw"]
    op = out["memory_op"]
    assert out["requests"]["memory_ops"] and out["issued"]
    assert (op.posted, op.entry) == (1, ENTRY)
    assert not out["issue_valid"] and not out["update"].answered and out["clear"] == BIT
    assert outcomes["vld"]["memory_op"].posted == 0


def test_without_posted_stores_a_store_is_in_flight_until_answered():
    config = replace(CONFIG, engine=replace(CONFIG.engine, posted_stores=False))
    out = run_cases({"sw": CASES["sw"]}, config)["sw"]
    assert out["memory_op"].posted == 0 and out["issued"]
    assert out["issue_valid"] and out["issue"].memory and out["update"].answered
    assert out["clear"] == 0


def test_every_instruction_leaves_the_pipeline(outcomes):
    for name, out in outcomes.items():
        assert out["decided"] == BIT, name


def test_stopped_or_failed_with_instructions_in_flight(outcomes):
    out = outcomes["stopped in flight"]
    assert out["kill"] == BIT and out["end"] == 0 and not out["retire_valid"]
    assert not out["error_valid"] and not any(out["requests"].values())
    out = outcomes["failed in flight"]
    assert out["kill"] == BIT and out["end"] == 0 and not out["retire_valid"]
    assert out["error_valid"] and ErrorCause(out["error"].cause) is ErrorCause.ILLEGAL_INSTRUCTION


def test_a_dying_thread_s_instruction_is_dropped(outcomes):
    out = outcomes["dying"]
    assert out["end"] == BIT and out["retire"].error and not out["error_valid"]
    assert not any(out["requests"].values()) and not out["issued"]


def test_without_room_to_note_its_destination_an_instruction_is_replayed(outcomes):
    out = outcomes["no room"]
    assert not out["requests"]["fma"] and not out["issued"] and out["clear"] == BIT


def test_an_instruction_in_flight_goes_to_the_scoreboard_and_the_next_is_looked_up(outcomes):
    out = outcomes["vld"]
    assert out["issue_valid"] and out["lookahead_valid"] and out["clear"] == 0
    issue = out["issue"]
    assert (issue.slot, issue.rd, issue.memory, issue.scratchpad) == (SLOT, 4, 1, 0)
    assert (out["lookahead_slot"], out["lookahead_pc"]) == (SLOT, PC + 1)
    assert out["update"].answered
    # Completing here with nothing in flight frees the slot at once; with something in
    # flight its next instruction is looked up first.
    out = outcomes["jump"]
    assert not out["issue_valid"] and not out["lookahead_valid"] and out["clear"] == BIT
    out = outcomes["jump in flight"]
    assert out["lookahead_valid"] and out["clear"] == 0 and out["lookahead_pc"] == PC + 3


@pytest.mark.parametrize("config, index, error, message", [
    (None, 0, TypeError, "config must be an NDPConfig with an engine"),
    (CONFIG, 2, ValueError, "index must be a sub-core of the 2"),
])
def test_constructor_errors(config, index, error, message):
    with pytest.raises(error, match=message):
        Dispatch(config, index)
