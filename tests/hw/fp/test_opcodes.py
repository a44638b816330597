"""The FP op codes (hw/fp/opcodes.py): one enum per unit, of the op field's shape, with
distinct codes; the operand layouts typed by them; and, in Amaranth's simulator, how each
unit decodes every value of the op field, its unassigned ones included, as documented
there."""

from amaranth.hdl import Module, unsigned
from amaranth.lib import enum
import enum as python_enum

import numpy as np
import pytest

from matndp.hw.fp import opcodes
from matndp.hw.fp.addsub import FPAddSub
from matndp.hw.fp.compare import FPCompare
from matndp.hw.fp.interface import FPUnitSignature, operand_layout
from matndp.hw.fp.opcodes import OP_BITS, AddSubOp, MultiplyOp, selects
from matndp.hw.fp.units import FP_UNITS, operations_of
from matndp.sim.flows.fp_amaranth import run_unit
from matndp.sim.golden.fp import mismatches, random_operands, reference


ENUMS = [value for value in map(opcodes.__dict__.get, opcodes.__all__)
         if isinstance(value, enum.EnumType)]


@pytest.mark.parametrize("ops", ENUMS, ids=lambda ops: ops.__name__)
def test_each_enum_fills_the_op_field_with_distinct_codes(ops):
    assert isinstance(ops, enum.EnumType)
    assert ops.as_shape() == unsigned(OP_BITS)
    # An enum silently turns a repeated value into an alias of the first name.
    assert len(ops.__members__) == len(list(ops))
    assert operand_layout(ops)["op"].shape is ops


def test_each_unit_has_its_own_enum():
    enums = [unit.OPS for unit in FP_UNITS.values()]
    assert len(set(enums)) == len(enums)
    assert set(enums) == set(ENUMS)


class Narrow(enum.Enum, shape=OP_BITS - 1):
    ONLY = 0


class Untyped(python_enum.Enum):
    ONLY = 0


@pytest.mark.parametrize("ops", [unsigned(OP_BITS), Narrow, Untyped, AddSubOp.ADD],
                         ids=["plain-shape", "narrow-enum", "python-enum", "member"])
def test_the_op_field_takes_only_an_enum_of_its_shape(ops):
    with pytest.raises(TypeError, match=rf"enum of shape unsigned\({OP_BITS}\)"):
        FPUnitSignature(ops)
    with pytest.raises(TypeError, match=rf"enum of shape unsigned\({OP_BITS}\)"):
        operand_layout(ops)


def test_signatures_are_equal_by_enum():
    assert FPUnitSignature(AddSubOp) == FPUnitSignature(AddSubOp)
    assert FPUnitSignature(AddSubOp) != FPUnitSignature(MultiplyOp)
    assert repr(FPUnitSignature(AddSubOp)) == "FPUnitSignature(AddSubOp)"


def _input(operation, column):
    return column & np.uint32((1 << operation.input_bits) - 1)


def _documented_decoding(unit, value):
    """The operation the op field ``value`` selects in ``unit`` by hw/fp/opcodes.py's
    rule, or None for a comparison's false."""
    operations = operations_of(unit)
    by_value = {operation.code.value: operation for operation in operations}
    if value in by_value:
        return by_value[value]
    if unit is FPCompare:
        return None
    if unit is FPAddSub:
        return by_value[AddSubOp.ADD.value]
    # The rest look at bit 0 alone, the bit in which their (at most two) codes differ.
    assert len(operations) <= 2
    return by_value[value & 1] if len(operations) == 2 else operations[0]


@pytest.mark.parametrize("unit", list(FP_UNITS.values()), ids=list(FP_UNITS))
def test_every_value_of_the_op_field_decodes_as_documented(unit):
    per_code = 3
    values = np.repeat(np.arange(1 << OP_BITS, dtype=np.uint32), per_code)
    a, b, c = random_operands("fma", len(values), seed=17)
    expected = np.zeros(len(values), dtype=np.uint32)
    for index, value in enumerate(values.tolist()):
        operation = _documented_decoding(unit, value)
        if operation is not None:
            operands = [_input(operation, x[index:index + 1]) for x in (a, b, c)[:operation.arity]]
            expected[index] = reference(operation.name, *operands)[0]
    instance = unit()
    assert instance.signature == FPUnitSignature(unit.OPS)
    actual = run_unit(instance, values, a, b, c, pause=(77, 77), seed=5,
                      cycles_per_record=unit.CYCLES_PER_RESULT)
    problems = mismatches(expected, actual, values, a, b, c)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("ops", [op for op in ENUMS if len(op) == 2], ids=lambda ops: ops.__name__)
def test_selects_decodes_the_bit_in_which_two_codes_differ(ops):
    from amaranth.hdl import Const
    from amaranth.sim import Simulator
    first, second = list(ops)
    differing = first.value ^ second.value
    results = {}

    async def bench(ctx):
        for value in range(1 << OP_BITS):
            results[value] = (ctx.get(selects(Const(value, OP_BITS), first)),
                              ctx.get(selects(Const(value, OP_BITS), second)))

    simulator = Simulator(Module())
    simulator.add_testbench(bench)
    simulator.run()
    for value, (is_first, is_second) in results.items():
        expected_second = (value & differing) == (second.value & differing)
        assert (is_first, is_second) == (not expected_second, expected_second), value
