"""cocotb test of the expander's FPGA top (hw/fpga/expander_top.py) with cocotbext-axi: one
``AxiMaster`` per GPU port, an ``AxiRam`` as memory, the registers through AXI4-Lite
(:class:`~matndp.sim.drivers.axi_lite.AXILiteCSRDriver`), random pauses on every channel
(docs/ndpxnet-rtl.md, "Running it").

It takes the job :mod:`matndp.sim.flows.expander_run` writes for the expander slice's own
testbench (``sim/tb/expander_tb.py``, whose set-up of the kernels, arguments, arrival
records and entries it shares) and plays each GPU's accesses as AXI bursts on its own port: runs of
consecutive gradient sectors as INCR bursts of 1 to ``MAX_BURST_SECTORS`` sectors (the
ragged last sector's unwritten bytes left out, so its strobes clear), the accesses of the
GPU's unrelated region as single-sector bursts, several bursts in flight. A GPU's pauses:
``pressure`` on AW, W and AR, ``response_pressure`` on B and R; memory's on all five of its
channels; the register port's on all five of its.

When every entry is complete, each GPU reads every updated tensor back through its own
port: what GPU 0 read is the run's output (the launching side compares it with the
golden); every other GPU's read must be byte-for-byte the same, and so must memory.
``result.json`` has the keys of the slice testbench's result that apply here.
"""

import json
import os
import pathlib
import random
import warnings

import numpy as np

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from cocotbext.axi import AxiBus, AxiMaster, AxiRam, AxiResp

from matndp.hw.expander import merged_config
from matndp.host.runtime import NDPRuntime
from matndp.sim.drivers.csr_adapter import SimulatedCSRBus, call_runtime
from matndp.sim.designs import config_from_json
from matndp.sim.drivers.axi_lite import AXILiteCSRDriver
from matndp.sim.drivers.pause import NoPause, RandomPause, pause_iterator
from matndp.sim.tb.expander_tb import arm_tensors, run_summary


# cocotbext-axi 0.1.28 calls APIs that cocotb 2 deprecates (Event.data, Task.kill(), ...).
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"cocotbext\.")

CLOCK_NS = 10
MAX_BURST_SECTORS = 16
# Bursts of one GPU in flight at once (AXI masters overlap their bursts).
IN_FLIGHT = 8
# Gradient bursts take ids 0 .. GRADIENT_IDS - 1 in turn (distinct sectors: AXI need not
# order them); the unrelated region's accesses one id of their own, so that its writes
# stay in order among themselves.
GRADIENT_IDS = 4
UNRELATED_ID = GRADIENT_IDS


def _now():
    return int(get_sim_time("ns")) // CLOCK_NS


def _pauses(probability, seed):
    return pause_iterator(RandomPause(probability) if probability else NoPause(), seed)


def _set_pauses(model, probability, seed):
    """Random pauses on the five channels of an ``AxiMaster`` or ``AxiRam``: with
    ``probability(channel)`` each cycle."""
    sides = {"aw": model.write_if, "w": model.write_if, "b": model.write_if,
             "ar": model.read_if, "r": model.read_if}
    for number, (name, side) in enumerate(sides.items()):
        getattr(side, f"{name}_channel").set_pause_generator(_pauses(probability(name), seed + number))


async def _finished(task):
    if not task.done():
        await task


def axi_operations(accesses, sector_bytes, rng):
    """(kind, address, data or length) per AXI operation of one GPU's ``accesses``:
    gradient sectors at consecutive addresses joined into INCR bursts of random length."""
    operations, run = [], None
    full = (1 << sector_bytes) - 1
    for access in accesses:
        data = int(access["data"], 16).to_bytes(sector_bytes, "little")
        if access["unrelated"]:
            run = None
            if access["write"]:
                operations.append(("unrelated_write", access["addr"], data))
            else:
                operations.append(("unrelated_read", access["addr"], sector_bytes))
            continue
        mask = access["mask"]
        valid = mask.bit_length()
        if mask != (1 << valid) - 1:
            raise ValueError(f"a gradient write at {access['addr']:#x} enables bytes "
                             f"{mask:#x}, not a run from the sector's first byte")
        joins = (run is not None and run["end"] == access["addr"] and run["sectors"] < run["limit"])
        if not joins:
            run = {"addr": access["addr"], "data": bytearray(), "end": access["addr"],
                   "sectors": 0, "limit": rng.randint(1, MAX_BURST_SECTORS)}
            operations.append(("gradient", access["addr"], run["data"]))
        run["data"] += data[:valid]
        run["sectors"] += 1
        run["end"] += sector_bytes
        if mask != full:
            run = None
    return operations


class Gpu:
    """One GPU on its AXI4 port: plays its operations in order, ``IN_FLIGHT`` at most at a
    time; a read of its unrelated region waits until its writes before it are answered
    (AXI orders a read after a write only then)."""

    def __init__(self, dut, port, job, *, seed):
        self.port, self.clock = port, dut.clk
        self.master = AxiMaster(AxiBus.from_prefix(dut, f"s_axi{port}"), dut.clk, dut.rst)
        pressure, response_pressure = job["pressure"], job["response_pressure"]
        _set_pauses(self.master, lambda name: response_pressure if name in ("b", "r") else pressure,
                    seed * 1000 + port * 10)
        self.delay = job["delay"]
        self.sent = 0
        self.responses = []             # AxiResp of every operation, in issue order
        self.gradient_done = []         # cycle each gradient burst was answered
        self.unrelated = {}             # the GPU's writes of its unrelated region
        self.read_mismatches = 0

    async def _write(self, address, data, awid, gradient):
        response = await self.master.write(address, bytes(data), awid=awid)
        self.responses.append(response.resp)
        if gradient:
            self.gradient_done.append(_now())

    async def _read(self, address, length, expected):
        response = await self.master.read(address, length, arid=UNRELATED_ID)
        self.responses.append(response.resp)
        self.read_mismatches += response.data != expected

    async def play(self, operations, start):
        while _now() < start + self.delay:
            await RisingEdge(self.clock)
        in_flight, writes = [], []
        for number, (kind, address, payload) in enumerate(operations):
            if kind == "unrelated_read":
                for task in writes:
                    await _finished(task)
                writes = []
            while len(in_flight) >= IN_FLIGHT:
                await _finished(in_flight.pop(0))
            if kind == "unrelated_read":
                # What this GPU wrote there last; memory starts cleared.
                expected = self.unrelated.get(address, bytes(payload))
                task = cocotb.start_soon(self._read(address, payload, expected))
            else:
                gradient = kind == "gradient"
                if not gradient:
                    self.unrelated[address] = bytes(payload)
                awid = number % GRADIENT_IDS if gradient else UNRELATED_ID
                task = cocotb.start_soon(self._write(address, payload, awid, gradient))
                writes.append(task)
            in_flight.append(task)
            self.sent += 1
        for task in in_flight:
            await _finished(task)

    async def read_back(self, address, length):
        response = await self.master.read(address, length, arid=self.port % GRADIENT_IDS)
        self.responses.append(response.resp)
        return response.data


async def _count_memory_requests(dut, source_bit, counts):
    """Memory-side AR and AW handshakes, by source (the id's top bit: 1 the engine)."""
    while True:
        await RisingEdge(dut.clk)
        await ReadOnly()
        for channel in ("ar", "aw"):
            if int(getattr(dut, f"m_axi_{channel}valid").value) and \
                    int(getattr(dut, f"m_axi_{channel}ready").value):
                engine = int(getattr(dut, f"m_axi_{channel}id").value) >> source_bit & 1
                counts[(channel, engine)] += 1


# Simulated time after which a run fails rather than hangs: far beyond the cycle limit
# the launching side gives (its default, 400 000 cycles, is 4 ms).
TIMEOUT_MS = 20


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def axi_expander_reduction(dut):
    job_dir = pathlib.Path(os.environ["MATNDP_JOB"])
    job = json.loads((job_dir / "job.json").read_text())
    config = config_from_json(json.dumps(job["config"]), "job.json config")
    ports, seed = job["ports"], job["seed"]
    slice_config = merged_config(config, ports)
    sector_bytes = config.sector_bytes
    tensors = job["tensors"]

    # In reset from the first instant, so the models never sample an undefined design.
    dut.rst.value = 1
    rng = random.Random(seed)
    gpus = [Gpu(dut, port, gpu_job, seed=seed) for port, gpu_job in enumerate(job["gpus"])]
    operations = [axi_operations(gpu_job["accesses"], sector_bytes, rng) for gpu_job in job["gpus"]]
    regions = [(region["addr"], region["bytes"]) for tensor in tensors for region in tensor["read_back"]]
    regions += [(tensor["entry"]["base"], tensor["entry"]["size"]) for tensor in tensors]
    top = max(address + size for address, size in regions)
    memory = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst,
                    size=1 << (top - 1).bit_length())
    _set_pauses(memory, lambda name: job["memory_pressure"], seed * 77)
    csr = AXILiteCSRDriver(dut, dut.clk, dut.rst)
    csr.pause_channels({name: _pauses(0.2, seed * 55 + number)
                        for number, name in enumerate(("aw", "w", "b", "ar", "r"))})
    runtime = NDPRuntime(SimulatedCSRBus(csr), slice_config)
    for tensor in tensors:
        for region in tensor["place"]:
            memory.write(region["addr"], np.load(job_dir / region["file"]).tobytes())
    requests = {(channel, engine): 0 for channel in ("ar", "aw") for engine in (0, 1)}

    cocotb.start_soon(Clock(dut.clk, CLOCK_NS, unit="ns").start())
    await ClockCycles(dut.clk, 4)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 2)
    cocotb.start_soon(_count_memory_requests(dut, slice_config.mem_id_width - 1, requests))

    armed_cycle = await arm_tensors(runtime, job, _now)
    players = [cocotb.start_soon(gpu.play(operations[port], armed_cycle))
               for port, gpu in enumerate(gpus)]

    done_at = [None] * len(tensors)
    error = None
    while None in done_at and error is None and _now() - armed_cycle < job["cycle_limit"]:
        await ClockCycles(dut.clk, 64)
        done = await call_runtime(runtime.done_mask)
        done_at = [at if at is not None or not done >> index & 1 else _now()
                   for index, at in enumerate(done_at)]
        error = await call_runtime(runtime.error)
    finished_cycle = _now()
    for player in players:
        await player

    # The updated tensors, read back by every GPU through its own port.
    read_mismatches = 0
    for tensor in tensors:
        for region in tensor["read_back"]:
            reads = [await gpu.read_back(region["addr"], region["bytes"]) for gpu in gpus]
            held = memory.read(region["addr"], region["bytes"])
            read_mismatches += sum(data != held for data in reads)
            np.save(job_dir / region["file"], np.frombuffer(reads[0], dtype=np.uint8))

    # Unrelated writes reached memory unchanged; unrelated reads returned them.
    unrelated_mismatches = sum(gpu.read_mismatches for gpu in gpus)
    for gpu in gpus:
        unrelated_mismatches += sum(memory.read(address, sector_bytes) != data
                                    for address, data in gpu.unrelated.items())
    result = {
        **await run_summary(runtime, done_at, error, armed_cycle, finished_cycle,
                            [cycle for gpu in gpus for cycle in gpu.gradient_done]),
        "gpu_sent": [gpu.sent for gpu in gpus],
        "gpu_offered": [len(ops) for ops in operations],
        "gpu_bursts": [sum(kind == "gradient" for kind, _, _ in ops) for ops in operations],
        "gpu_error_responses": [sum(resp != AxiResp.OKAY for resp in gpu.responses) for gpu in gpus],
        "gpu_read_back_mismatches": read_mismatches,
        "gpu_memory_requests": requests[("ar", 0)] + requests[("aw", 0)],
        "ndp_reads": requests[("ar", 1)],
        "ndp_writes": requests[("aw", 1)],
        "unrelated_mismatches": unrelated_mismatches,
        "event_count": await call_runtime(runtime.event_count),
        "mem_read_errors": (await call_runtime(runtime.read_fields, "mem_read_errors"))["count"],
        "mem_write_errors": (await call_runtime(runtime.read_fields, "mem_write_errors"))["count"],
        "instructions": (await call_runtime(runtime.read_fields, "instructions"))["count"],
    }
    (job_dir / "result.json").write_text(json.dumps(result, indent=2))
