"""The FP op codes (hw/fp/opcodes.py): one enum per unit, of the op field's shape, with
distinct codes; the operand layouts typed by them; and the decoding rule every unit
follows, in Amaranth's simulator: a unit's own codes select its operations, any other
value of the op field gives the result of its code 0 (0, false, for the comparisons)."""

from amaranth.hdl import unsigned
from amaranth.lib import enum
import enum as python_enum

import numpy as np
import pytest

from matndp.hw.fp import opcodes
from matndp.hw.fp.compare import FPCompare
from matndp.hw.fp.interface import FPUnitSignature, operand_layout
from matndp.hw.fp.opcodes import OP_BITS, AddSubOp, MultiplyOp
from matndp.hw.fp.units import FP_UNITS, operations_of
from matndp.sim.fp_amaranth import run_unit
from matndp.sim.golden.fp import mismatches, random_operands, reference


ENUMS = [getattr(opcodes, name) for name in opcodes.__all__ if name != "OP_BITS"]


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


@pytest.mark.parametrize("unit", list(FP_UNITS.values()), ids=list(FP_UNITS))
def test_every_value_of_the_op_field_decodes_as_documented(unit):
    per_code = 3
    values = np.repeat(np.arange(1 << OP_BITS, dtype=np.uint32), per_code)
    a, b, c = random_operands("fma", len(values), seed=17)
    by_value = {operation.code.value: operation for operation in operations_of(unit)}
    fallback = by_value[0]
    expected = np.zeros(len(values), dtype=np.uint32)
    for index, value in enumerate(values.tolist()):
        operation = by_value.get(value)
        if operation is None and unit is FPCompare:
            continue    # an unassigned comparison is false
        operation = operation or fallback
        operands = [_input(operation, x[index:index + 1]) for x in (a, b, c)[:operation.arity]]
        expected[index] = reference(operation.name, *operands)[0]
    instance = unit()
    assert instance.signature == FPUnitSignature(unit.OPS)
    actual = run_unit(instance, values, a, b, c, pause=(77, 77), seed=5,
                      cycles_per_record=unit.CYCLES_PER_RESULT)
    problems = mismatches(expected, actual, values, a, b, c)
    assert not problems, "\n".join(problems)
