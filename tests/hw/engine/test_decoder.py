"""The RTL decoder against the ISA's one definition of a legal word
(:meth:`~matndp.hw.engine.isa.Instruction.check`), and its controls against the spec table."""

import random

from amaranth.sim import Simulator

from matndp.hw.engine.decoder import Decoder, OperandClass, UnitCode
from matndp.hw.engine.isa import INSTRUCTION_FIELDS, INSTRUCTIONS, SPEC_BY_OPCODE, IllegalInstruction, Instruction


def _legal(word):
    try:
        Instruction.decode(word)
    except IllegalInstruction:
        return False
    return True


_LSB = {name: lsb for name, (lsb, _) in INSTRUCTION_FIELDS.items()}


def _words(rng, count):
    """Random words biased toward almost-legal ones: a real opcode, small fields, and one
    field disturbed, so both sides of every rule are reached."""
    words = []
    for _ in range(count):
        spec = rng.choice(INSTRUCTIONS)
        word = spec.opcode.value
        word |= rng.choice([0, 0, rng.randrange(16)]) << _LSB["rd"]
        for operand in "abc":
            kind = rng.choice([0, 0, 1, 2, 3])
            index = rng.choice([0, rng.randrange(16)])
            word |= (index << _LSB[f"{operand}.index"] | kind << _LSB[f"{operand}.kind"]) \
                if rng.random() < 0.8 else 0
        word |= rng.choice([0, 0, 1]) << _LSB["release"]
        word |= rng.choice([0, 0, 1]) << _LSB["exit"]
        word |= rng.choice([0, 0, rng.getrandbits(32)]) << _LSB["imm"]
        if rng.random() < 0.1:
            word = rng.getrandbits(64)
        words.append(word)
    return words


def test_legality_matches_the_isa_definition_and_controls_match_the_spec():
    rng = random.Random(12)
    words = _words(rng, 6000)
    dut = Decoder()
    mismatches = []

    async def testbench(ctx):
        for word in words:
            ctx.set(dut.instruction.as_value(), word)
            legal = ctx.get(dut.control.legal)
            if bool(legal) != _legal(word):
                mismatches.append(hex(word))
                continue
            if legal:
                spec = SPEC_BY_OPCODE[Instruction.decode(word).opcode]
                assert int(ctx.get(dut.control.unit)) == UnitCode[spec.unit.name].value
                assert int(ctx.get(dut.control.rd_type)) == OperandClass[spec.rd.name].value
                assert ctx.get(dut.control.atomic) == spec.is_atomic
                assert ctx.get(dut.control.address_a) == ("a" in spec.address)
                assert ctx.get(dut.control.address_b) == ("b" in spec.address)

    sim = Simulator(dut)
    sim.add_testbench(testbench)
    sim.run()
    legal = sum(map(_legal, words))
    assert 500 < legal < 5500, f"the word mix reaches too few legal ({legal}) or illegal words"
    assert mismatches == [], f"{len(mismatches)} words decoded differently, e.g. {mismatches[:5]}"
