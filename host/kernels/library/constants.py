"""Constants of the library's instruction sequences that kernels take as argument words,
because an instruction has only one immediate (docs/kernels.md, "Exponential, tanh,
GELU"). An argument of one of these names gets its value from here."""

import math
from types import MappingProxyType

import numpy as np


__all__ = ["CONSTANTS"]


def _bits(value):
    return int(np.float32(value).view(np.uint32))


# PyTorch's kBeta of the GELU tanh form: √2 · (2/√π) · 0.5 = √(2/π).
_BETA = np.float32(math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5)

CONSTANTS = MappingProxyType({
    # exp(a), a ≤ 0
    "EXP_MAGIC": 0x4B4000BF,      # 1.5·2^23 + 191: t's low 9 bits are n + 64 + 127
    "EXP_C4": 0x1D2B9DA5,         # c4·2^-64
    # expm1 of tanh
    "EXPM1_MAGIC": 0x4B400180,    # 1.5·2^23 + 384: t << 23 is −2^(n+1)
    "EXPM1_Q3": 0x3E0905CE,       # Q3
    "ONE": 0x3F800000,
    # GELU
    "NEG_2BETA": _bits(np.float32(-2.0) * _BETA),
    "TWO_BETA": _bits(np.float32(2.0) * _BETA),
})
