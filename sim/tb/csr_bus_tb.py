"""cocotb tests of the register bus with wait states: the slice's register map behind its
decoder, each window's bus a port of the design with a :class:`~sim.drivers.csr.CSRTarget`
behind it, driven by the host runtime through the co-simulation adapter.

The design's ports: ``bus__*`` (the host's bus) and ``windows__<name>__*`` per window.
Parameters come from the environment: MATNDP_SEED (data and wait states).
"""

import os

import cocotb
import numpy
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles as WaitCycles, RisingEdge

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.host.csr_bus import CSRAccessError
from matndp.host.runtime import FilterRange, NDPRuntime, WindowError
from matndp.sim.drivers.csr_adapter import SimulatedCSRBus, call_runtime
from matndp.sim.drivers.csr import CSRBusError, CSRDriver, CSRTarget
from matndp.sim.drivers.stream import ClockCycles, CycleLoop


__all__ = ["CONFIG", "TOPLEVEL"]


#: The configuration the design is built with (small windows, so that every word is visited).
CONFIG = NDPConfig(trigger=TriggerConfig(filter_entries=4),
                   engine=EngineConfig(instruction_words=64, argument_blocks=2, scratchpad_bytes=256))
TOPLEVEL = "csr_windows"
CLOCK_NS = 10


class Bench:
    def __init__(self, dut, *, seed, latency=(1, 5), timeout=64):
        self.dut = dut
        self.driver = CSRDriver(dut, dut.clk, prefix="bus", timeout=timeout)
        self.runtime = NDPRuntime(SimulatedCSRBus(self.driver), CONFIG)
        self.loop = CycleLoop(dut.clk, ClockCycles(CLOCK_NS))
        self.targets = {
            window.name: self.loop.add(CSRTarget(dut, f"windows__{window.name}", window.size,
                                                 latency=latency, seed=seed + index))
            for index, window in enumerate(self.runtime.registers.windows)}

    async def start(self):
        cocotb.start_soon(Clock(self.dut.clk, CLOCK_NS, unit="ns").start())
        self.dut.rst.value = 1
        await WaitCycles(self.dut.clk, 3)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)
        cocotb.start_soon(self.loop.run())


async def _raises(kind, message, awaitable):
    """Await ``awaitable``, which must raise ``kind`` with ``message`` in its text."""
    try:
        await awaitable
    except kind as error:
        assert message in str(error), (message, str(error))
    else:
        raise AssertionError(f"no {kind.__name__} ({message})")


@cocotb.test()
async def windows_through_the_runtime(dut):
    """The runtime writes then reads every word of every window while the targets answer after
    1..5 cycles; registers work beside them; refused accesses surface as errors."""
    seed = int(os.environ.get("MATNDP_SEED", "1"))
    bench = Bench(dut, seed=seed)
    await bench.start()
    runtime = bench.runtime
    await call_runtime(runtime.probe)
    generator = numpy.random.default_rng(seed)
    written = {}
    for window in runtime.registers.windows:
        words = generator.integers(0, 1 << 32, window.size // 4, dtype=numpy.uint64).astype(numpy.uint32)
        written[window.name] = words
        await call_runtime(runtime.write_window, window.name, 0, words)
    for window in runtime.registers.windows:
        target = bench.targets[window.name]
        assert bytes(target.memory) == written[window.name].astype("<u4").tobytes(), window.name
        read = await call_runtime(runtime.read_window, window.name, 0, window.size // 4)
        assert read.tolist() == written[window.name].tolist(), window.name
        # Every word once in each direction, at its offset within the window.
        assert [(write, offset) for _, write, offset in target.accesses] == \
            [(True, 4 * i) for i in range(window.size // 4)] + [(False, 4 * i) for i in range(window.size // 4)]
    assert {wait for target in bench.targets.values() for wait in target.waits} == {1, 2, 3, 4, 5}

    # Registers still work, with a 64-bit instruction written as two words between accesses.
    entry = FilterRange(0x12_3456_7800, 0x100, kernel_pc=5, arg_index=1, expected=3)
    await call_runtime(runtime.program, 2, entry)
    await call_runtime(runtime.write_window, "imem", 8, numpy.array([0x0123_4567_89AB_CDEF], dtype=numpy.uint64))
    assert (await call_runtime(runtime.read_window, "imem", 8, 2)).view(numpy.uint64).tolist() == \
        [0x0123_4567_89AB_CDEF]
    assert (await call_runtime(runtime.read_fields, "entry2.kernel_pc"))["pc"] == 5

    # Refused: past a window's end (by the device), misaligned, outside every window.
    imem = runtime.registers.window("imem")
    for call, message in ((lambda: runtime.bus.read_words(imem.end - 4, 2), f"reading {imem.end:#x}"),
                          (lambda: runtime.bus.write_words(imem.end - 4, [1, 2]), f"to {imem.end:#x}"),
                          (lambda: runtime.bus.read(imem.base + 2), f"reading {imem.base + 2:#x}"),
                          (lambda: runtime.bus.write(0x4_0000, 1), "to 0x40000")):
        await _raises(CSRAccessError, message, call_runtime(call))
    await _raises(WindowError, "leave its", call_runtime(runtime.read_window, "imem", imem.size - 4, 2))


@cocotb.test()
async def an_unanswered_access_times_out_by_name(dut):
    """A target that never answers makes the driver give up after its timeout with an error
    naming the access; a late answer after the driver moved on is dropped by the decoder."""
    bench = Bench(dut, seed=2, latency=(5, 5), timeout=3)
    await bench.start()
    driver = bench.driver
    registers = bench.runtime.registers
    imem = registers.window("imem").base
    args = registers.window("args").base
    bench.targets["imem"].silent = True
    await _raises(CSRBusError, f"no acknowledgement within 3 cycles for the read of {imem:#x}",
                  driver.read(imem))
    await _raises(CSRBusError, f"for the write of 0x5 to {imem + 4:#x}", driver.write(imem + 4, 5))
    # A target slower than the timeout: the driver gives up, and the next access (a
    # register, answered in the cycle of the late answer) reads right, not the late word.
    bench.targets["args"].memory[0:4] = b"\xff\xff\xff\xff"
    await _raises(CSRBusError, f"read of {args:#x}", driver.read(args))
    magic = registers["id"].reset_value
    for _ in range(4):
        assert await driver.read(registers["id"].address) == (magic, False)
    # Within the timeout every access completes.
    driver.timeout = 5
    assert not await driver.write(args + 8, 0xABCD)
    assert await driver.read(args + 8) == (0xABCD, False)
