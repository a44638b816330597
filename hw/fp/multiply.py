"""Binary32 multiplication, fully pipelined (one result per cycle).

One operation (:class:`~.opcodes.MultiplyOp`): ``MUL`` ``a * b``; the ``op`` field is ignored.

Stages:
  1. unpack; exponent sum; special cases.
  2. four partial products of the 24-bit significands, split at bit 18 so each maps
     onto one 18x18 DSP multiplier (ECP5 MULT18X18D).
  3. the exact 48-bit product: the low and high partial products do not overlap, so one
     carry-save step and one carry-propagate addition sum all four.
  4-6. normalize (subnormal inputs give products with many leading zeros, tiny products
     shift right into the subnormal range), round to nearest even, pack
     (hw/fp/rounding.py).
"""

from amaranth.hdl import Cat

from .opcodes import MultiplyOp
from .float32 import BIAS, PRECISION, pack_special, unpack
from .pipeline import PipelinedUnit
from .rounding import back_end_controls, back_end_stages, normalize_round_pack


__all__ = ["FPMultiply", "partial_products", "product_from_parts"]


_SPLIT = 18   # width of one DSP multiplier input
_PRODUCT = 2 * PRECISION


def partial_products(x, y):
    """The four products of the low/high parts of two 24-bit significands."""
    return {"ll": x[:_SPLIT] * y[:_SPLIT], "lh": x[:_SPLIT] * y[_SPLIT:],
            "hl": x[_SPLIT:] * y[:_SPLIT], "hh": x[_SPLIT:] * y[_SPLIT:]}


def product_from_parts(parts):
    """The exact 48-bit product from :func:`partial_products`. ``ll`` fills bits 0..35
    and ``hh`` bits 36..47, so with the two middle products there are three addends; a
    carry-save step reduces them to two, leaving one carry chain."""
    x = Cat(parts["ll"][:2 * _SPLIT], parts["hh"])[:_PRODUCT]
    y = (parts["lh"] << _SPLIT)[:_PRODUCT]
    z = (parts["hl"] << _SPLIT)[:_PRODUCT]
    partial_sum = x ^ y ^ z
    carries = ((x & y) | (x & z) | (y & z)) << 1
    return (partial_sum + carries)[:_PRODUCT]


class FPMultiply(PipelinedUnit):
    """Binary32 ``a * b``; latency :data:`LATENCY` cycles."""

    OPS = MultiplyOp
    LATENCY = 3 + back_end_stages()

    def datapath(self, m, pipe, record):
        a = unpack(m, record.a, name="a")
        b = unpack(m, record.b, name="b")

        # Stage 1.
        sign = a.sign ^ b.sign
        nan = a.nan | b.nan | (a.inf & b.zero) | (a.zero & b.inf)
        s1 = pipe.register_stage("s1_", {
            "special": nan | a.inf | b.inf,
            "special_bits": pack_special(sign, nan=nan, inf=1),
            "sign": sign,
            # Exponent of the product's top bit (bit 47: one binade above the hidden bits').
            "exponent": (a.exponent + b.exponent - BIAS + 1).as_signed(),
            "a": a.significand, "b": b.significand,
        })
        passed = ("special", "special_bits", "sign", "exponent")

        # Stage 2.
        s2 = pipe.register_stage("s2_", {
            **partial_products(s1["a"], s1["b"]),
            **back_end_controls(s1["exponent"], _PRODUCT),
            **{name: s1[name] for name in passed},
        })

        # Stage 3.
        s3 = pipe.register_stage("s3_", {
            "product": product_from_parts(s2),
            **{name: s2[name] for name in (*passed, "limit_mask", "right_shift")},
        })

        return normalize_round_pack(
            pipe, sign=s3["sign"], zero_sign=s3["sign"], exponent=s3["exponent"],
            significand=s3["product"], limit_mask=s3["limit_mask"], right_shift=s3["right_shift"],
            special=s3["special"], special_bits=s3["special_bits"])
