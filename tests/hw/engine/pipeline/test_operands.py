"""OPERANDS alone: each source operand's value by its kind, as a scalar and as a vector,
against the ISA's meaning of registers, specials, arguments and immediates, and the
µthread's entry and sequence number handed to DISPATCH; in a pipelined engine, the turn
checks and the entry's stop it hands on too."""

import random
from dataclasses import replace

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.isa import Opcode, OperandKind, ScalarSpecial, VectorSpecial
from matndp.hw.engine.layouts import order_bits
from matndp.hw.engine.pipeline.operands import Operands

from ..harness import simulate


CONFIG = NDPConfig(engine=EngineConfig(sub_cores=2, slots=8, instruction_words=64))
LANES = CONFIG.lanes
MASK32 = 0xFFFF_FFFF


def _lanes(value):
    return [value >> (32 * lane) & MASK32 for lane in range(LANES)]


def test_operand_values_follow_their_kind():
    dut = Operands(CONFIG, index=1)
    rng = random.Random(3)
    slots = CONFIG.engine.slots

    async def bench(ctx):
        previous = None
        for _ in range(300):
            slot = rng.randrange(slots)
            entries = [rng.randrange(16) for _ in range(slots)]
            seqs = [rng.getrandbits(32) for _ in range(slots)]
            completed = [rng.getrandbits(32) for _ in range(16)]
            info = {"offset": rng.getrandbits(40), "addr": rng.getrandbits(40),
                    "mask": rng.getrandbits(32), "write": rng.randrange(2)}
            event = rng.getrandbits(32 * LANES)
            reads = {name: [rng.getrandbits(64) for _ in range(3)] for name in ("x", "a")}
            vreads = [rng.getrandbits(32 * LANES) for _ in range(3)]
            imm = rng.getrandbits(32)
            operands = [{"type": 0, "kind": rng.choice(list(OperandKind)),
                         "index": rng.randrange(16)} for _ in range(3)]
            for operand in operands:
                if operand["kind"] is OperandKind.SPECIAL and rng.random() < 0.5:
                    operand["index"] = rng.randrange(3)
            ctx.set(dut.i.valid, 1)
            ctx.set(dut.i.payload, {"slot": slot, "pc": 5, "control": {
                "a": operands[0], "b": operands[1], "c": operands[2], "imm": imm}})
            ctx.set(dut.entry, entries)
            ctx.set(dut.seq, seqs)
            ctx.set(dut.completed, completed)
            ctx.set(dut.thread_info, info)
            ctx.set(dut.event_data.as_value(), event)
            for n in range(3):
                ctx.set(dut.scalar_read[n], reads["x"][n])
                ctx.set(dut.argument_read[n], reads["a"][n])
                ctx.set(dut.vector_read[n].as_value(), vreads[n])

            specials = {ScalarSpecial.OFFSET: info["offset"], ScalarSpecial.ADDR: info["addr"],
                        ScalarSpecial.ENTRY: entries[slot], ScalarSpecial.SEQ: seqs[slot],
                        ScalarSpecial.MASK: info["mask"], ScalarSpecial.WRITE: info["write"],
                        ScalarSpecial.SLOT: slots + slot,
                        ScalarSpecial.COMPLETED: completed[entries[slot]]}
            lane_mask = [MASK32 if info["mask"] >> (4 * lane) & 0xF == 0xF else 0
                         for lane in range(LANES)]
            vector_specials = {VectorSpecial.DATA: _lanes(event),
                               VectorSpecial.LANE: list(range(LANES)),
                               VectorSpecial.LANEMASK: lane_mask}
            signed_imm = imm - (1 << 32) if imm >> 31 else imm
            expected = []
            for n, operand in enumerate(operands):
                kind, index = operand["kind"], operand["index"]
                if kind is OperandKind.REGISTER:
                    scalar = 0 if index == 0 else reads["x"][n]
                    vector = _lanes(vreads[n])
                elif kind is OperandKind.SPECIAL:
                    scalar = specials[ScalarSpecial(index % 8)]
                    vector = vector_specials.get(VectorSpecial(index) if index < 3 else None,
                                                 [0] * LANES)
                elif kind is OperandKind.ARGUMENT:
                    scalar = reads["a"][n]
                    vector = [reads["a"][n] & MASK32] * LANES
                else:
                    scalar = signed_imm & (1 << 64) - 1
                    vector = [imm] * LANES
                expected.append((scalar, vector))
            if previous is not None:
                out = ctx.get(dut.o.payload)
                got = [(out.scalar[n], [out.vector[n][lane] for lane in range(LANES)])
                       for n in range(3)]
                assert got == previous[0]
                assert (out.slot, out.mask, out.entry, out.seq) == previous[1]
            previous = (expected, (slot, info["mask"], entries[slot],
                                   seqs[slot] % (1 << order_bits(CONFIG))))
            await ctx.tick()

    simulate(dut, bench)


def test_a_pipelined_engine_s_turn_checks_and_stop_are_handed_on():
    """An ordered µthread that has not handed its turn on needs the turn for an atomic and
    for its end; its end may go only with the turn and nothing of it at the station."""
    config = replace(CONFIG, engine=replace(CONFIG.engine, pipelined=True))
    dut = Operands(config, index=0)
    rng = random.Random(5)
    slots, entries = config.engine.slots, config.trigger.filter_entries
    order_mask = (1 << order_bits(config)) - 1
    seen = set()

    async def bench(ctx):
        previous = None
        for _ in range(400):
            slot = rng.randrange(slots)
            entry_of = [rng.randrange(entries) for _ in range(slots)]
            seqs = [rng.getrandbits(32) for _ in range(slots)]
            entry, seq = entry_of[slot], seqs[slot]
            turns = [rng.getrandbits(order_bits(config)) for _ in range(entries)]
            if rng.random() < 0.5:
                turns[entry] = seq & order_mask
            ordered, released, holding = (rng.getrandbits(slots) | (1 << slot) * (rng.random() < 0.7),
                                          rng.getrandbits(slots), rng.getrandbits(slots))
            stopped = rng.getrandbits(entries)
            opcode = rng.choice([Opcode.EXIT, Opcode.SAMOADD, Opcode.ADD, Opcode.VLD])
            atomic = int(opcode is Opcode.SAMOADD)
            exit_flag = rng.randrange(2) if opcode is not Opcode.EXIT else 0
            ctx.set(dut.i.valid, 1)
            ctx.set(dut.i.payload, {"slot": slot, "pc": 5, "control": {
                "opcode": opcode, "atomic": atomic, "exit": exit_flag}})
            for name, value in (("entry", entry_of), ("seq", seqs), ("turn", turns),
                                ("ordered", ordered), ("released", released),
                                ("holding", holding), ("stopped", stopped)):
                ctx.set(getattr(dut, name), value)
            ends = opcode is Opcode.EXIT or exit_flag
            needs_turn = bool(ordered >> slot & 1 and not released >> slot & 1 and (atomic or ends))
            has_turn = turns[entry] == seq & order_mask and not holding >> slot & 1
            turn_ok = not (needs_turn and not atomic) or has_turn
            if previous is not None:
                out = ctx.get(dut.o.payload)
                assert (out.needs_turn, out.turn_ok, out.entry_stopped) == previous
            previous = (int(needs_turn), int(turn_ok), stopped >> entry & 1)
            seen.add(previous)
            await ctx.tick()

    simulate(dut, bench)
    assert {(1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 1, 1)} <= seen


@pytest.mark.parametrize("config, index, error, message", [
    (None, 0, TypeError, "config must be an NDPConfig with an engine"),
    (CONFIG, 2, ValueError, "index must be a sub-core of the 2"),
    (CONFIG, -1, ValueError, "index must be a sub-core"),
])
def test_constructor_errors(config, index, error, message):
    with pytest.raises(error, match=message):
        Operands(config, index)
