"""cocotb test of the NDP slice with its engine: kernel launches, end to end.

The launching side (:mod:`matndp.sim.flows.kernel_run`) writes a job directory and names it in
``MATNDP_JOB``: ``job.json`` (the configuration; per launch the kernel's instruction words
and entry points, the argument words, the filter range, the regions to place and to read
back; the GPU's accesses; the timing and back-pressure to use) and one ``.npy`` file per
region to place. The test places the regions in the memory model, has the runtime load
each kernel, write its arguments (launch *i* in block *i*) and program entry *i* over the
register bus, issues the GPU accesses (with unrelated traffic mixed in when asked), waits
until every entry is complete (or an error, or a cycle limit), and writes ``result.json``
and one ``.npy`` file per region read back.
"""

import json
import os
import pathlib
import random
import time

import numpy as np

import cocotb
from cocotb.triggers import ClockCycles as WaitCycles, RisingEdge

from matndp.hw.arbiter import with_id_width
from matndp.hw.layouts import request_layout, response_layout
from matndp.host.kernels.image import KernelImage, Section
from matndp.host.runtime import FilterRange, NDPRuntime
from matndp.sim.drivers.csr_adapter import SimulatedCSRBus, call_runtime
from matndp.sim.designs import config_from_json
from matndp.sim.drivers.csr import CSRDriver
from matndp.sim.drivers.memory_port import ReadTagGate
from matndp.sim.drivers.packing import StructCodec
from matndp.sim.drivers.pause import CyclePause, NoPause, RandomPause
from matndp.sim.drivers.stream import (ClockCycles, CycleLoop, Participant, StreamMonitor,
                                       StreamSink, StreamSource)
from matndp.sim.drivers.memory_model import MemoryModel, MemoryTiming


CLOCK_NS = 10


def _pause(probability):
    return RandomPause(probability) if probability else NoPause()


class TransferStalls(Participant):
    """For each item ``source`` transfers, the cycles its offers had been refused until then
    (``StreamSource.refused_cycles`` at the transfer), in transfer order."""

    def __init__(self, source):
        self.source = source
        self.refused = []

    def sample(self, now):
        while len(self.refused) < self.source.sent:
            self.refused.append(self.source.refused_cycles)


class RisingWatch(Participant):
    """The first cycle in which ``signal`` is high, exactly (polling over the register bus
    would see it only to the poll's period)."""

    def __init__(self, signal):
        self.signal = signal
        self.cycle = None

    def sample(self, now):
        if self.cycle is None and int(self.signal.value):
            self.cycle = now


@cocotb.test()
async def kernel_launch(dut):
    job_dir = pathlib.Path(os.environ["MATNDP_JOB"])
    job = json.loads((job_dir / "job.json").read_text())
    config = config_from_json(json.dumps(job["config"]), "job.json config")
    seed = job["seed"]
    pressure = job["pressure"]

    cycles = ClockCycles(CLOCK_NS)
    loop = CycleLoop(dut.clk, cycles, reset=dut.rst)
    requests = StructCodec(request_layout(config))
    responses = StructCodec(response_layout(config))
    interval = job["gpu_interval"]
    gpu = loop.add(StreamSource(dut, "gpu__req", codec=requests, pause=_pause(pressure), seed=seed))
    gpu_stalls = loop.add(TransferStalls(gpu))
    gpu_responses = loop.add(StreamSink(dut, "gpu__resp", codec=responses, pause=_pause(pressure),
                                        seed=seed + 1))
    gpu.gate = loop.add(ReadTagGate(gpu, gpu_responses))
    timing = MemoryTiming(latency=job["memory_latency"], request_pause=_pause(pressure),
                          response_pause=_pause(pressure), reorder=job["reorder"])
    memory = loop.add(MemoryModel(dut, with_id_width(config, config.mem_id_width), timing,
                                  seed=seed + 3))
    monitors = [loop.add(StreamMonitor(dut, prefix, record=False)) for prefix in ("mem__req", "gpu__resp")]
    csr = CSRDriver(dut, dut.clk)
    runtime = NDPRuntime(SimulatedCSRBus(csr), config)

    irq = loop.add(RisingWatch(dut.irq))
    launches = job["launches"]
    for launch in launches:
        for region in launch["place"]:
            memory.store.load(region["addr"], np.load(job_dir / region["file"]))

    dut.mem_write_error.value = 0      # the memory model accepts every write
    await loop.start()

    await call_runtime(runtime.probe)
    await call_runtime(runtime.set_watchdog, job["watchdog"])
    await call_runtime(runtime.write_fields, "irq_enable", mask=(1 << len(launches)) - 1)
    loaded = []
    for index, launch in enumerate(launches):
        kernel = launch["kernel"]
        image = KernelImage(kernel["name"], tuple(kernel["words"]),
                            {Section[name]: start for name, start in kernel["sections"].items()},
                            uses_atomics=kernel["uses_atomics"])
        loaded.append(await call_runtime(runtime.load_kernel, image))
        await call_runtime(runtime.write_arguments, index, launch["arguments"])
    armed = []
    for index, launch in enumerate(launches):
        entry = launch["entry"]
        await call_runtime(runtime.program, index, loaded[index].filter_range(
            entry["base"], entry["size"], on_write=entry["on_write"], on_read=entry["on_read"],
            expected=entry["expected"], init_threads=entry["init_threads"],
            final_threads=entry["final_threads"], arg_index=index))
        armed.append(cycles.now())
    armed_cycle = armed[-1]

    rng = random.Random(seed + 5)
    items = []
    triggering = []         # per item: the launch whose entry it triggers, or None
    tag = 0
    # Unrelated traffic: reads and writes of a region no entry watches; what each read must
    # return follows from the writes before it in request order (memory keeps that order).
    unrelated = {}
    expected_reads = {}
    for access in job["accesses"]:
        for _ in range(job["unrelated_per_access"]):
            write = rng.random() < 0.5
            addr = job["unrelated_base"] + rng.randrange(64) * config.sector_bytes
            data = rng.getrandbits(8 * config.sector_bytes) if write else 0
            if write:
                unrelated[addr] = data
            else:
                expected_reads.setdefault(tag, []).append(unrelated.get(addr, 0))
            items.append({"addr": addr, "write": int(write), "data": data,
                          "mask": (1 << config.sector_bytes) - 1 if write else 0, "id": tag})
            triggering.append(None)
            tag = (tag + 1) % (1 << config.id_width)
        if not access["write"]:
            expected_reads.setdefault(tag, []).append(None)     # a triggering read
        items.append({"addr": access["addr"], "write": int(access["write"]),
                      "data": int(access["data"], 16), "mask": access["mask"], "id": tag})
        triggering.append(next(index for index, launch in enumerate(launches)
                               if 0 <= access["addr"] - launch["entry"]["base"]
                               < launch["entry"]["size"]))
        tag = (tag + 1) % (1 << config.id_width)
    started = time.time()
    if job["gpu_delay"]:
        # The producer starts later than the arming (an initializer run ahead of it).
        await WaitCycles(dut.clk, job["gpu_delay"])
    if interval > 1:
        # One offer every `interval` cycles, the first at once: the grid starts at the
        # arming (or after the delay); a refused offer waits, and the next starts on a
        # later slot of the grid.
        gpu.set_pause(CyclePause((0,) + (1,) * (interval - 1)), seed)
    gpu.send_nowait(items)
    reads = sum(1 for item in items if not item["write"])

    limit = job["cycle_limit"]
    everyone = (1 << len(launches)) - 1
    done_at = [None] * len(launches)
    error = None
    while cycles.now() - armed_cycle < limit:
        await WaitCycles(dut.clk, 64)
        if int(dut.irq.value):
            done = await call_runtime(runtime.done_mask)
            for index in range(len(launches)):
                if done >> index & 1 and done_at[index] is None:
                    done_at[index] = cycles.now()
            if done & everyone == everyone:
                break
        error = await call_runtime(runtime.error)
        if error is not None:
            break
    if error is None:
        error = await call_runtime(runtime.error)
    if len(launches) == 1 and done_at[0] is not None:
        done_at[0] = irq.cycle
    completed_cycle = cycles.now()
    for _ in range(20_000):
        if len(gpu_responses.items) >= reads and memory.idle:
            break
        await RisingEdge(dut.clk)
    await WaitCycles(dut.clk, 16)
    entries = []
    for index in range(len(launches)):
        # The entry's triggering accesses as the GPU's transfers: the stall cycles before the
        # first was taken, and the cycles from the last to the entry's completion.
        mine = [number for number, launch in enumerate(triggering) if launch == index]
        taken = len(mine) > 0 and mine[-1] < len(gpu.transfer_cycles)
        entries.append({
            "first_write_stall_cycles": gpu_stalls.refused[mine[0]] if taken else None,
            "tail_cycles": (done_at[index] - gpu.transfer_cycles[mine[-1]]
                            if taken and done_at[index] is not None else None),
            "complete": done_at[index] is not None,
            "error": (None if error is None or error[0] != index else
                      [error[0], error[1], error[2].name]),
            # Exact for one launch (the cycle irq rose), else to the 64-cycle poll.
            "cycles": (done_at[index] if done_at[index] is not None else completed_cycle) - armed[index],
            "hits": await call_runtime(runtime.hits, index),
            "completed": await call_runtime(runtime.completed, index),
            "drained": await call_runtime(runtime.drained, index),
        })
    counters = {
        "stall_cycles": await call_runtime(runtime.stall_cycles),
        "instructions": (await call_runtime(runtime.read_fields, "instructions"))["count"],
        "ndp_requests": (await call_runtime(runtime.read_fields, "ndp_requests"))["count"],
    }
    for region in (region for launch in launches for region in launch["read_back"]):
        data = bytearray()
        for offset in range(0, region["bytes"], config.sector_bytes):
            data += memory.store.read(region["addr"] + offset).to_bytes(config.sector_bytes, "little")
        np.save(job_dir / region["file"], np.frombuffer(bytes(data[:region["bytes"]]), dtype=np.uint8))
    # Every unrelated read returned what request order says; responses of one tag come
    # back in issue order (a tag is reused only after its response).
    unrelated_mismatches = 0
    seen = {}
    for item in gpu_responses.items:
        index = seen.get(item["id"], 0)
        seen[item["id"]] = index + 1
        wanted = expected_reads.get(item["id"], [])
        if index < len(wanted) and wanted[index] is not None and item["data"] != wanted[index]:
            unrelated_mismatches += 1
    gpu_requests = sum(1 for request in memory.requests if not request["id"] >> (config.mem_id_width - 1))
    result = {
        "entries": entries,
        "complete": all(entry["complete"] for entry in entries),
        "error": None if error is None else [error[0], error[1], error[2].name],
        "cycles": completed_cycle - armed_cycle,
        "gpu_requests": gpu_requests,
        # From the arming to the cycle the GPU's last request was taken.
        "gpu_last_request_cycles": (gpu.transfer_cycles[-1] - armed_cycle) if gpu.transfer_cycles else None,
        "ndp_memory_requests": len(memory.requests) - gpu_requests,
        "gpu_reads": reads,
        "gpu_responses": len(gpu_responses.items),
        "unrelated_read_mismatches": unrelated_mismatches,
        "stream_rule_violations": sum(len(monitor.violations) for monitor in monitors),
        "wall_s": time.time() - started,
        **counters,
    }
    (job_dir / "result.json").write_text(json.dumps(result, indent=2))
