"""Binary32 addition and subtraction, fully pipelined (one result per cycle).

Operations (:class:`~.opcodes.AddSubOp`): ``ADD`` ``a + b``, ``SUB`` ``a - b`` (any other value of
the ``op`` field adds).

Stages:
  1. unpack; order the operands by magnitude; exponent difference; special cases.
  2. align the smaller significand, keeping guard, round and sticky bits.
  3. add or subtract the magnitudes.
  4-6. normalize, round to nearest even, pack (hw/fp/rounding.py).

Three bits below the significand are enough for exact rounding: a shift of two or more
leaves at most a one-bit normalization, and a shift of at most one loses nothing.
"""

from amaranth.hdl import Cat, Const, Mux

from .opcodes import AddSubOp
from .float32 import PRECISION, pack_special, shift_right_sticky, unpack
from .pipeline import PipelinedUnit
from .rounding import back_end_controls, back_end_stages, normalize_round_pack


__all__ = ["FPAddSub"]


_EXTRA = 3                           # guard, round, sticky
_ALIGNED = PRECISION + _EXTRA        # 27 bits
_SUM = _ALIGNED + 1                  # plus the carry out


class FPAddSub(PipelinedUnit):
    """Binary32 ``a + b`` and ``a - b``; latency :data:`LATENCY` cycles."""

    OPS = AddSubOp
    LATENCY = 3 + back_end_stages()

    def datapath(self, m, pipe, record):
        # Stage 1: order by magnitude, so the difference of magnitudes is never negative.
        a = unpack(m, record.a, name="a")
        b = unpack(m, Cat(record.b[:31], record.b[31] ^ (record.op == AddSubOp.SUB)), name="b")
        swap = record.b[:31] > record.a[:31]
        large = {field: Mux(swap, b[field], a[field]) for field in ("sign", "exponent", "significand", "inf")}
        small = {field: Mux(swap, a[field], b[field]) for field in ("sign", "significand")}
        subtract = a.sign ^ b.sign
        nan = a.nan | b.nan | (a.inf & b.inf & subtract)
        s1 = pipe.register_stage("s1_", {
            "special": nan | a.inf | b.inf,
            "special_bits": pack_special(large["sign"], nan=nan, inf=1),
            "sign": large["sign"],
            # An exact zero sum is -0 only when both addends are negative (hence zeros).
            "zero_sign": a.sign & b.sign,
            "subtract": subtract,
            "exponent": large["exponent"],
            "large": large["significand"],
            "small": small["significand"],
            # Both differences at once, so the swap does not delay the subtraction.
            "distance": Mux(swap, b.exponent - a.exponent, a.exponent - b.exponent)[:8],
        })

        # Stage 2: alignment.
        shifted, lost = shift_right_sticky(Cat(Const(0, _EXTRA), s1["small"]), s1["distance"])
        # The sum's top bit is the carry, one binade above the larger operand.
        top_exponent = (s1["exponent"] + 1).as_signed()
        s2 = pipe.register_stage("s2_", {
            "small": Cat(shifted[0] | lost, shifted[1:]),
            "large": Cat(Const(0, _EXTRA), s1["large"]),
            "top_exponent": top_exponent,
            **back_end_controls(top_exponent, _SUM),
            **{name: s1[name] for name in ("special", "special_bits", "sign", "zero_sign", "subtract")},
        })

        # Stage 3: magnitude sum.
        total = Mux(s2["subtract"], s2["large"] - s2["small"], s2["large"] + s2["small"])[:_SUM]
        s3 = pipe.register_stage("s3_", {
            "sum": total,
            **{name: s2[name] for name in ("special", "special_bits", "sign", "zero_sign",
                                           "top_exponent", "limit_mask", "right_shift")},
        })

        return normalize_round_pack(
            pipe, sign=s3["sign"], zero_sign=s3["zero_sign"], exponent=s3["top_exponent"],
            significand=s3["sum"], limit_mask=s3["limit_mask"], right_shift=s3["right_shift"],
            special=s3["special"], special_bits=s3["special_bits"])
