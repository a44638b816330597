"""Every instruction's meaning in the simulator, against references written from the
ISA's semantics (gmpy2/MPFR through the FP golden model, numpy, Python integers)."""

import gmpy2
import numpy as np
import pytest

from matndp.host.kernels.divisor import divisor_descriptor
from matndp.sim.golden.fp import (bits_to_float, canonicalize_nans,
                                  directed_operands, float_to_bits, mismatches,
                                  random_operands, reference)
from tests.host.kernels.harness import run_scalar, run_vector


M64 = (1 << 64) - 1
SIGN = np.uint32(0x80000000)


def _operands(op, count=4000):
    directed = directed_operands(op)
    randomized = random_operands(op, count, seed=5)
    return [np.concatenate([d, r]) for d, r in zip(directed, randomized)]


FP_CASES = [
    ("vadd v1, DATA, v2", "add", lambda ops: reference("add", *ops)),
    ("vsub v1, DATA, v2", "sub", lambda ops: reference("sub", *ops)),
    ("vmul v1, DATA, v2", "mul", lambda ops: reference("mul", *ops)),
    ("vdiv v1, DATA, v2", "div", lambda ops: reference("div", *ops)),
    ("vsqrt v1, DATA", "sqrt", lambda ops: reference("sqrt", *ops)),
    ("vmin v1, DATA, v2", "min", lambda ops: reference("min", *ops)),
    ("vmax v1, DATA, v2", "max", lambda ops: reference("max", *ops)),
    ("vfma v1, DATA, v2, v3", "fma", lambda ops: reference("fma", *ops)),
    ("vfms v1, DATA, v2, v3", "fma", lambda ops: reference("fma", ops[0], ops[1], ops[2] ^ SIGN)),
    ("vfnma v1, DATA, v2, v3", "fma", lambda ops: reference("fma", ops[0] ^ SIGN, ops[1], ops[2])),
]


@pytest.mark.parametrize("instruction, op, expected", FP_CASES, ids=[c[0].split()[0] for c in FP_CASES])
def test_fp_arithmetic(instruction, op, expected):
    operands = _operands(op)
    actual = run_vector(instruction, *operands)
    assert not mismatches(expected(operands), actual, *operands)


def test_rsqrt():
    (a,) = _operands("sqrt")
    with gmpy2.context(gmpy2.ieee(32)):
        expected = float_to_bits([float(gmpy2.div(1, gmpy2.sqrt(gmpy2.mpfr(x)))) for x in bits_to_float(a)])
    assert not mismatches(expected, run_vector("vrsqrt v1, DATA", a), a)


@pytest.mark.parametrize("instruction, relation", [
    ("vcmpeq v1, DATA, v2", np.equal), ("vcmplt v1, DATA, v2", np.less),
    ("vcmple v1, DATA, v2", np.less_equal)])
def test_comparisons(instruction, relation):
    a, b = _operands("min")
    expected = relation(bits_to_float(a), bits_to_float(b)).astype(np.uint32)
    assert (run_vector(instruction, a, b) == expected).all()


def test_select_moves_bits_unchanged():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 1 << 32, (2, 800), dtype=np.uint64).astype(np.uint32)
    a[:8] = [0x7F800001, 0xFFC00001, 0x7FFFFFFF, 0x80000000, 0, 1, 0xFFFFFFFF, 0x7FC00000]
    c = rng.integers(0, 1 << 32, 800, dtype=np.uint64).astype(np.uint32)
    assert (run_vector("vsel v1, DATA, v2, v3", a, b, c) == np.where(c & 1, a, b)).all()


@pytest.mark.parametrize("instruction, bit_operation", [
    ("vabs v1, DATA", lambda a: a & np.uint32(0x7FFFFFFF)), ("vneg v1, DATA", lambda a: a ^ SIGN)])
def test_sign_operations(instruction, bit_operation):
    (a,) = _operands("sqrt")
    expected = canonicalize_nans(bit_operation(a))
    assert (run_vector(instruction, a) == expected).all()


def _tree(values, combine):
    values = list(values)
    while len(values) > 1:
        values = [combine(values[i], values[i + 1]) for i in range(0, len(values), 2)]
    return values[0]


def test_reductions_in_pairwise_tree_order():
    a = random_operands("add", 8 * 400, seed=9)[0]
    a[:8] = [0x4B800000, 0, 0x3F800000, 0x3F800000, 0, 0, 0, 0]   # order visible
    sums = run_vector("vredsum v1, DATA", a).reshape(-1, 8)
    maxima = run_vector("vredmax v1, DATA", a).reshape(-1, 8)
    for row, total, top in zip(a.reshape(-1, 8), sums, maxima):
        expected_sum = _tree(row, lambda x, y: reference("add", [x], [y])[0])
        expected_max = _tree(row, lambda x, y: reference("max", np.array([x]), np.array([y]))[0])
        assert (total == expected_sum).all() and (top == expected_max).all()
    # (2^24 + 0) + (1 + 1) = 2^24 + 2; adding lane by lane would stop at 2^24.
    assert sums[0, 0] == 0x4B800001


def test_bf16_conversions():
    a = random_operands("f32_to_bf16", 8 * 300, seed=4)[0]
    halves = a.view("<u2").astype(np.uint32).reshape(-1, 16)
    low = run_vector("vcvtlo v1, DATA", a).reshape(-1, 8)
    high = run_vector("vcvthi v1, DATA", a).reshape(-1, 8)
    assert (low == reference("bf16_to_f32", halves[:, :8].reshape(-1)).reshape(-1, 8)).all()
    assert (high == reference("bf16_to_f32", halves[:, 8:].reshape(-1)).reshape(-1, 8)).all()
    b = random_operands("f32_to_bf16", 8 * 300, seed=5)[0]
    packed = run_vector("vpackbf v1, DATA, v2", a, b).view("<u2").reshape(-1, 16)
    assert (packed[:, :8].reshape(-1) == reference("f32_to_bf16", a)).all()
    assert (packed[:, 8:].reshape(-1) == reference("f32_to_bf16", b)).all()


INTEGER_LANES = [
    ("viadd", lambda a, b: a + b), ("visub", lambda a, b: a - b), ("viand", lambda a, b: a & b),
    ("vior", lambda a, b: a | b), ("vixor", lambda a, b: a ^ b),
    ("vishl", lambda a, b: a << (b & 31)), ("vishr", lambda a, b: a >> (b & 31)),
    ("visra", lambda a, b: (a - ((a >> 31) << 32)) >> (b & 31)),
]


@pytest.mark.parametrize("mnemonic, function", INTEGER_LANES, ids=[m for m, _ in INTEGER_LANES])
def test_integer_lanes_wrap_at_32_bits(mnemonic, function):
    rng = np.random.default_rng(2)
    a, b = rng.integers(0, 1 << 32, (2, 800), dtype=np.uint64).astype(np.uint32)
    b[:40] = np.arange(40)
    expected = [function(int(x), int(y)) % (1 << 32) for x, y in zip(a, b)]
    assert run_vector(f"{mnemonic} v1, DATA, v2", a, b).tolist() == expected


def test_vector_immediates_and_argument_words_broadcast():
    a = np.arange(16, dtype=np.float32).view(np.uint32)
    assert (run_vector("vmul v1, DATA, 2.0", a).view(np.float32) == np.arange(16) * 2).all()
    assert (run_vector("viadd v1, DATA, -1", np.arange(16, dtype=np.uint32))
            == (np.arange(16) - 1) % (1 << 32)).all()
    assert (run_vector("vsel v1, DATA, v2, LANE", a, np.zeros(16)) ==
            np.where(np.arange(16) % 2, a, 0)).all()
    # An argument word broadcasts its low 32 bits (a2 is OUT, an address).
    out = run_vector("vixor v1, DATA, a2", np.zeros(8, dtype=np.uint32))
    assert len(set(out.tolist())) == 1


def test_moves_between_scalar_and_vector():
    a = np.arange(8, dtype=np.uint32) * 3
    assert (run_vector("vsplat v1, 0x12345678", a) == 0x12345678).all()
    out = run_vector("""vget x4, DATA, 13
    vsplat v1, x4""", a)
    assert (out == a[13 % 8]).all()


SCALAR_VALUES = [0, 1, 2, 5, 63, 64, 65, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32,
                 (1 << 63) - 1, 1 << 63, M64, 0x0123456789ABCDEF, 0xFEDCBA9876543210]


def _signed(x):
    return x - (1 << 64) if x >> 63 else x


SCALAR_OPERATIONS = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("and", lambda a, b: a & b),
    ("or", lambda a, b: a | b), ("xor", lambda a, b: a ^ b), ("shl", lambda a, b: a << (b & 63)),
    ("shr", lambda a, b: a >> (b & 63)), ("sra", lambda a, b: _signed(a) >> (b & 63)),
    ("slt", lambda a, b: int(_signed(a) < _signed(b))), ("sltu", lambda a, b: int(a < b)),
    ("mul", lambda a, b: (a & 0xFFFFFFFF) * (b & 0xFFFFFFFF)),
]


@pytest.mark.parametrize("mnemonic, function", SCALAR_OPERATIONS, ids=[m for m, _ in SCALAR_OPERATIONS])
def test_scalar_alu_wraps_at_64_bits(mnemonic, function):
    pairs = [(a, b) for a in SCALAR_VALUES for b in SCALAR_VALUES]
    a, b = zip(*pairs)
    expected = [function(x, y) & M64 for x, y in pairs]
    assert run_scalar(f"{mnemonic} x1, a0, a1", a, b) == expected


def test_scalar_immediates_are_sign_extended():
    assert run_scalar("add x1, a0, -1", [5], [0]) == [4]
    assert run_scalar("and x1, a0, -16", [M64], [0]) == [M64 - 15]


@pytest.mark.parametrize("condition, function", [
    ("beq", lambda a, b: a == b), ("bne", lambda a, b: a != b),
    ("blt", lambda a, b: _signed(a) < _signed(b)), ("bge", lambda a, b: _signed(a) >= _signed(b)),
    ("bltu", lambda a, b: a < b), ("bgeu", lambda a, b: a >= b)])
def test_branches(condition, function):
    pairs = [(a, b) for a in SCALAR_VALUES[::3] for b in SCALAR_VALUES[::3]]
    a, b = zip(*pairs)
    taken = run_scalar(f"""add x1, x0, 0
    {condition} a0, a1, yes
    jump done
yes: add x1, x0, 1
done: nop""", a, b)
    assert taken == [int(function(x, y)) for x, y in pairs]


def test_division_by_constants():
    rng = np.random.default_rng(3)
    for divisor in (1, 3, 7, 10, 3136, 50176, (1 << 24) - 1):
        limit = (1 << 31) - 1
        descriptor = divisor_descriptor(divisor, limit)
        n = [0, 1, divisor - 1, divisor, limit] + rng.integers(0, limit, 30).tolist()
        assert run_scalar("divc x1, a0, a1", n, [descriptor.word] * len(n)) == [x // divisor for x in n]
        assert run_scalar("remc x1, a0, a1", n, [descriptor.word] * len(n)) == [x % divisor for x in n]
    # The formula for any operand: only a[31:0] is divided.
    descriptor = divisor_descriptor(5)
    assert run_scalar("divc x1, a0, a1", [(7 << 32) | 12], [descriptor.word]) == [2]
