"""Binary32 fused multiply-add ``a * b + c`` with a single rounding, fully pipelined (one
result per cycle).

One operation (:class:`~.opcodes.FusedMultiplyAddOp`): ``FMA`` ``a * b + c``; the ``op``
field is ignored.

The exact 48-bit product and the addend meet in a 76-bit window (bit 0 sticky, two guard
bits, the product at bits 3..50, room for the addend up to 25 bits above the product):

* the addend starts at the top of the window and is shifted right to the product's scale;
  bits shifted below bit 0 become the sticky bit;
* when the addend lies more than 49 bits above the product's least significant bit
  (or the product is zero), the addend stays at the top and the product shrinks to a
  sticky bit: it then lies at least two bits below the result's rounding position.

Either way at most the sticky bit is inexact, and it never reaches the guard bit, so the
sum rounds exactly once, subnormal results and cancellations included. (An addend that
shifts below bit 1 is less than a quarter of the product: with one normal factor the
product's leading one is at least 23 bits above its LSB, so no deep cancellation can
expose the lost bits; with two subnormal factors any nonzero addend is far above the
product and stays on top.)

Stages:
  1. unpack; product exponent; special cases.
  2. partial products (DSP multipliers); alignment distance (one subtraction decides the
     shift and whether the addend goes on top).
  3. exact product; addend alignment.
  4. signed sum of the window (both differences in parallel, the non-negative one kept).
  5-8. normalize (leading-zero count over two stages for the 77-bit sum), round to
     nearest even, pack (hw/fp/rounding.py).
"""

from amaranth.hdl import Cat, Const, Mux

from .opcodes import FusedMultiplyAddOp
from .float32 import BIAS, PRECISION, pack_special, shift_right_sticky, unpack
from .multiply import partial_products, product_from_parts
from .pipeline import PipelinedUnit
from .rounding import back_end_controls, back_end_stages, normalize_round_pack


__all__ = ["FPFusedMultiplyAdd"]


_GUARD = 3                                # sticky + two guard bits below the product
_PRODUCT = 2 * PRECISION                  # 48
_WINDOW = PRECISION + _GUARD + _PRODUCT + 1   # 76: the addend can sit 49 bits above
_ADDEND_TOP = _WINDOW - PRECISION         # 52: addend LSB position when not shifted
_MAX_DISTANCE = _ADDEND_TOP - _GUARD      # 49: addend LSB above product LSB, at most
# Window bit 75 sits this many binades above the product's hidden-bit position (bit 46).
_TOP_ABOVE_PRODUCT = _WINDOW - 1 - _GUARD - (_PRODUCT - 2)   # 26


class FPFusedMultiplyAdd(PipelinedUnit):
    """Binary32 ``a * b + c``, one rounding; latency :data:`LATENCY` cycles."""

    OPS = FusedMultiplyAddOp
    LATENCY = 4 + back_end_stages(split_count=True)

    def datapath(self, m, pipe, record):
        a = unpack(m, record.a, name="a")
        b = unpack(m, record.b, name="b")
        c = unpack(m, record.c, name="c")

        # Stage 1.
        product_sign = a.sign ^ b.sign
        product_inf = a.inf | b.inf
        nan = (a.nan | b.nan | c.nan | (a.inf & b.zero) | (a.zero & b.inf)
               | (product_inf & c.inf & (product_sign ^ c.sign)))
        s1 = pipe.register_stage("s1_", {
            "special": nan | product_inf | c.inf,
            "special_bits": pack_special(Mux(product_inf, product_sign, c.sign), nan=nan, inf=1),
            # Biased exponent of the product's hidden-bit position (bit 46).
            "product_exponent": (a.exponent + b.exponent - BIAS).as_signed(),
            # The addend on top lines its hidden bit up with window bit 75; the product's
            # hidden bit then sits at bit 49 + (product exponent - this).
            "addend_reference": (c.exponent - _TOP_ABOVE_PRODUCT).as_signed(),
            "addend_exponent": c.exponent,
            "product_zero": a.zero | b.zero,
            "product_sign": product_sign,
            "addend_sign": c.sign,
            "addend": c.significand,
            "a": a.significand, "b": b.significand,
        })

        # Stage 2: the addend's right shift from the top of the window is
        # product exponent - (addend exponent - 26); when negative (the addend lies more
        # than 49 bits above the product) or the product is zero, the addend stays on top.
        shift = (s1["product_exponent"] - s1["addend_reference"]).as_signed()
        addend_on_top = (shift < 0) | s1["product_zero"]
        top_exponent = Mux(addend_on_top, s1["addend_exponent"],
                           s1["product_exponent"] + _TOP_ABOVE_PRODUCT).as_signed()
        s2 = pipe.register_stage("s2_", {
            "addend_on_top": addend_on_top,
            "addend_shift": Mux(addend_on_top, 0, shift).as_unsigned()[:10],
            # The sum has one carry bit above the window.
            "top_exponent": (top_exponent + 1).as_signed(),
            **partial_products(s1["a"], s1["b"]),
            **{name: s1[name] for name in ("special", "special_bits", "product_sign",
                                           "addend_sign", "addend", "product_zero")},
        })

        # Stage 3: the product in the window (or its sticky bit) and the aligned addend.
        product = product_from_parts(s2)
        shifted, lost = shift_right_sticky(Cat(Const(0, _ADDEND_TOP), s2["addend"]),
                                           s2["addend_shift"])
        s3 = pipe.register_stage("s3_", {
            "product": Mux(s2["addend_on_top"], ~s2["product_zero"], Cat(Const(0, _GUARD), product)),
            "addend": Cat(shifted[0] | lost, shifted[1:]),
            **back_end_controls(s2["top_exponent"], _WINDOW + 1),
            **{name: s2[name] for name in ("special", "special_bits", "product_sign",
                                           "addend_sign", "top_exponent")},
        })

        # Stage 4: the magnitude of the sum and its sign.
        subtract = s3["product_sign"] ^ s3["addend_sign"]
        product_minus_addend = (s3["product"] - s3["addend"])[:_WINDOW + 1]
        addend_minus_product = (s3["addend"] - s3["product"])[:_WINDOW]
        addend_larger = product_minus_addend[-1]
        magnitude = Mux(subtract,
                        Mux(addend_larger, addend_minus_product, product_minus_addend[:_WINDOW]),
                        s3["product"] + s3["addend"])[:_WINDOW + 1]
        s4 = pipe.register_stage("s4_", {
            "sum": magnitude,
            "sign": Mux(subtract & addend_larger, s3["addend_sign"], s3["product_sign"]),
            # An exact zero is -0 only when both terms are negative (hence both zeros).
            "zero_sign": s3["product_sign"] & s3["addend_sign"],
            **{name: s3[name] for name in ("special", "special_bits", "top_exponent",
                                           "limit_mask", "right_shift")},
        })

        return normalize_round_pack(
            pipe, sign=s4["sign"], zero_sign=s4["zero_sign"], exponent=s4["top_exponent"],
            significand=s4["sum"], limit_mask=s4["limit_mask"], right_shift=s4["right_shift"],
            special=s4["special"], special_bits=s4["special_bits"], split_count=True)
