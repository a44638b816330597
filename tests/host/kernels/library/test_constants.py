"""The constants of the library's sequences are what docs/kernels.md derives them from."""

import math

import numpy as np

from matndp.host.kernels.library.constants import CONSTANTS


def _bits(value):
    return int(np.float32(value).view(np.uint32))


def test_magic_numbers_put_n_in_the_low_bits():
    assert CONSTANTS["EXP_MAGIC"] == _bits(1.5 * 2 ** 23 + 191)
    assert CONSTANTS["EXPM1_MAGIC"] == _bits(1.5 * 2 ** 23 + 384)
    assert CONSTANTS["ONE"] == _bits(1.0)


def test_gelu_constants_are_pytorchs_beta():
    beta = np.float32(math.sqrt(2 / math.pi))
    assert CONSTANTS["TWO_BETA"] == _bits(np.float32(2) * beta)
    assert CONSTANTS["NEG_2BETA"] == _bits(np.float32(-2) * beta)


def test_the_exponentials_fourth_coefficient_is_scaled_by_two_to_the_minus_64():
    c4 = np.uint32(CONSTANTS["EXP_C4"]).view(np.float32) * np.float64(2.0 ** 64)
    assert abs(c4 - 0.04189839) < 1e-7
