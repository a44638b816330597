"""The list of FP units and operations (hw/fp/units.py): every unit states its enum and
its timing; every code has exactly one operation; and every constructor
error is refused by name."""

import pytest
from amaranth.lib import wiring

from matndp.hw.fp.addsub import FPAddSub
from matndp.hw.fp.divide import FPDivide
from matndp.hw.fp.opcodes import AddSubOp, MultiplyOp
from matndp.hw.fp.units import (FP_OPERATIONS, FP_UNITS, FPOperation, is_pipelined,
                                op_table, operations_of, timing_text)


@pytest.mark.parametrize("unit", list(FP_UNITS.values()), ids=list(FP_UNITS))
def test_each_unit_states_its_enum_and_timing(unit):
    # Its signature is checked where the unit is simulated (test_opcodes.py).
    assert issubclass(unit, wiring.Component)
    if is_pipelined(unit):
        assert unit.CYCLES_PER_RESULT == 1 and unit.LATENCY >= 1
    else:
        assert unit.CYCLES_PER_RESULT > 1
    assert [operation.code for operation in operations_of(unit)] == list(unit.OPS)


def test_each_operation_is_named_after_its_code_and_belongs_to_its_unit():
    assert len(FP_OPERATIONS) == sum(len(unit.OPS) for unit in FP_UNITS.values())
    for name, operation in FP_OPERATIONS.items():
        assert name == operation.code.name.lower() == operation.name
        assert operation.unit in FP_UNITS.values()
        assert isinstance(operation.code, operation.unit.OPS)


class _Iterative:
    """What the interface allows beside the pipelined units: one record at a time."""
    CYCLES_PER_RESULT = 7


def test_timing_text():
    assert timing_text(FPAddSub) == f"pipelined, latency {FPAddSub.LATENCY}"
    assert timing_text(FPDivide) == f"pipelined, latency {FPDivide.LATENCY}"
    assert timing_text(_Iterative) == "iterative, 7 cycles per result"
    assert timing_text(object) is None


@pytest.mark.parametrize("arguments, error, message", [
    ((FPAddSub, MultiplyOp.MUL, 2, "x"), TypeError, "not a member of the op enum"),
    ((FPAddSub, 0, 2, "x"), TypeError, "not a member of the op enum"),
    ((object, AddSubOp.ADD, 2, "x"), TypeError, "not a member of the op enum"),
    ((FPAddSub, AddSubOp.ADD, 0, "x"), ValueError, "arity of 'add' must be 1, 2 or 3, not 0"),
    ((FPAddSub, AddSubOp.ADD, 4, "x"), ValueError, "arity of 'add' must be 1, 2 or 3, not 4"),
    ((FPAddSub, AddSubOp.ADD, 2, "x", 8), ValueError, "input_bits of 'add' must be 16 or 32"),
    ((FPAddSub, AddSubOp.ADD, 2, "x", 32, 8), ValueError, "result_bits of 'add' must be 1, 16"),
])
def test_bad_operation_is_refused_by_name(arguments, error, message):
    with pytest.raises(error, match=message):
        FPOperation(*arguments)


def test_op_table_refuses_a_repeated_or_a_missing_operation():
    add = FPOperation(FPAddSub, AddSubOp.ADD, 2, "`a + b`")
    sub = FPOperation(FPAddSub, AddSubOp.SUB, 2, "`a - b`")
    assert list(op_table([add, sub], [FPAddSub])) == ["add", "sub"]
    with pytest.raises(ValueError, match="'add' is listed twice"):
        op_table([add, sub, add], [FPAddSub])
    with pytest.raises(ValueError, match="codes without an operation: AddSubOp.SUB"):
        op_table([add], [FPAddSub])
