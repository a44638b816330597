# amaranth: UnusedElaboratable=no
"""The bus decoder in Amaranth's simulator: routing to the register file and to windows whose
targets answer after random waits, the windows' rules, errors, answers nobody asked for, and
every constructor error."""

import random

import pytest
from amaranth.lib import wiring
from amaranth.lib.wiring import Out
from amaranth.sim import Simulator

from matndp.hw.bus.decoder import BusDecoder
from matndp.hw.bus.map import Access, Field, Register, RegisterArray, RegisterBlock, RegisterMap, Window
from matndp.hw.bus.signature import CSRBusSignature
from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.csr_map import MAGIC, register_map

from .models import REGISTER_LATENCY, DecoderHarness as Harness, Initiator, WindowTarget


def example_map():
    return RegisterMap([
        RegisterBlock("global", 0x000, [
            Register("ident", 0x0, (Field("magic", 0, 32, Access.CONST, "", value=0xC0DE_F00D),), ""),
            Register("scratch", 0x4, (Field("value", 0, 32, Access.RW, ""),), ""),
            Register("level", 0x8, (Field("value", 0, 8, Access.RO, ""),), ""),
        ]),
        Window("rom", 0x200, 0x40, "read-only, between the blocks", writable=False),
        RegisterArray("slot", 0x400, 0x10, 2, [
            Register("a", 0x0, (Field("value", 0, 16, Access.RW, ""),), ""),
        ]),
        Window("ram", 0x1000, 0x100, "read and write"),
        Window("sink", 0x2000, 0x40, "write-only", readable=False),
        Window("absent", 0x4000, 0x100, "no target"),
    ])


ROUTED = ("rom", "ram", "sink")


def run(dut, bench, targets=()):
    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    for target in targets:
        simulator.add_testbench(target.run, background=True)
    simulator.add_testbench(bench)
    simulator.run()


def window_targets(dut, *, seed, latency=(1, 5)):
    return {name: WindowTarget(getattr(dut.windows, name), dut.register_map.window(name).size,
                               latency=latency, seed=seed + index)
            for index, name in enumerate(dut.decoder.routed)}


# --- constructor and ports ----------------------------------------------------------------------

@pytest.mark.parametrize("make, error, message", [
    (lambda: BusDecoder("map"), TypeError, "BusDecoder: 'map' is not a RegisterMap"),
    (lambda: BusDecoder(example_map(), windows=("ram", "disk")), ValueError,
     r"the register map has no window 'disk' \(windows: rom, ram, sink, absent\)"),
    (lambda: BusDecoder(RegisterMap([RegisterBlock("b", 0, [Register("r", 0, (
        Field("v", 0, 1, Access.RW, ""),), "")])]), windows=("ram",)), ValueError,
     r"no window 'ram' \(windows: none\)"),
    (lambda: BusDecoder(example_map(), windows=("ram", "rom", "ram")), ValueError,
     "a window is named twice"),
])
def test_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_ports_follow_the_map():
    registers = example_map()
    decoder = BusDecoder(registers, windows=("sink", "ram"))
    assert decoder.signature.members["bus"] == wiring.In(CSRBusSignature(15))
    assert decoder.signature.members["registers"] == Out(CSRBusSignature(11))
    # In address order, each on the bits of an offset within the window.
    assert decoder.routed == ("ram", "sink")
    assert dict(decoder.windows.signature.members) == {"ram": Out(CSRBusSignature(8)),
                                                      "sink": Out(CSRBusSignature(6))}
    assert BusDecoder(registers).routed == ("rom", "ram", "sink", "absent")
    assert dict(BusDecoder(registers, windows=()).windows.signature.members) == {}


# --- routing --------------------------------------------------------------------------------------

def test_every_word_of_every_window_through_targets_with_random_waits():
    dut = Harness(example_map(), windows=ROUTED)
    targets = window_targets(dut, seed=1)
    generator = random.Random(2)
    rom = [generator.getrandbits(32) for _ in range(0x40 // 4)]
    targets["rom"].words[:] = rom
    written = {name: [generator.getrandbits(32) for _ in range(dut.register_map.window(name).size // 4)]
               for name in ("ram", "sink")}
    initiator = Initiator(dut.bus)
    reads = {}

    async def bench(ctx):
        for name in ("ram", "sink"):
            base = dut.register_map.window(name).base
            for index, value in enumerate(written[name]):
                assert not await initiator.write(ctx, base + 4 * index, value)
        for name in ("ram", "rom"):
            base = dut.register_map.window(name).base
            reads[name] = []
            for index in range(dut.register_map.window(name).size // 4):
                data, error = await initiator.read(ctx, base + 4 * index)
                assert not error
                reads[name].append(data)
        await initiator.idle(ctx, 8)
    run(dut, bench, targets.values())

    assert reads == {"ram": written["ram"], "rom": rom}
    assert targets["ram"].words == written["ram"] and targets["sink"].words == written["sink"]
    assert targets["rom"].words == rom
    # Each target saw its accesses once, at the offset within the window.
    assert targets["sink"].accesses == [(True, 4 * index) for index in range(0x10)]
    assert targets["ram"].accesses == [(True, 4 * index) for index in range(0x40)] + \
        [(False, 4 * index) for index in range(0x40)]
    assert targets["rom"].accesses == [(False, 4 * index) for index in range(0x10)]
    # The host waited exactly as long as the targets took: the decoder adds no cycle.
    answers = targets["sink"].answers + targets["ram"].answers + targets["rom"].answers
    assert sorted(initiator.latencies) == sorted(answers)
    assert set(initiator.latencies) == {1, 2, 3, 4, 5}


def test_registers_answer_one_cycle_after_the_strobe_beside_busy_windows():
    dut = Harness(example_map(), windows=ROUTED)
    targets = window_targets(dut, seed=3)
    initiator = Initiator(dut.bus)

    async def bench(ctx):
        ctx.set(dut.actions["level", "value"].status, 0x5A)
        assert await initiator.read(ctx, 0x000) == (0xC0DE_F00D, False)
        assert not await initiator.write(ctx, 0x1000, 0x1234_5678)
        assert not await initiator.write(ctx, 0x004, 0xCAFE_0001)
        assert await initiator.read(ctx, 0x1000) == (0x1234_5678, False)
        assert await initiator.read(ctx, 0x004) == (0xCAFE_0001, False)
        assert await initiator.read(ctx, 0x008) == (0x5A, False)
        assert not await initiator.write(ctx, 0x410, 0xFFFF_FFFF)
        assert await initiator.read(ctx, 0x410) == (0xFFFF, False)
    run(dut, bench, targets.values())
    register_latencies = [latency for index, latency in enumerate(initiator.latencies)
                          if index not in (1, 3)]
    assert register_latencies == [REGISTER_LATENCY] * 6
    assert initiator.latencies[1] == targets["ram"].answers[0]


def test_refused_accesses_are_errors_and_reach_no_target():
    registers = example_map()
    dut = Harness(registers, windows=ROUTED)
    targets = window_targets(dut, seed=4)
    # (address, write, who refuses it: the register file answers after its latency, the
    # decoder a cycle after the strobe).
    refused = [
        (0x00C, False, "registers"), (0x00C, True, "registers"),   # in the register file's span, no register
        (0x800, False, "decoder"), (0x800, True, "decoder"),       # above the registers, in no window
        (0x3000, True, "decoder"), (0x7FFC, False, "decoder"),     # between and above the windows
        (0x1002, False, "decoder"), (0x1001, True, "decoder"),     # misaligned, inside a window
        (0x203, False, "registers"),        # misaligned, inside the window between the blocks
        (0x200, True, "decoder"), (0x23C, True, "decoder"),        # writes to the read-only window
        (0x2000, False, "decoder"), (0x203C, False, "decoder"),    # reads of the write-only window
        (0x4000, False, "decoder"), (0x40FC, True, "decoder"),     # a window without a target
        (0x000, True, "registers"),         # a read-only register
    ]
    initiator = Initiator(dut.bus)
    results = []

    async def bench(ctx):
        for address, write, _ in refused:
            results.append(await initiator.access(ctx, address, write, 0xFFFF_FFFF))
        assert await initiator.read(ctx, 0x000) == (0xC0DE_F00D, False)
    run(dut, bench, targets.values())
    assert results == [(0, True)] * len(refused)
    assert initiator.latencies[:-1] == [REGISTER_LATENCY if by == "registers" else 1
                                        for _, _, by in refused]
    assert all(target.accesses == [] for target in targets.values())


def test_answers_nobody_asked_for_are_dropped():
    """A target that answers unasked, or after the host has moved on to another access,
    does not disturb the bus."""
    dut = Harness(example_map(), windows=ROUTED)
    ram = dut.windows.ram
    initiator = Initiator(dut.bus, limit=6)

    async def bench(ctx):
        ctx.set(ram.ack, 1)                 # unasked
        ctx.set(ram.r_data, 0x1111_1111)
        await initiator.idle(ctx, 3)
        ctx.set(ram.ack, 0)
        with pytest.raises(AssertionError, match="no acknowledgement within 6 cycles for the read of 0x1010"):
            await initiator.read(ctx, 0x1010)   # the target stays silent
        # The host moves on; the silent target then answers, before the register file's
        # answer, in its cycle and afterwards: only the register file's answer is seen.
        ctx.set(dut.bus.addr, 0x004)
        ctx.set(dut.bus.w_data, 0xABCD)
        ctx.set(dut.bus.w_en, 1)
        await ctx.tick()
        ctx.set(dut.bus.w_en, 0)
        ctx.set(ram.ack, 1)
        ctx.set(ram.err, 1)
        for cycle in range(1, REGISTER_LATENCY + 1):
            _, _, ack, err = await ctx.tick().sample(dut.bus.ack, dut.bus.err)
            assert (ack, err) == ((1, 0) if cycle == REGISTER_LATENCY else (0, 0)), cycle
        await initiator.idle(ctx, 3)
        ctx.set(ram.ack, 0)
        assert await initiator.read(ctx, 0x004) == (0xABCD, False)
    run(dut, bench)


# --- the slice's map ------------------------------------------------------------------------------

def small_slice_config():
    return NDPConfig(trigger=TriggerConfig(filter_entries=4),
                     engine=EngineConfig(instruction_words=64, argument_blocks=2, scratchpad_bytes=256))


@pytest.mark.parametrize("config", [small_slice_config(), pytest.param(NDPConfig(), marks=pytest.mark.slow)],
                         ids=["small", "default"])
def test_every_word_of_the_slices_windows(config):
    """The host writes then reads every word of the instruction memory, the argument blocks
    and the scratchpad through the decoder, each target answering after 1..5 cycles."""
    registers = register_map(config)
    dut = Harness(registers)
    targets = window_targets(dut, seed=5)
    generator = random.Random(6)
    written = {window.name: [generator.getrandbits(32) for _ in range(window.size // 4)]
               for window in registers.windows}
    initiator = Initiator(dut.bus)
    reads = {}

    async def bench(ctx):
        assert await initiator.read(ctx, registers["id"].address) == (MAGIC, False)
        for window in registers.windows:
            for index, value in enumerate(written[window.name]):
                assert not await initiator.write(ctx, window.base + 4 * index, value)
        for window in registers.windows:
            reads[window.name] = [(await initiator.read(ctx, window.base + 4 * index))
                                  for index in range(window.size // 4)]
        for window in registers.windows:
            # One past the end: unmapped.
            assert await initiator.read(ctx, window.end) == (0, True)
    run(dut, bench, targets.values())
    for window in registers.windows:
        assert reads[window.name] == [(value, False) for value in written[window.name]], window.name
        assert targets[window.name].words == written[window.name]
    assert set(initiator.latencies) == {1, 2, 3, 4, 5}
