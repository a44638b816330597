"""Every instruction's meaning in the simulator, against references written from the
ISA's semantics (gmpy2/MPFR through the FP golden model, numpy, Python integers)."""

import gmpy2
import numpy as np
import pytest

from matndp.host.kernels.divisor import divisor_descriptor
from matndp.sim.golden.fp import (bits_to_float, canonicalize_nans,
                                  directed_operands, float_to_bits, mismatches,
                                  random_operands, reference)
from matndp.hw.engine.isa import ErrorCause
from matndp.host.kernels.assembler import assemble
from matndp.host.kernels.iss import FilterEntry, InstructionSetSimulator, IssConfig, TriggerEvents
from matndp.host.kernels.memory import Memory
from tests.host.kernels.harness import run_scalar, run_sector, run_vector


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
    # A shift count of -1 is 2^64 - 1: by 63; sltu against -1 compares with 2^64 - 1.
    assert run_scalar("shl x1, a0, -1", [1], [0]) == [1 << 63]
    assert run_scalar("sltu x1, a0, -1", [M64 - 1, M64], [0, 0]) == [1, 0]
    assert run_scalar("slt x1, a0, -1", [M64 - 1, M64], [0, 0]) == [1, 0]


def _taken(condition, a, b):
    """1 for each pair (a, b) for which branch ``condition`` is taken, else 0."""
    return run_scalar(f"""add x1, x0, 0
    {condition} a0, a1, yes
    jump done
yes: add x1, x0, 1
done: nop""", a, b)


@pytest.mark.parametrize("condition, function", [
    ("beq", lambda a, b: a == b), ("bne", lambda a, b: a != b),
    ("blt", lambda a, b: _signed(a) < _signed(b)), ("bge", lambda a, b: _signed(a) >= _signed(b)),
    ("bltu", lambda a, b: a < b), ("bgeu", lambda a, b: a >= b)])
def test_branches(condition, function):
    pairs = [(a, b) for a in SCALAR_VALUES[::3] for b in SCALAR_VALUES[::3]]
    a, b = zip(*pairs)
    assert _taken(condition, a, b) == [int(function(x, y)) for x, y in pairs]


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


# Hand-worked boundary values: shifts by 0, 31, 32, 63 and 64 + k (only b & 63 counts),
# wrap-around, operand order, and where signed and unsigned order differ.
SCALAR_BOUNDARIES = [
    ("add", M64, 1, 0), ("add", (1 << 63) - 1, 1, 1 << 63), ("sub", 0, 1, M64), ("sub", 3, 5, M64 - 1),
    ("sub", 5, 3, 2), ("and", 0xF0F0, 0x0FF0, 0x00F0), ("or", 0xF0F0, 0x0FF0, 0xFFF0),
    ("xor", 0xF0F0, 0x0FF0, 0xFF00),
    ("shl", 1, 0, 1), ("shl", 1, 31, 1 << 31), ("shl", 1, 32, 1 << 32), ("shl", 1, 63, 1 << 63),
    ("shl", 1, 64, 1), ("shl", 1, 65, 2), ("shl", 3, 63, 1 << 63), ("shl", 2, 1, 4),
    ("shr", 1 << 63, 63, 1), ("shr", M64, 32, 0xFFFFFFFF), ("shr", M64, 0, M64), ("shr", M64, 64, M64),
    ("shr", 1 << 63, 31, 1 << 32), ("shr", 4, 1, 2),
    ("sra", 1 << 63, 63, M64), ("sra", 1 << 63, 32, 0xFFFFFFFF80000000), ("sra", (1 << 63) - 1, 62, 1),
    ("sra", 1 << 63, 64, 1 << 63), ("sra", 1 << 63, 0, 1 << 63), ("sra", 1 << 62, 31, 1 << 31),
    ("slt", M64, 0, 1), ("slt", 0, M64, 0), ("slt", 5, 5, 0), ("slt", 4, 5, 1), ("slt", 1 << 63, (1 << 63) - 1, 1),
    ("sltu", M64, 0, 0), ("sltu", 0, M64, 1), ("sltu", 5, 5, 0), ("sltu", 4, 5, 1),
    ("sltu", 1 << 63, (1 << 63) - 1, 0),
    ("mul", 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFE00000001), ("mul", (1 << 32) | 3, 5, 15),
    ("mul", 7, (9 << 32) | 6, 42), ("mul", 1 << 31, 2, 1 << 32),
    # Divisor descriptors written out (multiplier | shift << 32 | divisor << 40), any
    # multiplier: the formula, not only exact division; a's high half and bits 39:38 unused.
    ("divc", 10, 3 | 1 << 32 | 7 << 40, 15), ("divc", (5 << 32) | 10, 3 | 1 << 32 | 7 << 40, 15),
    ("divc", 10, 3 | 1 << 32 | 3 << 38 | 7 << 40, 15), ("divc", 7, 6, 42),
    ("divc", 0xFFFFFFFF, 0xFFFFFFFF | 63 << 32, 1), ("divc", 0xFFFFFFFF, 0xFFFFFFFF | 32 << 32, 0xFFFFFFFE),
    ("remc", 17, 1 | 2 << 32 | 4 << 40, 1), ("remc", 10, 3 | 1 << 32 | 7 << 40, M64 - 94),
    ("remc", (5 << 32) | 17, 1 | 2 << 32 | 3 << 38 | 4 << 40, 1),
    ("remc", 0xFFFFFFFF, 0xFFFFFFFF | 63 << 32 | 0xFFFFFF << 40, 0xFFFFFFFF - 0xFFFFFF),
]


@pytest.mark.parametrize("mnemonic", sorted({case[0] for case in SCALAR_BOUNDARIES}))
def test_scalar_alu_at_boundary_values(mnemonic):
    cases = [case[1:] for case in SCALAR_BOUNDARIES if case[0] == mnemonic]
    a, b, expected = zip(*cases)
    assert run_scalar(f"{mnemonic} x1, a0, a1", a, b) == list(expected)


# (a, b) and whether beq, bne, blt, bge, bltu, bgeu take the branch, worked by hand.
BRANCH_BOUNDARIES = [
    ((5, 5), "100101"), ((4, 5), "011010"), ((5, 4), "010101"), ((M64, 0), "011001"),
    ((0, M64), "010110"), ((1 << 63, (1 << 63) - 1), "011001"), (((1 << 63) - 1, 1 << 63), "010110"),
    ((M64, M64 - 1), "010101"), ((M64 - 1, M64), "011010"), ((0, 0), "100101"),
]
BRANCHES = ["beq", "bne", "blt", "bge", "bltu", "bgeu"]


@pytest.mark.parametrize("condition", BRANCHES)
def test_branch_conditions_at_boundary_values(condition):
    pairs = [pair for pair, _ in BRANCH_BOUNDARIES]
    a, b = zip(*pairs)
    column = BRANCHES.index(condition)
    assert _taken(condition, a, b) == [int(outcome[column]) for _, outcome in BRANCH_BOUNDARIES]


# Lane by lane: (a, b, a op b), worked by hand; shift counts use b & 31 only.
INTEGER_LANE_BOUNDARIES = {
    "viadd": [(0xFFFFFFFF, 1, 0), (0x7FFFFFFF, 1, 0x80000000), (3, 5, 8), (0, 0, 0)],
    "visub": [(0, 1, 0xFFFFFFFF), (3, 5, 0xFFFFFFFE), (5, 3, 2), (0x80000000, 1, 0x7FFFFFFF)],
    "viand": [(0xF0F0F0F0, 0x0FF00FF0, 0x00F000F0), (0xFFFFFFFF, 0, 0)],
    "vior": [(0xF0F0F0F0, 0x0FF00FF0, 0xFFF0FFF0), (0, 0, 0)],
    "vixor": [(0xF0F0F0F0, 0x0FF00FF0, 0xFF00FF00), (0xFFFFFFFF, 0xFFFFFFFF, 0)],
    "vishl": [(1, 0, 1), (1, 31, 0x80000000), (1, 32, 1), (1, 33, 2), (3, 31, 0x80000000), (2, 1, 4)],
    "vishr": [(0x80000000, 31, 1), (0x80000000, 32, 0x80000000), (0xFFFFFFFF, 4, 0x0FFFFFFF), (4, 1, 2)],
    "visra": [(0x80000000, 31, 0xFFFFFFFF), (0x80000000, 32, 0x80000000), (0x40000000, 30, 1),
              (0xFFFFFFF0, 4, 0xFFFFFFFF), (0x7FFFFFFF, 31, 0), (4, 1, 2)],
}


@pytest.mark.parametrize("mnemonic", INTEGER_LANE_BOUNDARIES)
def test_integer_lanes_at_boundary_values(mnemonic):
    a, b, expected = (np.array(column, dtype=np.uint32) for column in zip(*INTEGER_LANE_BOUNDARIES[mnemonic]))
    assert run_vector(f"{mnemonic} v1, DATA, v2", a, b).tolist() == expected.tolist()


def _lanes_of_elements(elements):
    """BF16 elements 0, 1, … packed two to a lane, element 2i in the low half of lane i."""
    elements = np.asarray(elements, dtype=np.uint32)
    return elements[0::2] | (elements[1::2] << 16)


# BF16 element and its FP32 widening (exact; a NaN becomes the canonical NaN).
WIDENINGS = [(0x3F80, 0x3F800000), (0x8000, 0x80000000), (0x7F80, 0x7F800000), (0xFF80, 0xFF800000),
             (0x7FC1, 0x7FC00000), (0x0001, 0x00010000), (0xC040, 0xC0400000), (0xFF81, 0x7FC00000),
             (0x4000, 0x40000000), (0x0000, 0x00000000), (0x807F, 0x807F0000), (0x7F7F, 0x7F7F0000),
             (0x3E00, 0x3E000000), (0xBF80, 0xBF800000), (0x0080, 0x00800000), (0xFFFF, 0x7FC00000)]


def test_bf16_widening_of_each_half():
    elements, widened = zip(*WIDENINGS)
    a = _lanes_of_elements(elements)
    # Lanes 0-7 hold elements 0-15: the low half is elements 0-7, the high half 8-15.
    assert run_vector("vcvtlo v1, DATA", a).tolist() == list(widened[:8])
    assert run_vector("vcvthi v1, DATA", a).tolist() == list(widened[8:])


# FP32 and its BF16 rounding (nearest, ties to even, carrying into the exponent; NaN → 0x7FC0).
NARROWINGS = [(0x3F808000, 0x3F80), (0x3F818000, 0x3F82), (0x3F808001, 0x3F81), (0x3F807FFF, 0x3F80),
              (0x7F7FFFFF, 0x7F80), (0x80000000, 0x8000), (0xFFC12345, 0x7FC0), (0x007F8000, 0x0080),
              (0x40490FDB, 0x4049), (0xFF7FFFFF, 0xFF80), (0x00000001, 0x0000), (0x7F800000, 0x7F80),
              (0x3F7FFFFF, 0x3F80), (0x7F800001, 0x7FC0), (0xBF818000, 0xBF82), (0x00000000, 0x0000)]


def test_bf16_packing_rounds_ties_to_even():
    wide, narrow = (np.array(column, dtype=np.uint32) for column in zip(*NARROWINGS))
    packed = run_vector("vpackbf v1, DATA, v2", wide[:8], wide[8:])
    assert packed.tolist() == _lanes_of_elements(narrow).tolist()


BYTES = np.arange(32, dtype=np.uint8) + 0xA0


def test_word_loads_and_stores():
    base = BYTES.view(np.uint32)
    # lw zero-extends; sw writes c[31:0] only, the neighbouring word untouched.
    result, out = run_sector("""    lw x1, [B + 12]
    sw [OUT], x1
    shr x2, x1, 32
    sw [OUT + 4], x2
    add x3, x0, -2
    sw [OUT + 28], x3""", np.zeros(8), base)
    assert not result.errors
    assert out.tolist() == [0xAFAEADAC, 0] + base[2:7].tolist() + [0xFFFFFFFE]



def test_word_accesses_of_entries_that_fault_leave_the_others_in_place():
    # One µthread per entry, all run together: entry i loads the word at SRC, adds 1 at
    # 64 bits and stores the low and high words at DST. Entries 1 and 4 fault at the load
    # (misaligned, beyond the memory image), entry 2 at the store (misaligned); the others
    # load and store their own words, entry 3 the memory image's last word.
    image = assemble(""".kernel words
.arg SRC 0
.arg DST 1
.main
    lw   x1, [SRC]
    add  x1, x1, 1
    shr  x2, x1, 32
    sw   [DST], x1
    sw.x [DST + 4], x2
""")
    memory = Memory(256)
    memory.write(0, np.full(256, 0xEE, np.uint8))
    memory.write(32, np.array([0xFFFFFFFF, 7], np.uint32))
    memory.write(252, np.array([0x80000000], np.uint32))
    # Each destination in a sector of its own: stores of two µthreads to one sector race.
    sources_and_destinations = [(32, 64), (34, 96), (36, 130), (252, 160), (256, 192)]
    simulator = InstructionSetSimulator(memory, [FilterEntry(0, 32, image, pair)
                                                 for pair in sources_and_destinations])
    count = len(sources_and_destinations)
    result = simulator.run(TriggerEvents(np.arange(count), np.zeros(count), np.zeros((count, 32)),
                                         np.ones((count, 32), bool), np.zeros(count, bool)))
    assert [(error.entry, error.cause, error.pc) for error in result.errors] == [
        (1, ErrorCause.MISALIGNED, 0), (2, ErrorCause.MISALIGNED, 3), (4, ErrorCause.OUT_OF_WINDOW, 0)]
    untouched = [0xEEEEEEEE] * 8
    assert memory.read(64, np.uint32, 40).reshape(5, 8).tolist() == [
        [0x00000000, 0x00000001] + untouched[2:], untouched, untouched,
        [0x80000001, 0x00000000] + untouched[2:], untouched]
    assert memory.read(32, np.uint32, 2).tolist() == [0xFFFFFFFF, 7]

def test_sector_loads_and_stores():
    data = np.arange(8, dtype=np.uint32) * 0x01010101
    result, out = run_sector("""    vld v1, [B]
    sst [64], v1
    sld v2, [64]
    viadd v3, v2, DATA
    vst [OUT], v3""", data, BYTES.view(np.uint32))
    assert not result.errors
    assert out.tolist() == [(int(x) + int(y)) % (1 << 32) for x, y in zip(BYTES.view(np.uint32), data)]


@pytest.mark.parametrize("enabled", [range(32), range(0), range(1, 2), range(5, 14), range(0, 32, 3), [31]],
                         ids=["all", "none", "byte1", "bytes5-13", "every3rd", "last"])
def test_masked_store_writes_the_enabled_bytes_only(enabled):
    mask = np.zeros(32, bool)
    mask[list(enabled)] = True
    data = np.full(8, 0x11223344, dtype=np.uint32)
    result, out = run_sector("    vstm [OUT], DATA", data, BYTES.view(np.uint32), mask)
    expected = BYTES.copy()
    for index in enabled:
        expected[index] = (0x44, 0x33, 0x22, 0x11)[index % 4]
    assert not result.errors and out.view(np.uint8).tolist() == expected.tolist()


@pytest.mark.parametrize("instruction, cause", [
    ("vld v1, [B + 16]", ErrorCause.MISALIGNED), ("vst [OUT + 4], DATA", ErrorCause.MISALIGNED),
    ("vstm [OUT + 1], DATA", ErrorCause.MISALIGNED), ("lw x1, [B + 2]", ErrorCause.MISALIGNED),
    ("sw [OUT + 3], x0", ErrorCause.MISALIGNED), ("sld v1, [8]", ErrorCause.MISALIGNED),
    ("sst [16], DATA", ErrorCause.MISALIGNED), ("samoadd [4], DATA", ErrorCause.MISALIGNED),
    ("samomax [12], DATA", ErrorCause.MISALIGNED), ("samofma [20], DATA, DATA", ErrorCause.MISALIGNED),
    ("lw x1, [OUT + 32]", ErrorCause.OUT_OF_WINDOW), ("vst [OUT + 32], DATA", ErrorCause.OUT_OF_WINDOW),
    ("sw [x0 - 4], x0", ErrorCause.OUT_OF_WINDOW),
    (f"sst [{IssConfig().scratchpad_bytes}], DATA", ErrorCause.SCRATCHPAD_RANGE),
    (f"samoadd [{IssConfig().scratchpad_bytes}], DATA", ErrorCause.SCRATCHPAD_RANGE),
])
def test_a_bad_access_faults_with_its_cause_and_writes_nothing(instruction, cause):
    result, out = run_sector(f"    {instruction}", np.arange(8), BYTES.view(np.uint32))
    (error,) = result.errors
    assert error.cause is cause and error.pc == 0
    assert out.tolist() == BYTES.view(np.uint32).tolist()


def _floats(*values):
    return np.array(values, dtype=np.float32).view(np.uint32)


# Scratchpad s (from B), the operand c (DATA), and s after each atomic, worked by hand.
ATOMIC_S = _floats(1.0, -0.0, np.inf, 1.0, 3.0, -2.0, 0.5, 0.0)
ATOMIC_C = _floats(2.0, 0.0, -np.inf, 2.0 ** -24, -3.0, -1.0, 0.25, -0.0)
ATOMICS = [
    ("samoadd [0], DATA", [3.0, 0.0, np.nan, 1.0, 0.0, -3.0, 0.75, 0.0]),
    ("samomax [0], DATA", [2.0, 0.0, np.inf, 1.0, 3.0, -1.0, 0.5, 0.0]),
    # s = c × c + s
    ("samofma [0], DATA, DATA", [5.0, 0.0, np.inf, 1.0, 12.0, -1.0, 0.5625, 0.0]),
]


@pytest.mark.parametrize("instruction, expected", ATOMICS, ids=[a[0].split()[0] for a in ATOMICS])
def test_atomics_update_the_scratchpad_sector(instruction, expected):
    result, out = run_sector(f"""    vld v1, [B]
    sst [96], v1
    add x1, x0, 96
    {instruction.replace('[0]', '[x1]')}
    sld v2, [96]
    vst [OUT], v2""", ATOMIC_C, ATOMIC_S)
    expected = _floats(*expected)
    expected[np.isnan(expected.view(np.float32))] = 0x7FC00000
    assert not result.errors and out.tolist() == expected.tolist()


@pytest.mark.parametrize("space, access", [
    ("memory", "lw x1, [OUT + 4]"), ("memory", "sw [OUT + 4], x0"), ("memory", "vld v1, [OUT]"),
    ("memory", "vst [OUT], DATA"), ("memory", "vstm [OUT], DATA"), ("scratchpad", "sld v1, [0]"),
    ("scratchpad", "sst [0], DATA")])
def test_each_access_reports_its_own_pc_in_a_race(space, access):
    store = "vst [OUT], DATA" if space == "memory" else "sst [0], DATA"
    result, _ = run_sector(f"""    bne SEQ, x0, second
    {store}
    exit
second:
    {access}""", np.zeros((2, 8)), np.zeros(8))
    kind = "store/load" if access.split()[0] in ("lw", "vld", "sld") else "store/store"
    assert [(race.space, race.kind, race.first, race.second, race.pc) for race in result.races] == \
        [(space, kind, 0, 1, 3)]


def test_atomics_of_several_threads_round_one_after_the_other_in_trigger_order():
    # 2^24 + 1 rounds to 2^24 (a tie, to even), twice; adding 1 + 1 first would give 2^24 + 2.
    data = np.stack([_floats(*[value] * 8) for value in (2.0 ** 24, 1.0, 1.0)])
    result, out = run_sector("""    samoadd [64], DATA
    sld v1, [64]
    vst [OUT], v1""", data, np.zeros(8))
    assert not result.errors and out.tolist() == [0x4B800000] * 8


def test_lane_and_scalar_moves_at_their_widths():
    a = np.array([0xFFFFFFFF, 1, 2, 3, 4, 5, 6, 0x80000000], dtype=np.uint32)
    # Lane b mod 8 (b = 2^64 - 1: lane 7), zero-extended: 0x80000000 >> 31 is 1.
    assert run_vector("""vget x4, DATA, -1
    shr x5, x4, 31
    vsplat v1, x5""", a).tolist() == [1] * 8
    # vsplat takes a[31:0] of a 64-bit scalar.
    assert run_vector("""add x4, x0, 0x23456789
    add x5, x0, 1
    shl x5, x5, 32
    or x4, x4, x5
    vsplat v1, x4""", a).tolist() == [0x23456789] * 8


def test_vsplat_of_some_uthreads_fills_each_ones_own_lanes_with_its_own_scalar():
    # Eight µthreads, one per sector: the even ones splat their OFFSET (32 i), the odd ones
    # their SEQ (i) less 3, whose low 32 bits wrap below zero for the first.
    out = run_vector("""and x1, OFFSET, 32
    bne x1, x0, odd
    vsplat v1, OFFSET
    jump done
odd:
    sub x2, SEQ, 3
    vsplat v1, x2
done:
    nop""", np.zeros(64, np.uint32))
    expected = [32 * i if i % 2 == 0 else (i - 3) % (1 << 32) for i in range(8)]
    assert out.reshape(8, 8).tolist() == [[value] * 8 for value in expected]
