"""cocotb side of the batch harness (``sim/harnesses/slice_harness.v``): carries out a batch
job (:mod:`matndp.sim.batch.job`) with no Python in the cycles of a phase.

``MATNDP_BATCH_JOB`` names the job directory. Between phases the host runtime drives the
register bus through the harness; a load copies the chunk's files to the names the harness
reads and strobes ``load``; a phase sets its conditions, strobes ``start`` and waits for
``done``. At the end the logs move into the job directory, with ``replay.txt``: the job's
port settings, register accesses, loads and phases as plain lines, which the stand-alone
Verilator driver (``sim/harnesses/slice_harness_main.cpp``) replays without Python.
"""

import os
import pathlib
import shutil

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from matndp.sim.batch.executor import CLOCK_NS, JobExecutor
from matndp.sim.batch.parameters import LOGS


class HarnessExecutor(JobExecutor):
    def __init__(self, dut, directory):
        super().__init__(dut, directory)
        self.replay = []
        self._recorded = 0

    def set(self, name, value):
        getattr(self.dut, name).value = value
        self.replay.append(f"set {name} {value}")

    def _record_accesses(self):
        for access in self.csr.accesses[self._recorded:]:
            if access[0] == "read":
                self.replay.append(f"csr_read {access[1]}")
            else:
                self.replay.append(f"csr_write {access[1]} {access[2]}")
        self._recorded = len(self.csr.accesses)

    async def start(self):
        dut = self.dut
        for name in ("load", "start", "dump", "flush", "load_what", "request_count", "image_count",
                     "region_count", "budget", "stop_when", "response_target"):
            self.set(name, 0)
        for name, value in self.timing.ports().items():
            self.set(name, value)
        self.set("log_enable", sum(1 << LOGS[name] for name in self.logs))
        Clock(dut.clk, CLOCK_NS, unit="ns").start()
        dut.rst.value = 1
        await ClockCycles(dut.clk, 3)
        dut.rst.value = 0
        self.replay.append("reset 3")
        await RisingEdge(dut.clk)

    def cycle(self):
        return int(self.dut.cycle.value)

    async def _strobe(self, name):
        """Raise input ``name`` for one cycle; returns once the harness has acted on it.
        It acts at the second edge (its inputs pass a register); the third is awaited
        because a clock edge resumes the testbench before the model has evaluated it."""
        self._record_accesses()
        getattr(self.dut, name).value = 1
        await RisingEdge(self.dut.clk)
        getattr(self.dut, name).value = 0
        await ClockCycles(self.dut.clk, 2)

    async def load(self, step):
        key = step["key"]
        what = 0
        names = []
        if step["requests"] is not None:
            shutil.copyfile(self.file(key, "requests"), "requests.hex")
            self.set("request_count", step["requests"])
            what |= 1
            names.append(self.file(key, "requests").name)
        if step["image"] is not None:
            shutil.copyfile(self.file(key, "image"), "image.hex")
            shutil.copyfile(self.file(key, "regions"), "regions.hex")
            self.set("image_count", step["image"])
            self.set("region_count", step["regions"])
            what |= 6
            names += [self.file(key, "image").name, self.file(key, "regions").name]
        self.set("load_what", what)
        await self._strobe("load")
        self.replay.append(f"load {what} {' '.join(names)}")
        # Loaded at the edge ending cycle load_cycle: the next cycle's requests see it.
        return int(self.dut.load_cycle.value) + 1

    async def run(self, step):
        dut = self.dut
        self.set("stop_when", step["until"])
        self.set("budget", step["budget"])
        self.set("response_target", step["responses"])
        self._record_accesses()
        dut.start.value = 1
        await RisingEdge(dut.clk)
        dut.start.value = 0
        self.replay.append("run")
        await RisingEdge(dut.done)
        # The other outputs of the edge that raised done may not have settled yet (Icarus
        # reports each change as it happens).
        await ReadOnly()
        reason = int(dut.stop_reason.value)
        cycles = int(dut.phase_cycles.value)
        # The phase runs from the cycle after phase_start_cycle.
        start_cycle = int(dut.phase_start_cycle.value)
        measured = {"start_cycle": start_cycle, "end_cycle": start_cycle + cycles, "cycles": cycles,
                    "reason": "until" if reason & 1 else "budget",
                    "sent": int(dut.sent.value), "gpu_requests": int(dut.gpu_requests.value),
                    "gpu_responses": int(dut.gpu_responses.value),
                    "memory_requests": int(dut.memory_requests.value),
                    "unmapped": int(dut.unmapped.value), "gated_cycles": int(dut.gated_cycles.value)}
        await RisingEdge(dut.clk)
        return measured

    async def retime(self, step):
        for name, value in step["ports"].items():
            self.set(name, value)

    async def dump(self, step):
        await self._strobe("dump")
        # Written at the edge ending cycle dump_cycle, before that cycle's write lands.
        cycle = int(self.dut.dump_cycle.value)
        name = f"image_out-{step['key']}.hex"
        shutil.move("image_out.hex", self.directory / name)
        self.replay.append(f"dump {name}")
        return name, cycle

    async def finish(self):
        await self._strobe("flush")
        self._record_accesses()
        # Where the cycles the logs count fall in the waveform's time: the cycle counter's
        # value right after a rising edge, and that edge's time (nothing is driven after).
        await RisingEdge(self.dut.clk)
        await ReadOnly()
        self.results["clock"] = {"cycle": self.cycle(), "time_ps": int(get_sim_time("ps")),
                                 "period_ps": CLOCK_NS * 1000}
        for name in LOGS:
            source = pathlib.Path(f"{name}.log")
            if source.exists():
                shutil.move(source, self.directory / source.name)
        (self.directory / "replay.txt").write_text("\n".join(self.replay) + "\n")


@cocotb.test()
async def batch_job(dut):
    await HarnessExecutor(dut, os.environ["MATNDP_BATCH_JOB"]).execute()
