"""The NDP kernel instruction set, described once.

The RTL decoder, the assembler and disassembler, the instruction-set simulator and
``docs/isa.md`` are all derived from this module; nothing else defines an opcode, a field
position or an operand rule.

A kernel runs as µthreads, one per triggering sector (plus an initializer and a finalizer
per filter entry). Each µthread has 16 scalar registers ``x0``–``x15`` (64-bit, ``x0``
reads as zero and ignores writes) and 16 vector registers ``v0``–``v15`` (one sector:
``lanes`` 32-bit elements, 8 at 32-byte sectors). Sectors are little-endian: lane ``i``
is bytes ``4i`` … ``4i+3`` of the sector, and a sector of BF16 elements holds element
``k`` in bytes ``2k``, ``2k+1`` (the low half of lane ``k // 2`` for even ``k``).

Instructions are 64 bits, laid out by :func:`instruction_layout` (fields LSB first; what
each field means is :data:`FIELD_MEANING`). A source operand is a register, a special
register (what the trigger delivered, see :class:`ScalarSpecial` and
:class:`VectorSpecial`), a word of the entry's argument block, or the immediate. The
32-bit immediate field is sign-extended to 64 bits wherever a scalar uses it (operand,
address offset, branch displacement); in a vector operand, an argument word or the
immediate is broadcast to every lane (its low 32 bits). Instructions whose immediate is an
offset or a target (:attr:`ImmediateUse.OFFSET`, :attr:`ImmediateUse.TARGET`) take no
immediate operand. A memory or scratchpad address ``A`` is the sum of the instruction's
address operands and the immediate, modulo 2^64 (byte addresses; sectors aligned to the
sector size, words to 4 bytes).

Every instruction word has exactly one legal encoding: fields an instruction does not use
are zero (:meth:`Instruction.check` states each rule), so that the decoder can refuse a
corrupted word rather than run it, and disassembly followed by assembly gives back the
same word.
"""

import enum as python_enum
from dataclasses import dataclass

from amaranth.hdl import unsigned
from amaranth.lib import data, enum


__all__ = [
    "INSTRUCTION_BITS", "REGISTER_COUNT", "ARGUMENT_WORDS",
    "Opcode", "OperandKind", "ScalarSpecial", "VectorSpecial", "Unit", "OperandType",
    "Element", "ImmediateUse", "ErrorCause", "InstructionSpec", "INSTRUCTIONS",
    "SPEC_BY_OPCODE", "SPEC_BY_MNEMONIC", "MEMORY_STORES", "SPECIALS", "NO_TRIGGER_SPECIALS",
    "FIELD_MEANING", "OPERAND_KIND_MEANING", "SPECIAL_MEANING", "ELEMENT_MEANING",
    "UNIT_MEANING", "ERROR_CAUSE_MEANING",
    "instruction_layout", "operand_layout", "DIVISOR_LAYOUT", "INSTRUCTION_FIELDS",
    "DIVISOR_FIELDS", "IllegalInstruction", "Operand", "Instruction",
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
    # Vector FP32 divide and square root (pipelined units, shared by the lanes).
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
    """Scalar special registers: what a µthread was started with (:data:`SPECIAL_MEANING`)."""
    OFFSET = 0
    ADDR = 1
    ENTRY = 2
    SEQ = 3
    MASK = 4
    WRITE = 5
    SLOT = 6
    COMPLETED = 7


class VectorSpecial(enum.Enum, shape=4):
    """Vector special registers (:data:`SPECIAL_MEANING`)."""
    DATA = 0
    LANE = 1
    LANEMASK = 2


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


class Element(python_enum.Enum):
    """How an instruction reads the lanes of a vector operand, which decides the literals
    an immediate in that operand may be written as."""
    FP32 = "fp32"
    INT32 = "int32"
    BITS = "bits"


class ImmediateUse(python_enum.Enum):
    OPERAND = "operand"      # the immediate may stand in any one source operand
    OFFSET = "offset"        # address = the address operands + imm
    TARGET = "target"        # branch target: pc + imm (signed), so kernels are position-independent


class ErrorCause(enum.Enum, shape=3):
    """Why the engine stopped an entry's kernels (:data:`ERROR_CAUSE_MEANING`)."""
    NONE = 0
    ILLEGAL_INSTRUCTION = 1
    MISALIGNED = 2
    OUT_OF_WINDOW = 3
    SCRATCHPAD_RANGE = 4
    WATCHDOG = 5
    MEMORY_ERROR = 6


FIELD_MEANING = {
    "opcode":  "the instruction (:class:`Opcode`)",
    "rd":      "destination register, scalar or vector by the opcode",
    "a":       "source operand: kind in the upper 2 bits (:class:`OperandKind`), index in the lower 4",
    "b":       "source operand",
    "c":       "source operand",
    "release": "the µthread releases its entry's ordering ticket (scratchpad atomics only)",
    "exit":    "the µthread ends once this instruction has completed (not on branches)",
    "imm":     "immediate: an operand value, an address offset or a branch displacement",
}

OPERAND_KIND_MEANING = {
    OperandKind.REGISTER:  "register `x<index>` or `v<index>` by the operand's type",
    OperandKind.SPECIAL:   "special register `<index>`: a ScalarSpecial or VectorSpecial by the operand's type",
    OperandKind.ARGUMENT:  "word `<index>` of the entry's argument block (64-bit; a vector operand broadcasts its low 32 bits)",
    OperandKind.IMMEDIATE: "the imm field (index 0): sign-extended for a scalar, its 32 bits broadcast for a vector",
}

SPECIAL_MEANING = {
    ScalarSpecial.OFFSET:    "triggering address − the entry's base",
    ScalarSpecial.ADDR:      "triggering address",
    ScalarSpecial.ENTRY:     "filter entry index",
    ScalarSpecial.SEQ:       "this µthread's place among the entry's triggers (0, 1, …); in a finalizer, "
                             "its place among the finalizer's µthreads (0 in an initializer)",
    ScalarSpecial.MASK:      "byte enables of the triggering access (bit i: byte i; the low 64 bits)",
    ScalarSpecial.WRITE:     "1 when a write triggered, 0 for a read",
    ScalarSpecial.SLOT:      "µthread slot (depends on timing: not for addressing data)",
    ScalarSpecial.COMPLETED: "µthreads of the entry finished so far (exact in a finalizer)",
    VectorSpecial.DATA:      "the triggering sector (written data, or read data returned)",
    VectorSpecial.LANE:      "lane indices 0, 1, … as 32-bit integers",
    VectorSpecial.LANEMASK:  "per lane: all ones when all of its bytes were enabled, else zero",
}

# What an initializer or finalizer µthread reads in the specials that describe a trigger:
# it has none, so they read as zero. (Its SEQ numbers the finalizer's µthreads.)
NO_TRIGGER_SPECIALS = (ScalarSpecial.OFFSET, ScalarSpecial.ADDR, ScalarSpecial.MASK,
                       ScalarSpecial.WRITE, VectorSpecial.DATA, VectorSpecial.LANEMASK)

ELEMENT_MEANING = {
    Element.FP32:  "binary32 values: an immediate is a float literal or raw bits in hex",
    Element.INT32: "32-bit integers: an immediate is an integer literal",
    Element.BITS:  "moved unchanged: an immediate is any literal",
}

UNIT_MEANING = {
    Unit.CONTROL:    "control",
    Unit.ALU:        "scalar integer ALU (64-bit, wrapping)",
    Unit.MULTIPLY:   "scalar multiplier: 32 × 32 → 64-bit products, division by a constant",
    Unit.BRANCH:     "branches (to pc + imm, in instructions)",
    Unit.FMA:        "vector FP32 through the fused multiply-add lanes",
    Unit.VECTOR:     "vector single-cycle lanes: FP32 compare/select/sign, 32-bit integers, moves",
    Unit.DIVIDE:     "vector FP32 divide and square root (pipelined units, shared by the lanes)",
    Unit.REDUCE:     "horizontal reductions",
    Unit.CONVERT:    "BF16 ↔ FP32",
    Unit.MEMORY:     "memory, through the slice's arbiter",
    Unit.SCRATCHPAD: "scratchpad",
}

ERROR_CAUSE_MEANING = {
    ErrorCause.NONE:                "no error",
    ErrorCause.ILLEGAL_INSTRUCTION: "the word at pc is not a legal instruction (or pc left the kernel)",
    ErrorCause.MISALIGNED:          "a memory or scratchpad address not aligned to its access size",
    ErrorCause.OUT_OF_WINDOW:       "a memory access not wholly inside the engine's memory window",
    ErrorCause.SCRATCHPAD_RANGE:    "a scratchpad access beyond the scratchpad",
    ErrorCause.WATCHDOG:            "the µthread lived longer than the watchdog allows (cycles in "
                                    "the RTL, instructions in the instruction-set simulator)",
    ErrorCause.MEMORY_ERROR:        "memory answered one of the µthread's accesses with an error",
}


@dataclass(frozen=True)
class InstructionSpec:
    """One instruction: its encoding, operand types and meaning.

    rd, a, b, c: the type of the destination and of each source (``NONE`` when unused).
    semantics:   what it computes, in the notation of ``docs/isa.md``.
    immediate:   what the imm field is (:class:`ImmediateUse`).
    address:     the sources summed with imm into the address ``A`` (memory, scratchpad).
    elements:    for each of a, b, c that is a vector, how its lanes are read
                 (:class:`Element`), else ``None``.
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
    elements: tuple = (None, None, None)

    def __post_init__(self):
        if (self.immediate is ImmediateUse.OFFSET) != bool(self.address):
            raise ValueError(f"{self.mnemonic}: an offset immediate goes with address operands")
        for name in self.address:
            if getattr(self, name) is not OperandType.SCALAR:
                raise ValueError(f"{self.mnemonic}: address operand {name} must be scalar")
        for name, element in zip("abc", self.elements):
            if (getattr(self, name) is OperandType.VECTOR) != (element is not None):
                raise ValueError(f"{self.mnemonic}: operand {name} needs an element type "
                                 f"exactly when it is a vector")

    @property
    def sources(self):
        return tuple(name for name in ("a", "b", "c") if getattr(self, name) is not OperandType.NONE)

    @property
    def values(self):
        """The sources that are not address operands, in order."""
        return tuple(name for name in self.sources if name not in self.address)

    @property
    def writes(self):
        return self.rd is not OperandType.NONE

    @property
    def is_atomic(self):
        return self.opcode in (Opcode.SAMOADD, Opcode.SAMOFMA, Opcode.SAMOMAX)

    @property
    def is_branch(self):
        return self.unit is Unit.BRANCH

    def element(self, name):
        return self.elements["abc".index(name)]


_N, _X, _V = OperandType.NONE, OperandType.SCALAR, OperandType.VECTOR
_F, _I, _B = Element.FP32, Element.INT32, Element.BITS


def _elements(a, b, c, elements):
    """Per-source element types; one Element applies to every vector source."""
    if isinstance(elements, Element) or elements is None:
        elements = (elements,) * 3
    return tuple(element if kind is _V else None for kind, element in zip((a, b, c), elements))


def _spec(mnemonic, unit, rd, a, b, c, semantics, immediate=ImmediateUse.OPERAND, elements=None):
    return InstructionSpec(mnemonic, Opcode[mnemonic.upper()], unit, rd, a, b, c, semantics,
                           immediate, elements=_elements(a, b, c, elements))


def _access(mnemonic, unit, rd, c, semantics, *, address=("a", "b"), b=_X, elements=None):
    """A memory or scratchpad instruction: the address is the sum of the ``address``
    operands and the immediate; ``c`` (and ``b`` when not an address) are values."""
    return InstructionSpec(mnemonic, Opcode[mnemonic.upper()], unit, rd, _X, b, c, semantics,
                           ImmediateUse.OFFSET, address, _elements(_X, b, c, elements))


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
          "rd = (a[31:0] × b.multiplier) >> b.shift: a[31:0] ÷ d rounded down when b is a "
          "divisor descriptor of d (DIVISOR_LAYOUT)"),
    _spec("remc", Unit.MULTIPLY, _X, _X, _X, _N,
          "rd = a[31:0] − divc(a, b) × b.divisor (64-bit, wrapping): a[31:0] mod d when b is "
          "a divisor descriptor of d"),

    _spec("beq", Unit.BRANCH, _N, _X, _X, _N, "if a == b: go to pc + imm", ImmediateUse.TARGET),
    _spec("bne", Unit.BRANCH, _N, _X, _X, _N, "if a != b: go to pc + imm", ImmediateUse.TARGET),
    _spec("blt", Unit.BRANCH, _N, _X, _X, _N, "if a < b (signed): go to pc + imm", ImmediateUse.TARGET),
    _spec("bge", Unit.BRANCH, _N, _X, _X, _N, "if a >= b (signed): go to pc + imm", ImmediateUse.TARGET),
    _spec("bltu", Unit.BRANCH, _N, _X, _X, _N, "if a < b (unsigned): go to pc + imm", ImmediateUse.TARGET),
    _spec("bgeu", Unit.BRANCH, _N, _X, _X, _N, "if a >= b (unsigned): go to pc + imm", ImmediateUse.TARGET),
    _spec("jump", Unit.BRANCH, _N, _N, _N, _N, "go to pc + imm", ImmediateUse.TARGET),

    _spec("vadd", Unit.FMA, _V, _V, _V, _N, "rd = a + b", elements=_F),
    _spec("vsub", Unit.FMA, _V, _V, _V, _N, "rd = a − b", elements=_F),
    _spec("vmul", Unit.FMA, _V, _V, _V, _N, "rd = a × b", elements=_F),
    _spec("vfma", Unit.FMA, _V, _V, _V, _V, "rd = a × b + c, one rounding", elements=_F),
    _spec("vfms", Unit.FMA, _V, _V, _V, _V, "rd = a × b − c, one rounding", elements=_F),
    _spec("vfnma", Unit.FMA, _V, _V, _V, _V, "rd = c − a × b, one rounding", elements=_F),

    _spec("vmin", Unit.VECTOR, _V, _V, _V, _N,
          "rd = minimum(a, b) (IEEE 754-2019; NaN propagates, −0 < +0)", elements=_F),
    _spec("vmax", Unit.VECTOR, _V, _V, _V, _N,
          "rd = maximum(a, b) (IEEE 754-2019; NaN propagates, −0 < +0)", elements=_F),
    _spec("vcmpeq", Unit.VECTOR, _V, _V, _V, _N, "rd = 1 if a == b else 0 (quiet; NaN: 0)", elements=_F),
    _spec("vcmplt", Unit.VECTOR, _V, _V, _V, _N, "rd = 1 if a < b else 0 (quiet; NaN: 0)", elements=_F),
    _spec("vcmple", Unit.VECTOR, _V, _V, _V, _N, "rd = 1 if a <= b else 0 (quiet; NaN: 0)", elements=_F),
    _spec("vsel", Unit.VECTOR, _V, _V, _V, _V, "rd = a if c[0] else b (bits moved unchanged)",
          elements=(_B, _B, _I)),
    _spec("vabs", Unit.VECTOR, _V, _V, _N, _N, "rd = |a| (NaN: canonical NaN)", elements=_F),
    _spec("vneg", Unit.VECTOR, _V, _V, _N, _N, "rd = −a (NaN: canonical NaN)", elements=_F),

    _spec("vdiv", Unit.DIVIDE, _V, _V, _V, _N, "rd = a ÷ b, correctly rounded", elements=_F),
    _spec("vsqrt", Unit.DIVIDE, _V, _V, _N, _N, "rd = √a, correctly rounded", elements=_F),
    _spec("vrsqrt", Unit.DIVIDE, _V, _V, _N, _N,
          "rd = 1 ÷ √a: √a rounded, then the quotient rounded", elements=_F),

    _spec("vredsum", Unit.REDUCE, _V, _V, _N, _N,
          "every lane of rd = the sum of a's lanes, added pairwise: lanes (0+1), (2+3), …, "
          "then those sums pairwise, to one", elements=_F),
    _spec("vredmax", Unit.REDUCE, _V, _V, _N, _N,
          "every lane of rd = maximum of a's lanes, in the same pairwise tree", elements=_F),

    _spec("vcvtlo", Unit.CONVERT, _V, _V, _N, _N,
          "rd lane i = the BF16 element i of a (a holds 2 × lanes BF16 elements), widened",
          elements=_B),
    _spec("vcvthi", Unit.CONVERT, _V, _V, _N, _N,
          "rd lane i = the BF16 element lanes + i of a, widened", elements=_B),
    _spec("vpackbf", Unit.CONVERT, _V, _V, _V, _N,
          "BF16 elements 0 … lanes−1 of rd = a rounded to BF16 (nearest, ties to even), "
          "elements lanes … 2·lanes−1 = b rounded", elements=_F),

    _spec("viadd", Unit.VECTOR, _V, _V, _V, _N, "rd = a + b, 32-bit integers", elements=_I),
    _spec("visub", Unit.VECTOR, _V, _V, _V, _N, "rd = a − b, 32-bit integers", elements=_I),
    _spec("viand", Unit.VECTOR, _V, _V, _V, _N, "rd = a & b", elements=_I),
    _spec("vior", Unit.VECTOR, _V, _V, _V, _N, "rd = a | b", elements=_I),
    _spec("vixor", Unit.VECTOR, _V, _V, _V, _N, "rd = a ^ b", elements=_I),
    _spec("vishl", Unit.VECTOR, _V, _V, _V, _N, "rd = a << (b & 31)", elements=_I),
    _spec("vishr", Unit.VECTOR, _V, _V, _V, _N, "rd = a >> (b & 31), logical", elements=_I),
    _spec("visra", Unit.VECTOR, _V, _V, _V, _N, "rd = a >> (b & 31), arithmetic", elements=_I),
    _spec("vsplat", Unit.VECTOR, _V, _X, _N, _N, "every lane of rd = a[31:0]"),
    _spec("vget", Unit.VECTOR, _X, _V, _X, _N, "rd = lane (b mod lanes) of a, zero-extended",
          elements=_B),

    _access("vld", Unit.MEMORY, _V, _N, "rd = the sector at A"),
    _access("vst", Unit.MEMORY, _N, _V, "the sector at A = c", elements=_B),
    _access("vstm", Unit.MEMORY, _N, _V,
            "the bytes of the sector at A enabled in the triggering access's byte enables "
            "= those of c", elements=_B),
    _access("lw", Unit.MEMORY, _X, _N, "rd = the 32-bit word at A, zero-extended"),
    _access("sw", Unit.MEMORY, _N, _X, "the 32-bit word at A = c[31:0]"),

    _access("sld", Unit.SCRATCHPAD, _V, _N, "rd = the scratchpad sector at A"),
    _access("sst", Unit.SCRATCHPAD, _N, _V, "the scratchpad sector at A = c", elements=_B),
    _access("samoadd", Unit.SCRATCHPAD, _N, _V,
            "scratchpad sector s at A: s = s + c, lane by lane, atomically", elements=_F),
    _access("samomax", Unit.SCRATCHPAD, _N, _V,
            "scratchpad sector s at A: s = maximum(s, c), atomically", elements=_F),
    _access("samofma", Unit.SCRATCHPAD, _N, _V,
            "scratchpad sector s at A: s = b × c + s, one rounding, atomically",
            address=("a",), b=_V, elements=_F),
)

SPEC_BY_OPCODE = {spec.opcode: spec for spec in INSTRUCTIONS}
SPEC_BY_MNEMONIC = {spec.mnemonic: spec for spec in INSTRUCTIONS}
#: The memory instructions that write memory and no register (a sub-core may post them).
MEMORY_STORES = tuple(spec.opcode for spec in INSTRUCTIONS
                      if spec.unit is Unit.MEMORY and spec.rd is OperandType.NONE)


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
# constant divisor d: q = (n × multiplier) >> shift equals n ÷ d for every n the runtime
# checked (``matndp.host.kernels.divisor``); remc also needs d itself. The shift is the
# whole shift of the 64-bit product (0 … 63), so that d = 1 (multiplier 1, shift 0) and
# small divisors with small dividends have descriptors too.
DIVISOR_LAYOUT = data.StructLayout({
    "multiplier": unsigned(32),
    "shift":      unsigned(6),
    "reserved":   unsigned(2),
    "divisor":    unsigned(24),
})


# Plain-Python encoding and decoding ------------------------------------------------------

def _field_positions(layout, prefix=""):
    """{field path: (lsb, width)} of a StructLayout, nested layouts flattened with dots."""
    positions = {}
    for name, field in layout:
        if isinstance(field.shape, data.StructLayout):
            for inner, (lsb, width) in _field_positions(field.shape).items():
                positions[f"{prefix}{name}.{inner}"] = (field.offset + lsb, width)
        else:
            positions[f"{prefix}{name}"] = (field.offset, field.width)
    return positions


INSTRUCTION_FIELDS = _field_positions(instruction_layout())
DIVISOR_FIELDS = _field_positions(DIVISOR_LAYOUT)


def _get(word, fields, name):
    lsb, width = fields[name]
    return (word >> lsb) & ((1 << width) - 1)


def _put(fields, name, value):
    lsb, width = fields[name]
    if not 0 <= value < 1 << width:
        raise ValueError(f"{name} = {value} does not fit {width} bits")
    return value << lsb


class IllegalInstruction(ValueError):
    """An instruction word (or field set) that the engine refuses to execute."""


@dataclass(frozen=True)
class Operand:
    kind: OperandKind = OperandKind.REGISTER
    index: int = 0


_UNUSED = Operand()
SPECIALS = {OperandType.SCALAR: ScalarSpecial, OperandType.VECTOR: VectorSpecial}


@dataclass(frozen=True)
class Instruction:
    """The fields of one instruction word; ``imm`` is the raw 32-bit field."""
    opcode: Opcode
    rd: int = 0
    a: Operand = _UNUSED
    b: Operand = _UNUSED
    c: Operand = _UNUSED
    release: bool = False
    exit: bool = False
    imm: int = 0

    @property
    def spec(self):
        return SPEC_BY_OPCODE[self.opcode]

    @property
    def signed_imm(self):
        return self.imm - (1 << 32) if self.imm >> 31 else self.imm

    def operand(self, name):
        return getattr(self, name)

    def check(self):
        """Raise :class:`IllegalInstruction` unless this is the one legal encoding of an
        instruction. The rules, which the RTL decoder applies too:

        1. the opcode names an instruction (0 is ILLEGAL);
        2. rd is 0 when the instruction writes no register;
        3. an unused source is all zeros; a special's index names one of the operand
           type's specials; an immediate operand has index 0, appears at most once, and
           only where the immediate is an operand;
        4. imm is 0 when it is an operand and no source uses it;
        5. release only on scratchpad atomics; exit neither on ``exit`` nor on branches.
        """
        spec = SPEC_BY_OPCODE.get(self.opcode)
        if spec is None:
            raise IllegalInstruction(f"opcode {self.opcode.value:#04x} is no instruction")
        if not spec.writes and self.rd != 0:
            raise IllegalInstruction(f"{spec.mnemonic} writes no register, but rd = {self.rd}")
        immediates = 0
        for name in ("a", "b", "c"):
            operand, kind = self.operand(name), getattr(spec, name)
            if kind is OperandType.NONE:
                if operand != _UNUSED:
                    raise IllegalInstruction(f"{spec.mnemonic} has no operand {name}, "
                                             f"but its field is not zero")
            elif operand.kind is OperandKind.SPECIAL:
                if operand.index >= len(SPECIALS[kind]):
                    raise IllegalInstruction(f"{spec.mnemonic} operand {name}: no "
                                             f"{SPECIALS[kind].__name__} {operand.index}")
            elif operand.kind is OperandKind.IMMEDIATE:
                if spec.immediate is not ImmediateUse.OPERAND:
                    raise IllegalInstruction(f"{spec.mnemonic} operand {name}: the immediate "
                                             f"is the {spec.immediate.value}, not an operand")
                if operand.index != 0:
                    raise IllegalInstruction(f"{spec.mnemonic} operand {name}: an immediate "
                                             f"operand has index 0, not {operand.index}")
                immediates += 1
        if immediates > 1:
            raise IllegalInstruction(f"{spec.mnemonic}: the immediate stands in {immediates} operands")
        if spec.immediate is ImmediateUse.OPERAND and not immediates and self.imm != 0:
            raise IllegalInstruction(f"{spec.mnemonic}: imm = {self.imm:#x} but no operand uses it")
        if self.release and not spec.is_atomic:
            raise IllegalInstruction(f"{spec.mnemonic}: release is for scratchpad atomics only")
        if self.exit and (spec.opcode is Opcode.EXIT or spec.is_branch):
            raise IllegalInstruction(f"{spec.mnemonic}: the exit flag is not allowed here")

    def encode(self):
        """The 64-bit word (after :meth:`check`)."""
        self.check()
        word = _put(INSTRUCTION_FIELDS, "opcode", self.opcode.value)
        word |= _put(INSTRUCTION_FIELDS, "rd", self.rd)
        for name in ("a", "b", "c"):
            operand = self.operand(name)
            word |= _put(INSTRUCTION_FIELDS, f"{name}.kind", operand.kind.value)
            word |= _put(INSTRUCTION_FIELDS, f"{name}.index", operand.index)
        word |= _put(INSTRUCTION_FIELDS, "release", int(self.release))
        word |= _put(INSTRUCTION_FIELDS, "exit", int(self.exit))
        word |= _put(INSTRUCTION_FIELDS, "imm", self.imm)
        return word

    @classmethod
    def decode(cls, word):
        """The instruction of a 64-bit word; :class:`IllegalInstruction` when it has none."""
        if not 0 <= word < 1 << INSTRUCTION_BITS:
            raise IllegalInstruction(f"{word:#x} is not a {INSTRUCTION_BITS}-bit word")
        value = _get(word, INSTRUCTION_FIELDS, "opcode")
        try:
            opcode = Opcode(value)
        except ValueError:
            raise IllegalInstruction(f"opcode {value:#04x} is no instruction") from None
        operands = {name: Operand(OperandKind(_get(word, INSTRUCTION_FIELDS, f"{name}.kind")),
                                  _get(word, INSTRUCTION_FIELDS, f"{name}.index"))
                    for name in ("a", "b", "c")}
        instruction = cls(opcode, _get(word, INSTRUCTION_FIELDS, "rd"), **operands,
                          release=bool(_get(word, INSTRUCTION_FIELDS, "release")),
                          exit=bool(_get(word, INSTRUCTION_FIELDS, "exit")),
                          imm=_get(word, INSTRUCTION_FIELDS, "imm"))
        instruction.check()
        return instruction
