"""BF16 variants derived from their FP32 kernels."""

import pytest

from matndp.host.kernels.library import DType, kernel
from matndp.host.kernels.library.bf16 import bf16_variant


def test_a_variant_is_its_kernel_with_tensors_in_bf16_and_its_own_source():
    variant = bf16_variant(kernel("scale_bwd"), ("dy", "dx"))
    assert variant.name == "scale_bwd_bf16" and variant.source == "scale_bf16.s"
    assert [t.dtype for t in variant.tensors] == [DType.BF16, DType.BF16]
    assert variant.summary == kernel("scale_bwd").summary + ", BF16"
    assert variant.params == kernel("scale_bwd").params and variant.values == kernel("scale_bwd").values
    assert variant == kernel("scale_bwd_bf16")


def test_a_variant_of_unknown_tensors_is_refused():
    with pytest.raises(ValueError, match=r"relu_fwd_bf16: no tensors \['z'\]"):
        bf16_variant(kernel("relu_fwd"), ("x", "z"))
