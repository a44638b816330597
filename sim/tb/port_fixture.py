"""The clock, reset and cycle loop of the driver and memory-model testbenches, around
:class:`~matndp.sim.designs.MemoryPortFIFOs`. Parameters come from the environment:

MATNDP_CONFIG     the design's configuration (:func:`matndp.sim.designs.config_environment`)
MATNDP_DEPTH      entries of each of its FIFOs
"""

import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles as WaitCycles, RisingEdge

from matndp.hw.layouts import request_layout, response_layout
from matndp.sim.designs import config_from_environment
from matndp.sim.drivers.packing import StructCodec
from matndp.sim.drivers.stream import ClockCycles, CycleLoop


__all__ = ["PortBench", "CLOCK_NS"]


CLOCK_NS = 10


class PortBench:
    def __init__(self, dut):
        self.dut = dut
        self.config = config_from_environment()
        self.fifo_depth = int(os.environ.get("MATNDP_DEPTH", "4"))
        self.requests = StructCodec(request_layout(self.config))
        self.responses = StructCodec(response_layout(self.config))
        self.cycles = ClockCycles(CLOCK_NS)
        self.loop = CycleLoop(dut.clk, self.cycles, reset=dut.rst)

    def add(self, participant):
        return self.loop.add(participant)

    async def start(self):
        """Clock, a reset of the design, then the cycle loop."""
        cocotb.start_soon(Clock(self.dut.clk, CLOCK_NS, unit="ns").start())
        self.dut.rst.value = 1
        await WaitCycles(self.dut.clk, 2)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)
        cocotb.start_soon(self.loop.run())

    async def reset(self, cycles):
        """Hold reset high for ``cycles`` cycles, from the next edge on; returns the first
        reset cycle."""
        await RisingEdge(self.dut.clk)
        first = self.cycles.now()
        self.dut.rst.value = 1
        await WaitCycles(self.dut.clk, cycles)
        self.dut.rst.value = 0
        return first

    async def wait(self, cycles):
        await WaitCycles(self.dut.clk, cycles)

    async def until(self, condition, limit, what):
        """Wait, cycle by cycle, until ``condition()`` holds; fail after ``limit`` cycles."""
        for _ in range(limit):
            if condition():
                return
            await RisingEdge(self.dut.clk)
        raise AssertionError(f"{what} did not happen within {limit} cycles")
