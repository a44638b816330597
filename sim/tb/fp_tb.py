"""cocotb batch run of one FP unit through ``sim/harnesses/fp_harness.v``.

The testbench only moves files and waits: the harness streams every record through the
unit without Python per cycle. Parameters come from the environment:

MATNDP_FP_JOBS    JSON list of [operand file, result file, record count], run in turn
MATNDP_FP_SEED    back-pressure seed (nonzero)
MATNDP_FP_PAUSE   "<source>,<sink>": per-cycle hold probabilities in 1/256 (0,0: none)
MATNDP_FP_CYCLES  most cycles one record may take (bounds the wait for the results)

Beside each result file it writes ``<result file>.cycles``: the harness's cycles from the
first record offered to the last result stored.
"""

import json
import os
import pathlib
import shutil

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, with_timeout


CLOCK_NS = 10


@cocotb.test()
async def run_vectors(dut):
    jobs = json.loads(os.environ["MATNDP_FP_JOBS"])
    seed = int(os.environ.get("MATNDP_FP_SEED", "1"))
    source_pause, sink_pause = (int(x) for x in os.environ.get("MATNDP_FP_PAUSE", "0,0").split(","))
    cycles_per_record = int(os.environ.get("MATNDP_FP_CYCLES", "4"))

    Clock(dut.clk, CLOCK_NS, unit="ns").start()
    dut.source_pause.value = source_pause
    dut.sink_pause.value = sink_pause
    dut.start.value = 0
    for index, (operand_file, result_file, count) in enumerate(jobs):
        shutil.copyfile(operand_file, "fp_operands.hex")
        dut.seed.value = (seed + index) & 0xFFFFFFFF or 1
        dut.count.value = count
        dut.rst.value = 1
        await ClockCycles(dut.clk, 2)
        dut.rst.value = 0
        dut.start.value = 1
        await RisingEdge(dut.clk)
        dut.start.value = 0
        # Throttled streams take ~1/(1-p) cycles per record on each side.
        throttle = 256 / (256 - max(source_pause, sink_pause))
        limit = int(count * cycles_per_record * throttle * 4) + 10_000
        await with_timeout(RisingEdge(dut.done), limit * CLOCK_NS, "ns")
        await ClockCycles(dut.clk, 64)   # a duplicated result would show up meanwhile
        assert not int(dut.extra.value), "the unit produced more results than records"
        shutil.move("fp_results.hex", result_file)
        pathlib.Path(result_file + ".cycles").write_text(f"{int(dut.cycles.value)}\n")
        dut._log.info("%d records in %d cycles", count, int(dut.cycles.value))
