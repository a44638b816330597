"""A batch job (:mod:`matndp.sim.batch.job`) carried out cycle by cycle with the Python
drivers, on the slice alone: what the batch harness does, written with the per-cycle
testbenches' parts (stream source and sink, memory model, read-tag gate, monitors). Its
logs have the harness's format, so the two can be compared line by line, and its speed is
the per-cycle testbench's.

``MATNDP_BATCH_JOB`` names the job directory. The memory model has no region map: an
address outside the image reads as zero (the harness answers it with an error), so a job
replayed here keeps to mapped addresses. Its pause patterns draw from Python's generator,
not the harness's xorshift sequence: the two agree cycle for cycle only without pauses and
with in-order memory.
"""

from collections import deque
import os

import numpy as np

import cocotb
from cocotb.triggers import Event, RisingEdge

from matndp.hw.arbiter import with_id_width
from matndp.hw.layouts import request_layout, response_layout
from matndp.sim.batch.executor import CLOCK_NS, JobExecutor
from matndp.sim.batch.parameters import UNTIL, SliceFormats
from matndp.sim.drivers.memory_port import ReadTagGate
from matndp.sim.drivers.packing import StructCodec
from matndp.sim.drivers.pause import NoPause, RandomPause
from matndp.sim.drivers.stream import (ClockCycles, CycleLoop, Participant, StreamMonitor,
                                       StreamSink, StreamSource)
from matndp.sim.drivers.memory_model import MemoryModel, MemoryTiming


def _pause(probability):
    return RandomPause(probability) if probability else NoPause()


class GappedSource(StreamSource):
    """A source whose items each wait a number of idle cycles after the previous transfer
    (or the phase's start) before their offer, counted only while the phase runs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.gaps = deque()
        self.idle_cycles = 0
        self.hold = True
        self._counting = False

    def start_phase(self):
        self.idle_cycles = 0
        self.hold = False

    def may_offer(self):
        return self.idle_cycles >= self.gaps[0]

    def drive(self):
        self._counting = not self.hold
        super().drive()

    def sample(self, now):
        offering = self._offering
        super().sample(now)
        if offering and not self._offering:
            self.gaps.popleft()
            self.idle_cycles = 0
        elif not offering and self._counting:
            self.idle_cycles += 1


class LevelLog(Participant):
    def __init__(self, signal):
        self.signal = signal
        self.level = 0
        self.changes = []

    def sample(self, now):
        level = int(self.signal.value)
        if level != self.level:
            self.changes.append((now, level))
            self.level = level


class PhaseControl(Participant):
    """Ends a phase in the cycle the harness would: after the transfers of the cycle in
    which its conditions hold or its budget runs out. Added to the loop last."""

    def __init__(self, bench):
        self.bench = bench
        self.active = False
        self.ended = Event()

    def begin(self, step):
        self.step = step
        self.cycles = 0
        self.responses = len(self.bench.gpu_responses.items)
        self.active = True
        self.ended.clear()

    def sample(self, now):
        if not self.active:
            return
        bench = self.bench
        step = self.step
        self.cycles += 1
        until = step["until"]
        sent = not bench.gpu.queue
        conditions = {
            "sent": sent,
            "answered": sent and bench.gate.outstanding_reads() == 0,
            "responses": len(bench.gpu_responses.items) - self.responses >= step["responses"],
            "irq": bool(int(bench.dut.irq.value)),
        }
        met = until != 0 and all(conditions[name] for name, bit in UNTIL.items() if until >> bit & 1)
        over = self.cycles >= step["budget"]
        if met or over:
            self.active = False
            bench.gpu.hold = True
            self.reason = "until" if met else "budget"
            self.end_cycle = now
            self.ended.set()


class ReplayExecutor(JobExecutor):
    def __init__(self, dut, directory):
        super().__init__(dut, directory)
        config = self.config
        timing = self.timing
        self.formats = SliceFormats(config)
        self.clock = ClockCycles(CLOCK_NS)
        self.loop = CycleLoop(dut.clk, self.clock, reset=dut.rst)
        self.requests = StructCodec(request_layout(config))
        self.memory_requests = StructCodec(request_layout(with_id_width(config, config.mem_id_width)))
        self.responses = StructCodec(response_layout(config))
        seed = timing.seed
        self.gpu = self.loop.add(GappedSource(dut, "gpu__req", codec=self.requests,
                                              pause=_pause(timing.gpu_request_pause), seed=seed))
        self.gpu_responses = self.loop.add(StreamSink(dut, "gpu__resp", codec=self.responses,
                                                      pause=_pause(timing.gpu_response_pause),
                                                      seed=seed + 1))
        self.gate = self.gpu.gate = self.loop.add(ReadTagGate(self.gpu, self.gpu_responses))
        sector = config.sector_bytes
        memory_timing = MemoryTiming(
            latency=timing.latency,
            bytes_per_cycle=None if timing.interval == 1 else sector / timing.interval,
            request_pause=_pause(timing.memory_request_pause),
            response_pause=_pause(timing.memory_response_pause), reorder=timing.reorder > 1)
        self.memory = self.loop.add(MemoryModel(dut, with_id_width(config, config.mem_id_width),
                                                memory_timing, seed=seed + 3))
        self.events = self.loop.add(StreamMonitor(dut, "events"))
        self.irq = self.loop.add(LevelLog(dut.irq))
        self.phase = self.loop.add(PhaseControl(self))
        self.layout = None

    async def start(self):
        dut = self.dut
        dut.mem_write_error.value = 0
        await self.loop.start()

    def cycle(self):
        return self.clock.now()

    async def load(self, step):
        key = step["key"]
        formats = self.formats
        if step["requests"] is not None:
            columns = formats.stimulus.unpack(self.file(key, "requests").read_bytes())
            data = [int.from_bytes(row.tobytes(), "little") for row in columns["data"]]
            items = [{"addr": int(a), "write": int(w), "data": d, "mask": int(m), "id": int(i)}
                     for a, w, d, m, i in zip(columns["addr"], columns["write"], data,
                                              columns["mask"], columns["id"])]
            self.gpu.queue.clear()
            self.gpu.gaps.clear()
            self.gpu.send_nowait(items)
            self.gpu.gaps.extend(int(gap) for gap in columns["gap"])
        if step["image"] is not None:
            sectors = formats.sector.unpack(self.file(key, "image").read_bytes())["data"]
            regions = formats.region.unpack(self.file(key, "regions").read_bytes())
            store = self.memory.store
            store.sectors.clear()
            sector = self.config.sector_bytes
            for base, count, first in zip(regions["base_sector"], regions["sectors"],
                                          regions["image_sector"]):
                store.load(int(base) * sector, sectors[int(first):int(first) + int(count)])
            self.layout = regions
        cycle = self.cycle()
        await RisingEdge(self.dut.clk)
        return cycle

    async def run(self, step):
        start_cycle = self.cycle()
        self.phase.begin(step)
        self.gpu.start_phase()
        await self.phase.ended.wait()
        await RisingEdge(self.dut.clk)
        return {"start_cycle": start_cycle, "end_cycle": self.phase.end_cycle,
                "cycles": self.phase.cycles, "reason": self.phase.reason,
                "sent": len(self.gpu.items), "gpu_requests": len(self.gpu.items),
                "gpu_responses": len(self.gpu_responses.items),
                "memory_requests": len(self.memory.requests), "unmapped": 0,
                "gated_cycles": self.gpu.gated_cycles}

    async def dump(self, step):
        cycle = self.cycle()
        store = self.memory.store
        sector = self.config.sector_bytes
        rows = []
        for base, count in zip(self.layout["base_sector"], self.layout["sectors"]):
            for index in range(int(base), int(base) + int(count)):
                rows.append(store.read(index * sector).to_bytes(sector, "little"))
        data = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(-1, sector)
        name = f"image_out-{step['key']}.hex"
        (self.directory / name).write_bytes(self.formats.sector.pack({"data": data}))
        return name, cycle

    def _write_log(self, name, cycles, words, digits):
        lines = "".join(f"{cycle:016x} {word:0{digits}x}\n" for cycle, word in zip(cycles, words))
        (self.directory / f"{name}.log").write_text(lines)

    async def finish(self):
        formats = self.formats
        logs = {
            "gpu_requests": (self.gpu.transfer_cycles, [self.requests.pack(i) for i in self.gpu.items],
                             formats.request.digits),
            "mem_requests": (self.memory.request_cycles,
                             [self.memory_requests.pack(r) for r in self.memory.requests],
                             formats.memory_request.digits),
            "gpu_responses": (self.gpu_responses.transfer_cycles,
                              [self.responses.pack(r) for r in self.gpu_responses.items],
                              formats.response.digits),
            "events": (self.events.transfer_cycles, self.events.items, formats.event.digits),
            "irq": ([cycle for cycle, _ in self.irq.changes], [level for _, level in self.irq.changes],
                    formats.irq.digits),
        }
        for name in self.logs:
            self._write_log(name, *logs[name])


@cocotb.test()
async def batch_job(dut):
    await ReplayExecutor(dut, os.environ["MATNDP_BATCH_JOB"]).execute()
