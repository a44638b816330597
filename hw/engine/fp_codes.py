"""The FP units' operation codes as the engine's vector units drive them."""

from ..fp.addsub import OP_ADD, OP_SUB
from ..fp.compare import OP_EQ, OP_LE, OP_LT
from ..fp.convert import OP_BF16_TO_F32, OP_F32_TO_BF16
from ..fp.minmax import OP_MAX, OP_MIN
from ..fp.sign import OP_ABS, OP_NEG


__all__ = ["OP_ADD", "OP_SUB", "OP_EQ", "OP_LE", "OP_LT", "OP_BF16_TO_F32", "OP_F32_TO_BF16",
           "OP_MAX", "OP_MIN", "OP_ABS", "OP_NEG", "FMA_OP"]


FMA_OP = 0      # a * b + c, the fused unit's only operation
