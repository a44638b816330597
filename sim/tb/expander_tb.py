"""cocotb test of the expander slice: K GPUs write their gradients, the engine reduces them
and runs the optimizer (docs/ndpxnet-rtl.md).

The launching side (:mod:`matndp.sim.flows.expander_run`) writes a job directory and names it in
``MATNDP_JOB``: ``job.json`` (the configuration and port count; per tensor the kernel, its
argument words, filter range, expected count, arrival gathering and the regions to place
and read back; per GPU its accesses, its start delay and back-pressure; memory timing) and
one ``.npy`` file per region to place. The test places the regions in the memory model,
has the runtime load the kernels, write the arguments and program one
entry per tensor over the register bus, lets every GPU issue its accesses on its own port,
waits until every entry is complete (or, when a GPU stops short, until nothing moves any
more, or a cycle limit) and writes ``result.json`` and one ``.npy`` file per region read
back.
"""

import json
import os
import pathlib

import numpy as np

import cocotb
from cocotb.triggers import ClockCycles as WaitCycles, RisingEdge

from matndp.hw.arbiter import with_id_width
from matndp.hw.expander import merged_config
from matndp.hw.layouts import request_layout, response_layout
from matndp.host.kernels.image import KernelImage, Section
from matndp.host.runtime import Gathering, NDPRuntime
from matndp.sim.drivers.csr_adapter import SimulatedCSRBus, call_runtime
from matndp.sim.designs import config_from_json
from matndp.sim.drivers.csr import CSRDriver
from matndp.sim.drivers.memory_port import ReadTagGate
from matndp.sim.drivers.packing import StructCodec
from matndp.sim.drivers.pause import NoPause, RandomPause
from matndp.sim.drivers.stream import CycleLoop, ClockCycles, StreamMonitor, StreamSink, StreamSource
from matndp.sim.drivers.memory_model import MemoryModel, MemoryTiming
from matndp.sim.tb.engine_tb import RisingWatch


CLOCK_NS = 10
# Cycles without a completion, a GPU transfer or a memory request after which a run whose
# GPUs stopped short is over: its entries stay pending.
QUIET_CYCLES = 4000


def _pause(probability):
    return RandomPause(probability) if probability else NoPause()


class DelayedSource(StreamSource):
    """A GPU's request stream that offers nothing before cycle ``start``."""

    def __init__(self, *args, start, cycles, **kwargs):
        super().__init__(*args, **kwargs)
        self.start, self.cycles = start, cycles

    def may_offer(self):
        return self.cycles.now() >= self.start


async def arm_tensors(runtime, job, now):
    """Have ``runtime`` load each tensor's kernel, write its argument block and program
    its filter entry (gathering its K writes of each sector), as ``job``
    describes them; returns the cycle (``now()``) at which the last entry was armed."""
    tensors = job["tensors"]
    await call_runtime(runtime.probe)
    await call_runtime(runtime.set_watchdog, job["watchdog"])
    await call_runtime(runtime.write_fields, "irq_enable", mask=(1 << len(tensors)) - 1)
    loaded = {}
    for index, tensor in enumerate(tensors):
        kernel = tensor["kernel"]
        if kernel["name"] not in loaded:
            image = KernelImage(kernel["name"], tuple(int(word, 16) for word in kernel["words"]),
                                {Section[name]: start for name, start in kernel["sections"].items()},
                                uses_atomics=kernel["uses_atomics"])
            loaded[kernel["name"]] = await call_runtime(runtime.load_kernel, image)
        await call_runtime(runtime.write_arguments, index, tensor["arguments"])
    armed = None
    for index, tensor in enumerate(tensors):
        entry = tensor["entry"]
        await call_runtime(runtime.program, index, loaded[tensor["kernel"]["name"]].filter_range(
            entry["base"], entry["size"], on_write=True, on_read=False,
            expected=entry["expected"], arg_index=index, gather=Gathering(**entry["gather"])))
        armed = now()
    return armed


async def run_summary(runtime, done_at, error, armed_cycle, finished_cycle, gradient_cycles):
    """The part of ``result.json`` every expander testbench writes: per entry whether and
    when (``done_at``) it completed and its counts; the engine's ``error``; the run's
    cycles (``gradient_cycles``: those of the gradient writes)."""
    entries = []
    for index, done in enumerate(done_at):
        entries.append({
            "complete": done is not None,
            "done_cycle": done,
            "hits": await call_runtime(runtime.hits, index),
            "completed": await call_runtime(runtime.completed, index),
            "drained": await call_runtime(runtime.drained, index),
        })
    return {
        "entries": entries,
        "complete": all(entry["complete"] for entry in entries),
        "error": None if error is None else [error[0], error[1], error[2].name],
        "armed_cycle": armed_cycle,
        "finished_cycle": finished_cycle,
        "first_gradient_write_cycle": min(gradient_cycles, default=None),
        "last_gradient_write_cycle": max(gradient_cycles, default=None),
    }


@cocotb.test()
async def expander_reduction(dut):
    job_dir = pathlib.Path(os.environ["MATNDP_JOB"])
    job = json.loads((job_dir / "job.json").read_text())
    config = config_from_json(json.dumps(job["config"]), "job.json config")
    ports = job["ports"]
    slice_config = merged_config(config, ports)
    seed = job["seed"]

    cycles = ClockCycles(CLOCK_NS)
    loop = CycleLoop(dut.clk, cycles, reset=dut.rst)
    requests = StructCodec(request_layout(config))
    responses = StructCodec(response_layout(config))
    gpus, sinks = [], []
    started_at = None
    for port, gpu_job in enumerate(job["gpus"]):
        source = loop.add(DelayedSource(dut, f"gpu__{port}__req", codec=requests,
                                        pause=_pause(gpu_job["pressure"]), seed=seed + 10 * port,
                                        start=0, cycles=cycles))
        sink = loop.add(StreamSink(dut, f"gpu__{port}__resp", codec=responses,
                                   pause=_pause(gpu_job["response_pressure"]), seed=seed + 10 * port + 1))
        source.gate = loop.add(ReadTagGate(source, sink))
        gpus.append(source)
        sinks.append(sink)
    memory_pressure = job["memory_pressure"]
    timing = MemoryTiming(latency=job["memory_latency"], request_pause=_pause(memory_pressure),
                          response_pause=_pause(memory_pressure), reorder=job["reorder"])
    memory = loop.add(MemoryModel(dut, with_id_width(slice_config, slice_config.mem_id_width),
                                  timing, seed=seed + 3))
    monitors = [loop.add(StreamMonitor(dut, prefix, record=False))
                for prefix in ("mem__req", *(f"gpu__{port}__resp" for port in range(ports)))]
    csr = CSRDriver(dut, dut.clk)
    runtime = NDPRuntime(SimulatedCSRBus(csr), slice_config)
    irq = loop.add(RisingWatch(dut.irq))
    tensors = job["tensors"]
    for tensor in tensors:
        for region in tensor["place"]:
            memory.store.load(region["addr"], np.load(job_dir / region["file"]))

    dut.mem_write_error.value = 0
    await loop.start()

    armed_cycle = await arm_tensors(runtime, job, cycles.now)

    # Each GPU's accesses: its gradient writes, and unrelated accesses of a region of its
    # own that no entry watches (what a read must return follows from its writes before).
    unrelated = [dict() for _ in range(ports)]
    expected_reads = [dict() for _ in range(ports)]
    gradient_writes = []
    for port, gpu_job in enumerate(job["gpus"]):
        items = []
        tag = 0
        for access in gpu_job["accesses"]:
            data = int(access["data"], 16)
            if access["unrelated"]:
                if access["write"]:
                    unrelated[port][access["addr"]] = data
                else:
                    expected_reads[port].setdefault(tag, []).append(unrelated[port].get(access["addr"], 0))
            items.append({"addr": access["addr"], "write": int(access["write"]), "data": data,
                          "mask": access["mask"], "id": tag})
            tag = (tag + 1) % (1 << config.id_width)
        gradient_writes.append([n for n, access in enumerate(gpu_job["accesses"]) if not access["unrelated"]])
        gpus[port].start = armed_cycle + gpu_job["delay"]
        gpus[port].send_nowait(items)

    # Every 64 cycles: which entries are complete, and whether anything still moves (a
    # run whose GPUs stopped short ends when nothing has for QUIET_CYCLES).
    done_at = [None] * len(tensors)
    stopped_short = any(gpu_job["stop"] for gpu_job in job["gpus"])
    quiet_since, last_activity = cycles.now(), None
    error = None
    while None in done_at and error is None and cycles.now() - armed_cycle < job["cycle_limit"]:
        await WaitCycles(dut.clk, 64)
        done = await call_runtime(runtime.done_mask)
        done_at = [at if at is not None or not done >> index & 1 else cycles.now()
                   for index, at in enumerate(done_at)]
        error = await call_runtime(runtime.error)
        if stopped_short:
            activity = ([await call_runtime(runtime.completed, index) for index in range(len(tensors))],
                        sum(g.sent for g in gpus), len(memory.requests))
            if activity != last_activity:
                last_activity, quiet_since = activity, cycles.now()
            elif all(g.idle for g in gpus) and cycles.now() - quiet_since >= QUIET_CYCLES:
                break
    if len(tensors) == 1 and done_at[0] is not None:
        done_at[0] = irq.cycle
    finished_cycle = cycles.now()
    reads = [sum(1 for item in g.items + [item for _, item in g.queue] if not item["write"]) for g in gpus]
    for _ in range(20_000):
        if all(len(sinks[port].items) >= len([i for i in gpus[port].items if not i["write"]])
               for port in range(ports)) and memory.idle:
            break
        await RisingEdge(dut.clk)
    await WaitCycles(dut.clk, 16)

    summary = await run_summary(runtime, done_at, error, armed_cycle, finished_cycle,
                                gradient_cycles=[gpus[port].transfer_cycles[n] for port in range(ports)
                                                 for n in gradient_writes[port] if n < gpus[port].sent])
    for tensor in tensors:
        for region in tensor["read_back"]:
            data = bytearray()
            for offset in range(0, region["bytes"], config.sector_bytes):
                data += memory.store.read(region["addr"] + offset).to_bytes(config.sector_bytes, "little")
            np.save(job_dir / region["file"], np.frombuffer(bytes(data[:region["bytes"]]), dtype=np.uint8))

    # Unrelated reads returned what the port's own order says (a tag is reused only after
    # its response); unrelated writes reached memory unchanged.
    unrelated_mismatches = 0
    for port in range(ports):
        seen = {}
        for item in sinks[port].items:
            position = seen.get(item["id"], 0)
            seen[item["id"]] = position + 1
            wanted = expected_reads[port].get(item["id"], [])
            if position >= len(wanted) or item["data"] != wanted[position]:
                unrelated_mismatches += 1
        for addr, data in unrelated[port].items():
            unrelated_mismatches += memory.store.read(addr) != data
    source_bit = 1 << (slice_config.mem_id_width - 1)
    ndp = [request for request in memory.requests if request["id"] & source_bit]
    result = {
        **summary,
        "gpu_sent": [g.sent for g in gpus],
        "gpu_offered": [g.sent + len(g.queue) for g in gpus],
        "gpu_reads": reads,
        "gpu_responses": [len(sink.items) for sink in sinks],
        "gpu_memory_requests": len(memory.requests) - len(ndp),
        "ndp_reads": sum(1 for request in ndp if not request["write"]),
        "ndp_writes": sum(1 for request in ndp if request["write"]),
        "unrelated_mismatches": unrelated_mismatches,
        "stream_rule_violations": sum(len(monitor.violations) for monitor in monitors),
        "event_count": await call_runtime(runtime.event_count),
        "instructions": (await call_runtime(runtime.read_fields, "instructions"))["count"],
        # Cycles a GPU request was held because the trigger's event queue was full.
        "stall_cycles": await call_runtime(runtime.stall_cycles),
        # Every access the memory port took: its cycle, and 1 for the engine's, 0 for a GPU's.
        "memory_requests": [[cycle, int(bool(request["id"] & source_bit))]
                            for cycle, request in zip(memory.request_cycles, memory.requests)],
    }
    (job_dir / "result.json").write_text(json.dumps(result, indent=2))
