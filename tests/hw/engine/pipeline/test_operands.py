"""OPERANDS alone: each source operand's value by its kind, as a scalar and as a vector,
against the ISA's meaning of registers, specials, arguments and immediates, and the
µthread's entry and sequence number handed to DISPATCH."""

import random

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.isa import OperandKind, ScalarSpecial, VectorSpecial
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


@pytest.mark.parametrize("config, index, error, message", [
    (None, 0, TypeError, "config must be an NDPConfig with an engine"),
    (CONFIG, 2, ValueError, "index must be a sub-core of the 2"),
    (CONFIG, -1, ValueError, "index must be a sub-core"),
])
def test_constructor_errors(config, index, error, message):
    with pytest.raises(error, match=message):
        Operands(config, index)
