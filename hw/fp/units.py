"""The FP units and their operations, each listed once.

:data:`FP_UNITS` names every unit; :data:`FP_OPERATIONS` names every operation, each with
its unit, its code (a member of the unit's enum in hw/fp/opcodes.py), its operands and
what it computes. Everything that lists units or operations derives from these two: the
checking interface (sim/flows/fp_vectors.py), the synthesis designs (``matndp synth``), the test
parametrizations and the op table in docs/fp.md (``make docs``).
"""

import dataclasses

from .addsub import FPAddSub
from .compare import FPCompare
from .convert import FPConvert
from .divide import FPDivide
from .fma import FPFusedMultiplyAdd
from .interface import WORD_BITS
from .minmax import FPMinMax
from .multiply import FPMultiply
from .opcodes import (AddSubOp, CompareOp, ConvertOp, DivideOp, FusedMultiplyAddOp,
                      MinMaxOp, MultiplyOp, SelectOp, SignOp, SqrtOp)
from .select import FPSelect
from .sign import FPSign
from .sqrt import FPSqrt


__all__ = ["FPOperation", "FP_UNITS", "FP_OPERATIONS", "op_table", "operations_of",
           "is_pipelined", "timing_text"]


BFLOAT16_BITS = 16
MASK_BITS = 1


@dataclasses.dataclass(frozen=True)
class FPOperation:
    """One operation of an FP unit.

    unit:        the unit class (a ``wiring.Component`` with ``FPUnitSignature``, ``OPS``
                 and ``CYCLES_PER_RESULT``, constructed without arguments).
    code:        its member of the unit's enum ``unit.OPS``.
    arity:       operands used: 1 (a), 2 (a, b) or 3 (a, b, c).
    summary:     what it computes, in Markdown (the op table of docs/fp.md).
    input_bits:  width of each operand's bit pattern (16 for bfloat16 inputs, in the low
                 bits).
    result_bits: width of the result's bit pattern (16 for bfloat16 results, in the low
                 bits; 1 for a compare mask).

    Its :attr:`name` is the code's, in lower case. Raises TypeError for a code that is
    not a member of the unit's enum, ValueError for an arity or width out of range.
    """
    unit: type
    code: object
    arity: int
    summary: str
    input_bits: int = WORD_BITS
    result_bits: int = WORD_BITS

    def __post_init__(self):
        ops = getattr(self.unit, "OPS", None)
        if ops is None or not isinstance(self.code, ops):
            raise TypeError(f"code {self.code!r} is not a member of the op enum of {self.unit!r}")
        if self.arity not in (1, 2, 3):
            raise ValueError(f"arity of {self.name!r} must be 1, 2 or 3, not {self.arity!r}")
        if self.input_bits not in (BFLOAT16_BITS, WORD_BITS):
            raise ValueError(f"input_bits of {self.name!r} must be {BFLOAT16_BITS} or "
                             f"{WORD_BITS}, not {self.input_bits!r}")
        if self.result_bits not in (MASK_BITS, BFLOAT16_BITS, WORD_BITS):
            raise ValueError(f"result_bits of {self.name!r} must be {MASK_BITS}, "
                             f"{BFLOAT16_BITS} or {WORD_BITS}, not {self.result_bits!r}")

    @property
    def name(self):
        return self.code.name.lower()


# `matndp synth` builds each unit as the design fp_<name>.
FP_UNITS = {
    "addsub":   FPAddSub,
    "multiply": FPMultiply,
    "fma":      FPFusedMultiplyAdd,
    "minmax":   FPMinMax,
    "compare":  FPCompare,
    "select":   FPSelect,
    "sign":     FPSign,
    "convert":  FPConvert,
    "divide":   FPDivide,
    "sqrt":     FPSqrt,
}

_UNIT_OF_ENUM = {unit.OPS: unit for unit in FP_UNITS.values()}


def _operation(code, arity, summary, **widths):
    return FPOperation(_UNIT_OF_ENUM[type(code)], code, arity, summary, **widths)


def op_table(operations, units):
    """``{name: operation}`` of the :class:`FPOperation` list ``operations``, which must
    name each operation once and give every code of every unit class in ``units`` (an
    iterable) exactly one operation; raises ValueError naming the offender otherwise."""
    table = {}
    for operation in operations:
        if operation.name in table:
            raise ValueError(f"FP operation {operation.name!r} is listed twice")
        table[operation.name] = operation
    listed = {operation.code for operation in operations}
    missing = [member for unit in units for member in unit.OPS if member not in listed]
    if missing:
        raise ValueError(f"FP codes without an operation: {', '.join(map(str, missing))}")
    return table


FP_OPERATIONS = op_table([
    _operation(AddSubOp.ADD, 2, "`a + b`"),
    _operation(AddSubOp.SUB, 2, "`a - b`"),
    _operation(MultiplyOp.MUL, 2, "`a * b`"),
    _operation(FusedMultiplyAddOp.FMA, 3, "`a * b + c`, rounded once"),
    _operation(MinMaxOp.MIN, 2, "`minimum(a, b)` (IEEE 754-2019: NaN-propagating, −0 < +0)"),
    _operation(MinMaxOp.MAX, 2, "`maximum(a, b)` (IEEE 754-2019: NaN-propagating, −0 < +0)"),
    _operation(CompareOp.EQ, 2, "`a == b` → 1 or 0 (quiet: a NaN gives 0; +0 == −0)",
               result_bits=MASK_BITS),
    _operation(CompareOp.LT, 2, "`a < b` → 1 or 0 (quiet: a NaN gives 0)",
               result_bits=MASK_BITS),
    _operation(CompareOp.LE, 2, "`a <= b` → 1 or 0 (quiet: a NaN gives 0)",
               result_bits=MASK_BITS),
    _operation(SelectOp.SELECT, 3, "`c[0] ? a : b`, the chosen word bit for bit (bit 0 of "
                                   "`c` is exactly the word compare writes)"),
    _operation(SignOp.ABS, 1, "`abs(a)`; a NaN gives the canonical NaN (hw/fp/sign.py says why)"),
    _operation(SignOp.NEG, 1, "`-a`; a NaN gives the canonical NaN"),
    _operation(ConvertOp.F32_TO_BF16, 1, "FP32 → BF16, round to nearest even, overflow to "
                                         "±inf, NaN → `0x7FC0`; result in the low 16 bits",
               result_bits=BFLOAT16_BITS),
    _operation(ConvertOp.BF16_TO_F32, 1, "BF16 (low 16 bits of `a`) → FP32, exact",
               input_bits=BFLOAT16_BITS),
    _operation(DivideOp.DIV, 2, "`a / b`, correctly rounded"),
    _operation(SqrtOp.SQRT, 1, "`sqrt(a)`, correctly rounded"),
], FP_UNITS.values())


def operations_of(unit):
    """The operations of the unit class ``unit``, in code order."""
    return sorted((operation for operation in FP_OPERATIONS.values() if operation.unit is unit),
                  key=lambda operation: operation.code.value)


def is_pipelined(unit):
    """Whether ``unit`` (a class) accepts a record every cycle, with a fixed ``LATENCY``."""
    return getattr(unit, "LATENCY", None) is not None


def timing_text(unit):
    """``"pipelined, latency L"`` or ``"iterative, N cycles per result"`` for an FP unit
    class ``unit``; None for a design that is neither."""
    if is_pipelined(unit):
        return f"pipelined, latency {unit.LATENCY}"
    if hasattr(unit, "CYCLES_PER_RESULT"):
        return f"iterative, {unit.CYCLES_PER_RESULT} cycles per result"
    return None
