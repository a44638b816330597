"""The arithmetic units whose operand sets all come from sim/golden/fp.py (add/subtract,
multiply, fused multiply-add), against its MPFR reference: directed edge-case tables and
biased random vectors under Verilator, Icarus and Amaranth's simulator, with random
back-pressure on both streams (and once at full rate). Units with operand sets or
stream checks of their own have their own files."""

import zlib

import pytest

from matndp.hw.fp.units import FP_UNITS, operations_of
from matndp.sim.flows.fp_check import check_fp_op
from matndp.sim.golden.fp import directed_operands, random_operands


UNITS = ["addsub", "multiply", "fma"]

# Builds are per (unit, simulator); grouping a unit's tests on one worker builds each once.
OPS = [pytest.param(operation.name, id=operation.name, marks=pytest.mark.xdist_group(f"fp-{unit}"))
       for unit in UNITS for operation in operations_of(FP_UNITS[unit])]

SIMULATORS = ["verilator", "icarus", "amaranth"]

# simulator, vectors per op, back-pressure
RANDOM_RUNS = [
    pytest.param("verilator", 20_000, "random", id="verilator-random-pressure"),
    pytest.param("verilator", 20_000, "none", id="verilator-full-rate"),
    pytest.param("icarus", 3_000, "random", id="icarus-random-pressure"),
    pytest.param("amaranth", 400, "random", id="amaranth-random-pressure"),
]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("simulator", SIMULATORS)
def test_directed(op, simulator):
    check_fp_op(op, directed_operands(op), simulator=simulator, seed=3)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("simulator, count, back_pressure", RANDOM_RUNS)
def test_random(op, simulator, count, back_pressure):
    seed = zlib.crc32(f"{op}-{simulator}-{back_pressure}".encode()) & 0xFFFF
    check_fp_op(op, random_operands(op, count, seed), simulator=simulator,
                back_pressure=back_pressure, seed=seed + 1)


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("simulator", ["verilator"])
def test_random_million(op, simulator):
    check_fp_op(op, random_operands(op, 1_000_000, 1_000_003), simulator=simulator, seed=5)
