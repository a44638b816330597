"""The FP checking interface (sim.flows.fp_vectors.run_fp_vectors) and the stream contract of the
pipelined units: latency as documented, one record per cycle, whole-pipeline stalls."""

import random
import re

import numpy as np
import pytest
from amaranth.hdl import Module
from amaranth.lib import enum, wiring
from amaranth.sim import Simulator

from matndp.hw.fp.addsub import FPAddSub
from matndp.hw.fp.interface import FPUnitSignature, operand_layout
from matndp.hw.fp.opcodes import OP_BITS, AddSubOp
from matndp.hw.fp.units import FP_UNITS, FPOperation, is_pipelined
from matndp.sim.harnesses import harness_file
from matndp.sim.flows.fp_vectors import FP_OPS, run_fp_unit, run_fp_vectors
from matndp.sim.golden.fp import random_operands, reference
from matndp.sim.runner import SimulationFailed


pytestmark = pytest.mark.xdist_group("fp-addsub")

ONE = np.array([0x3F800000], dtype=np.uint32)
TWO = np.array([0x3F800000, 0x40000000], dtype=np.uint32)


@pytest.mark.parametrize("call, message", [
    (lambda: run_fp_vectors("fmadd", ONE, ONE), "unknown FP op 'fmadd'"),
    (lambda: run_fp_vectors("add", ONE, TWO), "operand b of 'add' has 2 elements"),
    (lambda: run_fp_vectors("fma", TWO, TWO, ONE), "operand c of 'fma' has 1 elements"),
    (lambda: run_fp_vectors("add", ONE.astype(np.int64), ONE), "dtype uint32, not int64"),
    (lambda: run_fp_vectors("mul", ONE, ONE.view(np.float32)), "operand b of 'mul' must have dtype uint32"),
    (lambda: run_fp_vectors("add", [0x3F800000], ONE), "must be a numpy uint32 array, not list"),
    (lambda: run_fp_vectors("add", np.zeros((2, 2), np.uint32), ONE), "one-dimensional"),
    (lambda: run_fp_vectors("add", ONE), "operand b is missing"),
    (lambda: run_fp_vectors("sub", ONE, ONE, ONE), "operand c was given"),
    (lambda: run_fp_vectors("add", ONE, ONE, simulator="modelsim"), "unknown simulator 'modelsim'"),
    (lambda: run_fp_vectors("add", ONE, ONE, back_pressure="some"), "unknown back-pressure mode"),
    (lambda: run_fp_vectors("bf16_to_f32", ONE), "16-bit patterns in the low bits"),
    (lambda: run_fp_vectors("add", ONE, ONE, simulator="amaranth", with_cycles=True),
     "with_cycles: the cycles are counted by the Verilator and Icarus harness"),
    (lambda: run_fp_unit(FPAddSub, 1 << OP_BITS, ONE, ONE, ONE), "op code must be a member"),
    (lambda: run_fp_unit(FPAddSub, -1, ONE, ONE, ONE), rf"integer in \[0, {1 << OP_BITS}\), not -1"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_op_table_names_every_op():
    assert set(FP_OPS) == {"add", "sub", "mul", "fma", "min", "max", "div", "sqrt",
                           "f32_to_bf16", "bf16_to_f32", "eq", "lt", "le", "select",
                           "abs", "neg"}


def test_harness_records_are_as_wide_as_the_operand_layout():
    # sim/harnesses/fp_harness.v spells the record width out; it must follow the layout.
    harness = harness_file("fp_harness.v").read_text()
    widths = {int(top) + 1 for top in re.findall(r"\[(\d+):0\] *(?:operands|in_payload)\b", harness)}
    assert widths == {operand_layout(AddSubOp).size}


def test_op_code_is_the_units_own():
    # The code reaches the unit: 2 - 1, not 2 + 1.
    two = TWO[1:]
    assert run_fp_unit(FPAddSub, AddSubOp.SUB, two, ONE, ONE, simulator="amaranth").tolist() \
        == ONE.tolist()


@pytest.mark.parametrize("simulator", ["verilator", "icarus", "amaranth"])
def test_empty_input(simulator):
    result = run_fp_vectors("add", np.zeros(0, np.uint32), np.zeros(0, np.uint32),
                            simulator=simulator)
    assert result.dtype == np.uint32 and result.shape == (0,)


@pytest.mark.parametrize("simulator", ["verilator"])
def test_results_in_order_across_chunks(simulator):
    # More records than one harness run holds, so the batch is split and reassembled.
    count = 65536 + 1000
    a, b = random_operands("add", count, seed=77)
    result = run_fp_vectors("add", a, b, simulator=simulator)
    assert result.dtype == np.uint32
    np.testing.assert_array_equal(result, reference("add", a, b))


@pytest.mark.parametrize("simulator", ["verilator", "icarus"])
def test_the_harness_counts_its_cycles(simulator):
    a, b = random_operands("add", 3000, seed=5)
    full_rate, cycles = run_fp_vectors("add", a, b, simulator=simulator, back_pressure="none",
                                       with_cycles=True)
    np.testing.assert_array_equal(full_rate, reference("add", a, b))
    # One record a cycle: the records, the pipeline's latency and the harness's own stages.
    assert len(a) < cycles <= len(a) + FPAddSub.LATENCY + 4
    _, throttled = run_fp_vectors("add", a, b, simulator=simulator, with_cycles=True)
    assert throttled > cycles + len(a) // 4


# Stream contract of the pipelined units, in Amaranth's simulator.

PIPELINED = [unit for unit in FP_UNITS.values() if is_pipelined(unit)]


def _cycles_until_result(unit):
    """Cycles from the transfer of one record until its result is valid."""
    cycles = []

    async def bench(ctx):
        ctx.set(unit.result.ready, 1)
        ctx.set(unit.operands.valid, 1)
        ctx.set(unit.operands.payload.a, 0x3F800000)
        ctx.set(unit.operands.payload.b, 0x40000000)
        await ctx.tick().until(unit.operands.ready)
        ctx.set(unit.operands.valid, 0)
        count = 0
        while not ctx.get(unit.result.valid):
            await ctx.tick()
            count += 1
        cycles.append(count)

    simulator = Simulator(unit)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    return cycles[0]


@pytest.mark.parametrize("unit_class", PIPELINED, ids=lambda cls: cls.__name__)
def test_latency_is_documented_constant(unit_class):
    # The result of a record taken at edge t is valid after edge t + LATENCY - 1.
    assert _cycles_until_result(unit_class()) + 1 == unit_class.LATENCY


@pytest.mark.parametrize("unit_class", PIPELINED, ids=lambda cls: cls.__name__)
def test_one_result_per_cycle_and_stall_as_a_whole(unit_class):
    unit = unit_class()
    count = 64
    records = [random.Random(i).getrandbits(96) for i in range(count)]
    accepted, delivered = [], []
    # The sink refuses results during these cycles, once results flow.
    stall_cycles = set(range(unit_class.LATENCY + 10, unit_class.LATENCY + 20))

    async def source(ctx):
        ctx.set(unit.operands.valid, 1)
        cycle = 0
        for record in records:
            ctx.set(unit.operands.payload.as_value(), record)
            while True:
                _, _, ready = await ctx.tick().sample(unit.operands.ready)
                cycle += 1
                if ready:
                    accepted.append(cycle)
                    break
        ctx.set(unit.operands.valid, 0)

    async def sink(ctx):
        cycle = 0
        while len(delivered) < count:
            ctx.set(unit.result.ready, cycle not in stall_cycles)
            _, _, valid, ready = await ctx.tick().sample(unit.result.valid, unit.result.ready)
            cycle += 1
            if valid and ready:
                delivered.append(cycle)

    simulator = Simulator(unit)
    simulator.add_clock(1e-8)
    simulator.add_testbench(source)
    simulator.add_testbench(sink)
    simulator.run()
    stalled = len(stall_cycles)
    # Full rate except while the sink refuses: every stalled cycle holds the source too.
    assert accepted[-1] == count + stalled
    assert delivered == sorted(delivered) and len(set(delivered)) == count
    assert delivered[-1] - delivered[0] == count - 1 + stalled


# The checking harness itself must notice a unit that loses or duplicates records.

MARKER = 0x0BAD0BAD


class FaultyOp(enum.Enum, shape=OP_BITS):
    FAULTY = 0


class _FaultyUnit(wiring.Component):
    """Passes ``a`` through one register; mishandles records whose ``a`` is MARKER."""

    OPS = FaultyOp
    CYCLES_PER_RESULT = 1
    duplicate = False

    def __init__(self):
        super().__init__(FPUnitSignature(FaultyOp))

    def elaborate(self, platform):
        m = Module()
        stall = self.result.valid & ~self.result.ready
        marked = self.operands.payload.a == MARKER
        m.d.comb += self.operands.ready.eq(~stall)
        with m.If(~stall):
            # A dropping unit never shows the marked record's result.
            m.d.sync += [
                self.result.valid.eq(self.operands.valid & (~marked | self.duplicate)),
                self.result.payload.eq(self.operands.payload.a),
            ]
        if self.duplicate:
            # A duplicating unit offers one more result after the marked one.
            taken = self.result.valid & self.result.ready & (self.result.payload == MARKER)
            with m.If(taken & ~self.operands.valid):
                m.d.sync += self.result.valid.eq(1)
        return m


class DroppingUnit(_FaultyUnit):
    duplicate = False


class DuplicatingUnit(_FaultyUnit):
    duplicate = True


@pytest.mark.parametrize("unit_class", [DroppingUnit, DuplicatingUnit],
                         ids=["drops", "duplicates"])
@pytest.mark.parametrize("simulator", ["verilator", "amaranth"])
def test_harness_catches_lost_or_extra_results(monkeypatch, simulator, unit_class):
    monkeypatch.setitem(FP_OPS, "faulty", FPOperation(unit_class, FaultyOp.FAULTY, 1, "`a`"))
    a = np.arange(1, 41, dtype=np.uint32)
    a[-1] = MARKER   # the last record: its loss or duplicate cannot hide behind others
    good = run_fp_vectors("faulty", a[:-1], simulator=simulator)
    np.testing.assert_array_equal(good, a[:-1])
    with pytest.raises((SimulationFailed, AssertionError)):
        run_fp_vectors("faulty", a, simulator=simulator)
