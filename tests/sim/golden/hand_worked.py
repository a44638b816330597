"""FP32 results worked out by hand from the binary32 encoding, for the golden reference
(tests/sim/golden/test_fp.py) and the RTL (tests/hw/fp/test_hand_worked.py) alike:
``(op, operands, expected result)``."""

from matndp.sim.golden.fp import CANONICAL_NAN


HAND_WORKED = [
    ("add", (0x3F800000, 0x33800000), 0x3F800000),   # 1 + 2^-24: tie, even
    ("add", (0x3F800001, 0x33800000), 0x3F800002),   # tie from odd: up
    ("add", (0x7F7FFFFF, 0x73000000), 0x7F800000),   # max + half ulp: tie to inf
    ("sub", (0x3F800000, 0x3F800000), 0x00000000),   # x - x = +0
    ("add", (0x80000000, 0x80000000), 0x80000000),   # -0 + -0 = -0
    ("add", (0x00800000, 0x80000001), 0x007FFFFF),   # min normal - min subnormal
    ("mul", (0x1A000000, 0x1A000000), 0x00000000),   # 2^-150: tie, +0
    ("mul", (0x1A000001, 0x1A000000), 0x00000001),   # just above: min subnormal
    ("mul", (0x00000003, 0x3F000000), 0x00000002),   # 1.5 * 2^-149: tie to even
    # (2 - 2^-23) 2^-75 * (1 + 2^-23) 2^-76 = 2^-150 (1 + 2^-24 - 2^-47): above the tie
    ("mul", (0x1A7FFFFF, 0x19800001), 0x00000001),
    ("fma", (0x1A7FFFFF, 0x19800001, 0x00000000), 0x00000001),
    ("fma", (0x1A7FFFFF, 0x19800001, 0x80000000), 0x00000001),
    ("fma", (0x1A7FFFFF, 0x19800001, 0x00000002), 0x00000003),   # 2 + 1/2 + a hair: 3
    # (1 + 2^-23)^2 2^-128 = 2^-149 (2^21 + 1/2 + 2^-25): above the tie only by the product's
    # last bit, which the one-bit shift into the subnormal form (top-bit exponent 0) pushes out
    ("mul", (0x1F800001, 0x1F800001), 0x00200001),
    ("fma", (0x1F800001, 0x1F800001, 0x80000000), 0x00200001),
    # 1 - 1.5 * 1.5 2^-26 = 1 - 1.125 2^-25: below the midpoint 1 - 2^-25, so 1 - 2^-24; the
    # product's top bit lies just below the addend's last bit, where the sum must keep it
    ("fma", (0xBFC00000, 0x32C00000, 0x3F800000), 0x3F7FFFFF),
    ("fma", (0x3FC00000, 0x32C00000, 0xBF800000), 0xBF7FFFFF),
    ("mul", (0x7F800000, 0x00000000), CANONICAL_NAN),
    ("fma", (0x3F800001, 0x3F800001, 0xBF800002), 0x28800000),   # exact 2^-46
    ("fma", (0x40400000, 0x40A00000, 0xC1700000), 0x00000000),   # 3*5 - 15 = +0
    ("fma", (0x80000000, 0x3F800000, 0x80000000), 0x80000000),   # -0 + -0
    ("fma", (0x7F7FFFFF, 0x40000000, 0xFF7FFFFF), 0x7F7FFFFF),   # no intermediate overflow
]
