"""The scoreboard alone: a µthread's next instruction is ready when none of the registers
it reads or writes is being written by an instruction in flight, its memory or scratchpad
access has none of its kind in flight, it does not end the µthread with something in
flight, and fewer than ``in_flight`` are in flight if a unit will answer it; or when
nothing is in flight at all. Checked on random streams of issues, answers and lookaheads
against that rule, and on cases worked by hand."""

import random

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.decoder import OperandClass
from matndp.hw.engine.isa import Opcode
from matndp.hw.engine.pipeline.scoreboard import Scoreboard

from ..encode import arg, imm, instruction as I, special, v, x
from ..harness import simulate


def _config(in_flight):
    return NDPConfig(engine=EngineConfig(slots=4, instruction_words=64, in_flight=in_flight,
                                         memory_first=in_flight > 1))


# Next instructions, with what they read and write ("x3", "v1"), whether they access memory
# ("M") or the scratchpad ("S"), end the µthread ("E") or complete at dispatch ("C").
NEXT = [
    (I(Opcode.ADD, 3, x(1), x(2)), {"x1", "x2", "x3"}),
    (I(Opcode.ADD, 0, x(0), imm(), immediate=4), set()),           # x0 neither read nor written
    (I(Opcode.VFMA, 2, v(1), arg(0), v(3)), {"v1", "v2", "v3"}),
    (I(Opcode.VLD, 1, x(4), x(0)), {"x4", "v1", "M"}),
    (I(Opcode.VST, 0, x(2), x(0), v(5)), {"x2", "v5", "M"}),
    (I(Opcode.SLD, 6, x(1), x(0)), {"x1", "v6", "S"}),
    (I(Opcode.VMAX, 7, special("DATA"), imm(), immediate=0), {"v7"}),
    (I(Opcode.BNE, 0, x(5), x(6), immediate=-2), {"x5", "x6", "C"}),
    (I(Opcode.EXIT), {"E", "C"}),
    (I(Opcode.VST, 0, x(3), x(0), v(2), exit=True), {"x3", "v2", "M", "E"}),
    (I(Opcode.JUMP, immediate=3), {"C"}),
]
# Instructions in flight: what they write, and whether they access memory or the scratchpad.
IN_FLIGHT = [
    ({"rd_type": OperandClass.SCALAR, "rd": 1}, {"x1"}),
    ({"rd_type": OperandClass.SCALAR, "rd": 3}, {"x3"}),
    ({"rd_type": OperandClass.SCALAR, "rd": 0}, set()),
    ({"rd_type": OperandClass.VECTOR, "rd": 1, "memory": 1}, {"v1", "M"}),
    ({"rd_type": OperandClass.VECTOR, "rd": 2}, {"v2"}),
    ({"rd_type": OperandClass.VECTOR, "rd": 7}, {"v7"}),
    ({"rd_type": OperandClass.NONE, "memory": 1}, {"M"}),
    ({"rd_type": OperandClass.VECTOR, "rd": 6, "scratchpad": 1}, {"v6", "S"}),
]


def _ready(needs, in_flight, limit):
    """The rule, from sets of names."""
    if not in_flight:
        return True
    pending = set().union(*in_flight)
    if needs & pending & ({f"x{n}" for n in range(16)} | {f"v{n}" for n in range(16)} |
                          {"M", "S"}):
        return False
    if "E" in needs:
        return False
    return "C" in needs or len(in_flight) < limit


@pytest.mark.parametrize("limit", [1, 2, 4])
def test_ready_follows_the_rule_on_random_streams(limit):
    config = _config(limit)
    dut = Scoreboard(config)
    slots = config.engine.slots
    rng = random.Random(limit)

    async def bench(ctx):
        flights = [[] for _ in range(slots)]     # per slot: (issue record, names) in flight
        needs = [set() for _ in range(slots)]
        looked = None
        for cycle in range(1500):
            ctx.set(dut.start, 0)
            ctx.set(dut.issue_valid, 0)
            ctx.set(dut.answer_valid, 0)
            ctx.set(dut.lookahead_valid, 0)
            # Outputs of this cycle against the rule.
            for slot in range(slots):
                expected = _ready(needs[slot], [names for _, names in flights[slot]], limit) \
                    if limit > 1 else not flights[slot]
                assert ctx.get(dut.ready) >> slot & 1 == expected, (cycle, slot, needs[slot],
                                                                    flights[slot])
                assert ctx.get(dut.idle) >> slot & 1 == (not flights[slot])
                assert ctx.get(dut.last) >> slot & 1 == (len(flights[slot]) == 1)
                # PICK's preference: the last look at the slot's next instruction.
                assert ctx.get(dut.memory_next) >> slot & 1 == ("M" in needs[slot]), \
                    (cycle, slot, needs[slot])
            assert ctx.get(dut.looked_up) == (0 if looked is None or limit == 1
                                              else 1 << looked[0])
            looking = None if looked is None else looked[0]
            if looked is not None and limit > 1:
                needs[looked[0]] = looked[1]
            looked = None
            # Inputs of this cycle: an issue (only when the rule allows one), an answer
            # (of any instruction in flight: units answer in any order across units), a
            # lookahead, now and then a start.
            slot = rng.randrange(slots)
            issued = None
            answerable = [(s, n) for s in range(slots) for n in range(len(flights[s]))]
            answer = rng.choice(answerable) if answerable and rng.random() < 0.5 else None
            if rng.random() < 0.6 and (ctx.get(dut.ready) >> slot & 1) and \
                    len(flights[slot]) < limit and not (answer and answer[0] == slot):
                record, names = rng.choice(IN_FLIGHT)
                pending = set().union(*(n for _, n in flights[slot])) if flights[slot] else set()
                if not names & pending:      # DISPATCH never issues a second writer
                    issued = (slot, record, names)
                    ctx.set(dut.issue_valid, 1)
                    ctx.set(dut.issue, {"slot": slot, "rd": 0, "memory": 0, "scratchpad": 0,
                                        **record})
                    word, wanted = rng.choice(NEXT)
                    ctx.set(dut.lookahead_valid, 1)
                    ctx.set(dut.lookahead_slot, slot)
                    looked = (slot, wanted, word)
            if answer is not None:
                record, names = flights[answer[0]][answer[1]]
                ctx.set(dut.answer_valid, 1)
                ctx.set(dut.answer, {"slot": answer[0], "rd": 0, "memory": 0, "scratchpad": 0,
                                     **record})
            # A µthread starts only in a free slot: none of the slots busy this cycle.
            start = rng.randrange(slots) if rng.random() < 0.01 else None
            if start is not None and start not in (slot if issued else None, looking,
                                                   answer[0] if answer else None):
                ctx.set(dut.start, 1 << start)
            else:
                start = None
            await ctx.tick()
            if looked is not None:
                ctx.set(dut.lookahead.as_value(), looked[2])
            if answer is not None:
                del flights[answer[0]][answer[1]]
            if issued is not None:
                flights[issued[0]].append((issued[1], issued[2]))
            if start is not None:
                flights[start] = []
                needs[start] = set()

    simulate(dut, bench)


def test_a_dependent_instruction_waits_for_its_producer():
    dut = Scoreboard(_config(4))

    async def bench(ctx):
        # Slot 2 sends vld v1 to memory; its next instruction, vfma v2 = v1 * a0 + v3, waits.
        ctx.set(dut.issue_valid, 1)
        ctx.set(dut.issue, {"slot": 2, "rd_type": OperandClass.VECTOR, "rd": 1, "memory": 1})
        ctx.set(dut.lookahead_valid, 1)
        ctx.set(dut.lookahead_slot, 2)
        await ctx.tick()
        ctx.set(dut.issue_valid, 0)
        ctx.set(dut.lookahead_valid, 0)
        ctx.set(dut.lookahead.as_value(), I(Opcode.VFMA, 2, v(1), arg(0), v(3)))
        assert ctx.get(dut.looked_up) == 0b0100
        assert not ctx.get(dut.idle) >> 2 & 1 and ctx.get(dut.last) >> 2 & 1
        await ctx.tick()
        assert not ctx.get(dut.ready) >> 2 & 1
        assert ctx.get(dut.ready) & 0b1011 == 0b1011         # other slots are idle
        ctx.set(dut.answer_valid, 1)
        ctx.set(dut.answer, {"slot": 2, "rd_type": OperandClass.VECTOR, "rd": 1, "memory": 1})
        await ctx.tick()
        ctx.set(dut.answer_valid, 0)
        assert ctx.get(dut.ready) >> 2 & 1 and ctx.get(dut.idle) >> 2 & 1

    simulate(dut, bench)


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None)])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        Scoreboard(config)
