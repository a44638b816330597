"""The slot state alone: a spawn fills a free slot with the µthread's state and its
triggering access; a picked slot is busy until cleared and eligible only when the
scoreboard says it is ready and it is neither ending nor dying; a retired slot is free
again; the age counts cycles from the start; DISPATCH's update moves the pc on and notes
where a memory or scratchpad access writes."""

import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.decoder import OperandClass, UnitCode
from matndp.hw.engine.layouts import ThreadKind
from matndp.hw.engine.pipeline.slots import SlotState

from ..harness import simulate


CONFIG = NDPConfig(engine=EngineConfig(slots=4, instruction_words=64, argument_blocks=4))


def test_a_thread_lives_from_spawn_to_retire():
    dut = SlotState(CONFIG)

    async def bench(ctx):
        assert ctx.get(dut.free) == 0b1111 and ctx.get(dut.eligible) == 0
        ctx.set(dut.ready, 0b1111)
        ctx.set(dut.spawn.valid, 1)
        ctx.set(dut.spawn.payload, {"slot": 2, "kind": ThreadKind.FINAL, "pc": 9, "entry": 5,
                                    "arg_block": 3, "seq": 77, "ordered": 1, "offset": 0x40,
                                    "addr": 0x1040, "mask": 0xF0F0, "write": 1,
                                    "data": list(range(8))})
        assert ctx.get(dut.spawn.ready) and ctx.get(dut.start) == 0b0100
        await ctx.tick()
        ctx.set(dut.spawn.valid, 0)
        assert ctx.get(dut.free) == 0b1011 and ctx.get(dut.eligible) == 0b0100
        assert (ctx.get(dut.pc[2]), ctx.get(dut.entry[2]), ctx.get(dut.arg_block[2]),
                ctx.get(dut.seq[2]), ctx.get(dut.ordered), ctx.get(dut.age[2])) == \
            (9, 5, 3, 77, 0b0100, 0)
        assert ThreadKind(ctx.get(dut.kind[2])) is ThreadKind.FINAL
        ctx.set(dut.thread_read, 2)
        await ctx.tick()
        info = ctx.get(dut.thread_info)
        assert (info.offset, info.addr, info.mask, info.write) == (0x40, 0x1040, 0xF0F0, 1)
        assert [ctx.get(dut.event_data[lane]) for lane in range(8)] == list(range(8))
        assert ctx.get(dut.age[2]) == 1
        # Not ready by the scoreboard: not eligible.
        ctx.set(dut.ready, 0b1011)
        assert ctx.get(dut.eligible) == 0
        ctx.set(dut.ready, 0b1111)
        # Picked: busy (and in the pipeline) until cleared (and decided).
        ctx.set(dut.picked, 0b0100)
        await ctx.tick()
        ctx.set(dut.picked, 0)
        assert ctx.get(dut.eligible) == 0 and ctx.get(dut.in_pipe) == 0b0100
        await ctx.tick()
        assert ctx.get(dut.eligible) == 0
        ctx.set(dut.update_valid, 1)
        ctx.set(dut.update, {"slot": 2, "next_pc": 10, "pc": 9, "unit": UnitCode.MEMORY,
                             "rd_type": OperandClass.VECTOR, "rd": 4, "answered": 1,
                             "ends": 0, "releases": 1})
        ctx.set(dut.clear, 0b0100)
        ctx.set(dut.decided, 0b0100)
        await ctx.tick()
        ctx.set(dut.update_valid, 0)
        ctx.set(dut.clear, 0)
        ctx.set(dut.decided, 0)
        assert ctx.get(dut.eligible) == 0b0100 and ctx.get(dut.in_pipe) == 0
        dest = ctx.get(dut.memory_dest[2])
        assert (ctx.get(dut.pc[2]), dest.pc, dest.rd, OperandClass(dest.rd_type),
                ctx.get(dut.exit_pending), ctx.get(dut.released)) == \
            (10, 9, 4, OperandClass.VECTOR, 0, 0b0100)
        # An instruction that ends the µthread: no longer eligible.
        ctx.set(dut.update_valid, 1)
        ctx.set(dut.update, {"slot": 2, "next_pc": 11, "pc": 10, "unit": UnitCode.FMA,
                             "ends": 1})
        await ctx.tick()
        ctx.set(dut.update_valid, 0)
        assert ctx.get(dut.exit_pending) == 0b0100 and ctx.get(dut.eligible) == 0
        assert ctx.get(dut.memory_dest[2]).pc == 9          # only memory accesses go there
        # Killed: dying until retired.
        ctx.set(dut.kill, 0b0100)
        await ctx.tick()
        ctx.set(dut.kill, 0)
        assert ctx.get(dut.dying) == 0b0100
        ctx.set(dut.retire, 0b0100)
        await ctx.tick()
        ctx.set(dut.retire, 0)
        assert ctx.get(dut.free) == 0b1111 and ctx.get(dut.eligible) == 0
        assert ctx.get(dut.dying) == 0
        # A dying µthread is not picked, though ready and not busy.
        ctx.set(dut.spawn.valid, 1)
        ctx.set(dut.spawn.payload, {"slot": 1, "pc": 3})
        await ctx.tick()
        ctx.set(dut.spawn.valid, 0)
        assert ctx.get(dut.eligible) == 0b0010
        ctx.set(dut.kill, 0b0010)
        await ctx.tick()
        ctx.set(dut.kill, 0)
        assert ctx.get(dut.dying) == 0b0010 and ctx.get(dut.eligible) == 0
        ctx.set(dut.retire, 0b0010)
        await ctx.tick()
        ctx.set(dut.retire, 0)
        age = ctx.get(dut.age[2])
        await ctx.tick()
        assert ctx.get(dut.age[2]) == age          # a free slot does not age

    simulate(dut, bench)


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None)])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        SlotState(config)
