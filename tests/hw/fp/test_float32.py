"""The combinational building blocks of hw/fp/float32.py on their own, in Amaranth's
simulator, against their definitions: classification by unpacking, and the right shift
whose sticky bit says whether any one bit was shifted out (every value and amount of a
small width)."""

from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from matndp.hw.fp.float32 import shift_right_sticky, unpack


def _combinational(m, bench):
    simulator = Simulator(m)
    simulator.add_testbench(bench)
    simulator.run()


def test_unpack_classifies_every_kind_of_encoding():
    m = Module()
    bits = Signal(32)
    unpacked = unpack(m, bits)
    encodings = [sign << 31 | exponent << 23 | fraction
                 for sign in (0, 1) for exponent in (0, 1, 0x7F, 0xFE, 0xFF)
                 for fraction in (0, 1, 0x400000, 0x7FFFFF)]

    async def bench(ctx):
        for word in encodings:
            ctx.set(bits, word)
            exponent, fraction = word >> 23 & 0xFF, word & 0x7FFFFF
            expected = {
                "sign": word >> 31,
                "exponent": exponent or 1,
                "significand": fraction | (exponent != 0) << 23,
                "zero": int(exponent == 0 and fraction == 0),
                "subnormal": int(exponent == 0 and fraction != 0),
                "inf": int(exponent == 0xFF and fraction == 0),
                "nan": int(exponent == 0xFF and fraction != 0),
            }
            got = {name: ctx.get(getattr(unpacked, name)) for name in expected}
            assert got == expected, f"{word:#010x}"
    _combinational(m, bench)


def test_shift_right_sticky_against_its_definition():
    width, amount_width = 7, 4
    m = Module()
    value, amount = Signal(width), Signal(amount_width)
    shifted, lost = shift_right_sticky(value, amount)
    out_shifted, out_lost = Signal(width), Signal()
    m.d.comb += [out_shifted.eq(shifted), out_lost.eq(lost)]

    async def bench(ctx):
        for v in range(1 << width):
            for a in range(1 << amount_width):
                ctx.set(value, v)
                ctx.set(amount, a)
                assert (ctx.get(out_shifted), ctx.get(out_lost)) == \
                    (v >> a, int(v & ((1 << a) - 1) != 0)), f"{v:#x} >> {a}"
    _combinational(m, bench)
