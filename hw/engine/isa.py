"""The NDP kernel instruction set, described once.

The RTL decoder, the assembler and disassembler, the instruction-set simulator and
``docs/isa.md`` are all derived from this module; nothing else defines an opcode, a field
position or an operand rule.

A kernel runs as µthreads, one per triggering sector (plus an initializer and a finalizer
per filter entry). Each µthread has 16 scalar registers ``x0``–``x15`` (64-bit, ``x0``
reads as zero) and 16 vector registers ``v0``–``v15`` (one sector: ``lanes`` 32-bit
elements, 8 at 32-byte sectors). Instructions are 64 bits:

====== ======== ===================================================================
bits   field    meaning
====== ======== ===================================================================
7:0    opcode   :class:`Opcode`
11:8   rd       destination register (scalar or vector by the opcode)
17:12  a        source operand (:class:`OperandKind` in 17:16, index in 15:12)
23:18  b        source operand
29:24  c        source operand
30     release  the µthread releases its entry's ordering ticket (scratchpad atomics)
31     exit     the µthread ends once this instruction has completed
63:32  imm      immediate: an operand value, a memory offset or a branch displacement
====== ======== ===================================================================

A source operand is a register, a special register (what the trigger delivered, see
:class:`ScalarSpecial` and :class:`VectorSpecial`), a word of the entry's argument block,
or the immediate. In a vector operand, an argument word or the immediate is broadcast to
every lane (its low 32 bits). Instructions whose immediate is an offset or a target
(:attr:`ImmediateUse.OFFSET`, :attr:`ImmediateUse.TARGET`) take no immediate operand. A
memory or scratchpad address ``A`` is the sum of the instruction's address operands and
the immediate (byte addresses; sectors aligned to the sector size, words to 4 bytes).
"""

import enum as python_enum
from dataclasses import dataclass

from amaranth.hdl import unsigned
from amaranth.lib import data, enum


__all__ = [
    "INSTRUCTION_BITS", "REGISTER_COUNT", "ARGUMENT_WORDS",
    "Opcode", "OperandKind", "ScalarSpecial", "VectorSpecial", "Unit", "OperandType",
    "ImmediateUse", "InstructionSpec", "INSTRUCTIONS", "SPEC_BY_OPCODE", "SPEC_BY_MNEMONIC",
    "instruction_layout", "operand_layout", "DIVISOR_LAYOUT",
]


INSTRUCTION_BITS = 64
REGISTER_COUNT = 16          # of each kind, scalar and vector
ARGUMENT_WORDS = 16          # 64-bit words per argument block


class Opcode(enum.Enum, shape=8):
    # 0 is no instruction, so that an unwritten or zeroed instruction word is illegal.
    ILLEGAL = 0x00
    NOP = 0x01
    EXIT = 0x02
    # Scalar integer ALU (64-bit).
    ADD = 0x10
    SUB = 0x11
    AND = 0x12
    OR = 0x13
    XOR = 0x14
    SHL = 0x15
    SHR = 0x16
    SRA = 0x17
    SLT = 0x18
    SLTU = 0x19
    # Scalar multiply and division by a constant (pipelined multiplier).
    MUL = 0x1A
    DIVC = 0x1B
    REMC = 0x1C
    # Branches (to pc + imm, in instructions).
    BEQ = 0x20
    BNE = 0x21
    BLT = 0x22
    BGE = 0x23
    BLTU = 0x24
    BGEU = 0x25
    JUMP = 0x26
    # Vector FP32 through the fused multiply-add lanes.
    VADD = 0x30
    VSUB = 0x31
    VMUL = 0x32
    VFMA = 0x33
    VFMS = 0x34
    VFNMA = 0x35
    # Vector FP32, single-cycle lanes.
    VMIN = 0x38
    VMAX = 0x39
    VCMPEQ = 0x3A
    VCMPLT = 0x3B
    VCMPLE = 0x3C
    VSEL = 0x3D
    VABS = 0x3E
    VNEG = 0x3F
    # Vector FP32 divide and square root (iterative, shared).
    VDIV = 0x40
    VSQRT = 0x41
    VRSQRT = 0x42
    # Horizontal reductions.
    VREDSUM = 0x44
    VREDMAX = 0x45
    # BF16 <-> FP32.
    VCVTLO = 0x48
    VCVTHI = 0x49
    VPACKBF = 0x4A
    # Vector 32-bit integer lanes.
    VIADD = 0x50
    VISUB = 0x51
    VIAND = 0x52
    VIOR = 0x53
    VIXOR = 0x54
    VISHL = 0x55
    VISHR = 0x56
    VISRA = 0x57
    # Moves between scalar and vector registers.
    VSPLAT = 0x58
    VGET = 0x59
    # Memory, through the slice's arbiter.
    VLD = 0x60
    VST = 0x61
    VSTM = 0x62
    LW = 0x63
    SW = 0x64
    # Scratchpad.
    SLD = 0x68
    SST = 0x69
    SAMOADD = 0x6A
    SAMOFMA = 0x6B
    SAMOMAX = 0x6C


class OperandKind(enum.Enum, shape=2):
    REGISTER = 0
    SPECIAL = 1
    ARGUMENT = 2
    IMMEDIATE = 3


class ScalarSpecial(enum.Enum, shape=4):
    """Scalar special registers: what a µthread was started with."""
    OFFSET = 0       # triggering address − the entry's base
    ADDR = 1         # triggering address
    ENTRY = 2        # filter entry index
    SEQ = 3          # this µthread's place among the entry's triggers (0, 1, ...)
    MASK = 4         # byte enables of the triggering access (low 64 bits)
    WRITE = 5        # 1 when a write triggered, 0 for a read
    SLOT = 6         # µthread slot
    COMPLETED = 7    # µthreads of the entry finished so far (read by finalizers)


class VectorSpecial(enum.Enum, shape=4):
    """Vector special registers."""
    DATA = 0         # the triggering sector (written data, or read data returned)
    LANE = 1         # lane indices 0, 1, ... as 32-bit integers
    LANEMASK = 2     # per lane: all ones when all of its bytes were enabled, else zero


class Unit(python_enum.Enum):
    """Which part of the engine executes an instruction."""
    CONTROL = "control"
    ALU = "alu"
    MULTIPLY = "multiply"
    BRANCH = "branch"
    FMA = "fma"
    VECTOR = "vector"
    DIVIDE = "divide"
    REDUCE = "reduce"
    CONVERT = "convert"
    MEMORY = "memory"
    SCRATCHPAD = "scratchpad"


class OperandType(python_enum.Enum):
    NONE = "-"
    SCALAR = "x"
    VECTOR = "v"


class ImmediateUse(python_enum.Enum):
    OPERAND = "operand"      # the immediate may stand in any one source operand
    OFFSET = "offset"        # address = the address operands + imm
    TARGET = "target"        # branch target: pc + imm (signed), so kernels are position-independent


@dataclass(frozen=True)
class InstructionSpec:
    """One instruction: its encoding, operand types and meaning.

    rd, a, b, c: the type of the destination and of each source (``NONE`` when unused).
    semantics:   what it computes, in the notation of ``docs/isa.md``.
    """
    mnemonic: str
    opcode: Opcode
    unit: Unit
    rd: OperandType
    a: OperandType
    b: OperandType
    c: OperandType
    semantics: str
    immediate: ImmediateUse = ImmediateUse.OPERAND
    address: tuple = ()

    def __post_init__(self):
        if (self.immediate is ImmediateUse.OFFSET) != bool(self.address):
            raise ValueError(f"{self.mnemonic}: an offset immediate goes with address operands")
        for name in self.address:
            if getattr(self, name) is not OperandType.SCALAR:
                raise ValueError(f"{self.mnemonic}: address operand {name} must be scalar")

    @property
    def sources(self):
        return tuple(name for name in ("a", "b", "c") if getattr(self, name) is not OperandType.NONE)

    @property
    def writes(self):
        return self.rd is not OperandType.NONE

    @property
    def is_atomic(self):
        return self.opcode in (Opcode.SAMOADD, Opcode.SAMOFMA, Opcode.SAMOMAX)


_N, _X, _V = OperandType.NONE, OperandType.SCALAR, OperandType.VECTOR


def _spec(mnemonic, unit, rd, a, b, c, semantics, immediate=ImmediateUse.OPERAND):
    return InstructionSpec(mnemonic, Opcode[mnemonic.upper()], unit, rd, a, b, c, semantics,
                           immediate)


def _access(mnemonic, unit, rd, c, semantics, *, address=("a", "b"), b=_X):
    """A memory or scratchpad instruction: the address is the sum of the ``address``
    operands and the immediate; ``c`` (and ``b`` when not an address) are values."""
    return InstructionSpec(mnemonic, Opcode[mnemonic.upper()], unit, rd, _X, b, c, semantics,
                           ImmediateUse.OFFSET, address)


INSTRUCTIONS = (
    _spec("nop", Unit.CONTROL, _N, _N, _N, _N, "nothing"),
    _spec("exit", Unit.CONTROL, _N, _N, _N, _N, "the µthread ends"),

    _spec("add", Unit.ALU, _X, _X, _X, _N, "rd = a + b"),
    _spec("sub", Unit.ALU, _X, _X, _X, _N, "rd = a − b"),
    _spec("and", Unit.ALU, _X, _X, _X, _N, "rd = a & b"),
    _spec("or", Unit.ALU, _X, _X, _X, _N, "rd = a | b"),
    _spec("xor", Unit.ALU, _X, _X, _X, _N, "rd = a ^ b"),
    _spec("shl", Unit.ALU, _X, _X, _X, _N, "rd = a << (b & 63)"),
    _spec("shr", Unit.ALU, _X, _X, _X, _N, "rd = a >> (b & 63), logical"),
    _spec("sra", Unit.ALU, _X, _X, _X, _N, "rd = a >> (b & 63), arithmetic"),
    _spec("slt", Unit.ALU, _X, _X, _X, _N, "rd = 1 if a < b (signed) else 0"),
    _spec("sltu", Unit.ALU, _X, _X, _X, _N, "rd = 1 if a < b (unsigned) else 0"),
    _spec("mul", Unit.MULTIPLY, _X, _X, _X, _N, "rd = a[31:0] × b[31:0], unsigned, 64-bit product"),
    _spec("divc", Unit.MULTIPLY, _X, _X, _X, _N,
          "rd = a[31:0] ÷ d, rounded down, with b a divisor descriptor of d"),
    _spec("remc", Unit.MULTIPLY, _X, _X, _X, _N,
          "rd = a[31:0] mod d, with b a divisor descriptor of d"),

    _spec("beq", Unit.BRANCH, _N, _X, _X, _N, "if a == b: go to pc + imm", ImmediateUse.TARGET),
    _spec("bne", Unit.BRANCH, _N, _X, _X, _N, "if a != b: go to pc + imm", ImmediateUse.TARGET),
    _spec("blt", Unit.BRANCH, _N, _X, _X, _N, "if a < b (signed): go to pc + imm", ImmediateUse.TARGET),
    _spec("bge", Unit.BRANCH, _N, _X, _X, _N, "if a >= b (signed): go to pc + imm", ImmediateUse.TARGET),
    _spec("bltu", Unit.BRANCH, _N, _X, _X, _N, "if a < b (unsigned): go to pc + imm", ImmediateUse.TARGET),
    _spec("bgeu", Unit.BRANCH, _N, _X, _X, _N, "if a >= b (unsigned): go to pc + imm", ImmediateUse.TARGET),
    _spec("jump", Unit.BRANCH, _N, _N, _N, _N, "go to pc + imm", ImmediateUse.TARGET),

    _spec("vadd", Unit.FMA, _V, _V, _V, _N, "rd = a + b"),
    _spec("vsub", Unit.FMA, _V, _V, _V, _N, "rd = a − b"),
    _spec("vmul", Unit.FMA, _V, _V, _V, _N, "rd = a × b"),
    _spec("vfma", Unit.FMA, _V, _V, _V, _V, "rd = a × b + c, one rounding"),
    _spec("vfms", Unit.FMA, _V, _V, _V, _V, "rd = a × b − c, one rounding"),
    _spec("vfnma", Unit.FMA, _V, _V, _V, _V, "rd = c − a × b, one rounding"),

    _spec("vmin", Unit.VECTOR, _V, _V, _V, _N, "rd = minimum(a, b) (IEEE 754-2019; NaN propagates, −0 < +0)"),
    _spec("vmax", Unit.VECTOR, _V, _V, _V, _N, "rd = maximum(a, b) (IEEE 754-2019; NaN propagates, −0 < +0)"),
    _spec("vcmpeq", Unit.VECTOR, _V, _V, _V, _N, "rd = 1 if a == b else 0 (quiet; NaN: 0)"),
    _spec("vcmplt", Unit.VECTOR, _V, _V, _V, _N, "rd = 1 if a < b else 0 (quiet; NaN: 0)"),
    _spec("vcmple", Unit.VECTOR, _V, _V, _V, _N, "rd = 1 if a <= b else 0 (quiet; NaN: 0)"),
    _spec("vsel", Unit.VECTOR, _V, _V, _V, _V, "rd = a if c[0] else b (bits moved unchanged)"),
    _spec("vabs", Unit.VECTOR, _V, _V, _N, _N, "rd = |a| (NaN: canonical NaN)"),
    _spec("vneg", Unit.VECTOR, _V, _V, _N, _N, "rd = −a (NaN: canonical NaN)"),

    _spec("vdiv", Unit.DIVIDE, _V, _V, _V, _N, "rd = a ÷ b, correctly rounded"),
    _spec("vsqrt", Unit.DIVIDE, _V, _V, _N, _N, "rd = √a, correctly rounded"),
    _spec("vrsqrt", Unit.DIVIDE, _V, _V, _N, _N, "rd = 1 ÷ √a: √a rounded, then the quotient rounded"),

    _spec("vredsum", Unit.REDUCE, _V, _V, _N, _N,
          "every lane of rd = the sum of a's lanes, added pairwise: lanes (0+1), (2+3), …, "
          "then those sums pairwise, to one"),
    _spec("vredmax", Unit.REDUCE, _V, _V, _N, _N,
          "every lane of rd = maximum of a's lanes, in the same pairwise tree"),

    _spec("vcvtlo", Unit.CONVERT, _V, _V, _N, _N,
          "rd lane i = the BF16 element i of a (a holds 2 × lanes BF16 elements), widened"),
    _spec("vcvthi", Unit.CONVERT, _V, _V, _N, _N,
          "rd lane i = the BF16 element lanes + i of a, widened"),
    _spec("vpackbf", Unit.CONVERT, _V, _V, _V, _N,
          "BF16 elements 0 … lanes−1 of rd = a rounded to BF16 (nearest, ties to even), "
          "elements lanes … 2·lanes−1 = b rounded"),

    _spec("viadd", Unit.VECTOR, _V, _V, _V, _N, "rd = a + b, 32-bit integers"),
    _spec("visub", Unit.VECTOR, _V, _V, _V, _N, "rd = a − b, 32-bit integers"),
    _spec("viand", Unit.VECTOR, _V, _V, _V, _N, "rd = a & b"),
    _spec("vior", Unit.VECTOR, _V, _V, _V, _N, "rd = a | b"),
    _spec("vixor", Unit.VECTOR, _V, _V, _V, _N, "rd = a ^ b"),
    _spec("vishl", Unit.VECTOR, _V, _V, _V, _N, "rd = a << (b & 31)"),
    _spec("vishr", Unit.VECTOR, _V, _V, _V, _N, "rd = a >> (b & 31), logical"),
    _spec("visra", Unit.VECTOR, _V, _V, _V, _N, "rd = a >> (b & 31), arithmetic"),
    _spec("vsplat", Unit.VECTOR, _V, _X, _N, _N, "every lane of rd = a[31:0]"),
    _spec("vget", Unit.VECTOR, _X, _V, _X, _N, "rd = lane (b mod lanes) of a, zero-extended"),

    _access("vld", Unit.MEMORY, _V, _N, "rd = the sector at A"),
    _access("vst", Unit.MEMORY, _N, _V, "the sector at A = c"),
    _access("vstm", Unit.MEMORY, _N, _V,
            "the bytes of the sector at A enabled in the triggering access's MASK = those of c"),
    _access("lw", Unit.MEMORY, _X, _N, "rd = the 32-bit word at A, zero-extended"),
    _access("sw", Unit.MEMORY, _N, _X, "the 32-bit word at A = c[31:0]"),

    _access("sld", Unit.SCRATCHPAD, _V, _N, "rd = the scratchpad sector at A"),
    _access("sst", Unit.SCRATCHPAD, _N, _V, "the scratchpad sector at A = c"),
    _access("samoadd", Unit.SCRATCHPAD, _N, _V,
            "scratchpad sector s at A: s = s + c, lane by lane, atomically"),
    _access("samomax", Unit.SCRATCHPAD, _N, _V,
            "scratchpad sector s at A: s = maximum(s, c), atomically"),
    _access("samofma", Unit.SCRATCHPAD, _N, _V,
            "scratchpad sector s at A: s = b × c + s, one rounding, atomically",
            address=("a",), b=_V),
)

SPEC_BY_OPCODE = {spec.opcode: spec for spec in INSTRUCTIONS}
SPEC_BY_MNEMONIC = {spec.mnemonic: spec for spec in INSTRUCTIONS}


def operand_layout():
    return data.StructLayout({
        "index": unsigned(4),
        "kind":  OperandKind,
    })


def instruction_layout():
    """The 64-bit instruction word, fields LSB first."""
    return data.StructLayout({
        "opcode":  Opcode,
        "rd":      unsigned(4),
        "a":       operand_layout(),
        "b":       operand_layout(),
        "c":       operand_layout(),
        "release": unsigned(1),
        "exit":    unsigned(1),
        "imm":     unsigned(32),
    })


# A divisor descriptor (the operand b of ``divc``/``remc``), built by the runtime for a
# constant divisor d: q = (n × multiplier) >> shift equals n ÷ d (rounded down) for every
# dividend n the runtime checked (``matndp.host.kernels.divisor``); remc also needs d.
DIVISOR_LAYOUT = data.StructLayout({
    "multiplier": unsigned(32),
    "shift":      unsigned(6),
    "reserved":   unsigned(2),
    "divisor":    unsigned(24),
})
