"""DECODE alone: the word's control, registered, and each source operand's register and
argument reads addressed by the slot and its argument block."""

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.isa import Opcode
from matndp.hw.engine.pipeline.decode import Decode

from ..encode import arg, instruction as I, x
from ..harness import simulate


CONFIG = NDPConfig(engine=EngineConfig(slots=8, instruction_words=64, argument_blocks=4))


def test_reads_are_addressed_and_the_control_registered():
    dut = Decode(CONFIG)
    word = I(Opcode.VFMA, 5, x(3), arg(7), x(12))
    blocks = [3, 1, 2, 0, 3, 2, 1, 0]

    async def bench(ctx):
        ctx.set(dut.arg_block, blocks)
        ctx.set(dut.i.valid, 1)
        ctx.set(dut.i.payload, {"slot": 6, "pc": 33})
        ctx.set(dut.i.payload.word.as_value(), word)
        assert [ctx.get(dut.register_read[n]) for n in range(3)] == \
            [3 + 16 * 6, 7 + 16 * 6, 12 + 16 * 6]
        assert [ctx.get(dut.argument_read[n]) for n in range(3)] == \
            [3 + 16 * 1, 7 + 16 * 1, 12 + 16 * 1]
        assert ctx.get(dut.thread_read) == 6
        await ctx.tick()
        ctx.set(dut.i.valid, 0)
        out = ctx.get(dut.o.payload)
        assert ctx.get(dut.o.valid) and (out.slot, out.pc) == (6, 33)
        assert (Opcode(out.control.opcode), out.control.rd, out.control.legal) == (Opcode.VFMA, 5, 1)
        await ctx.tick()
        assert not ctx.get(dut.o.valid)

    simulate(dut, bench)


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None)])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        Decode(config)
