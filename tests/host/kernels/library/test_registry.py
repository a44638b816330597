"""The registry: the one list of kernel names and ops, every kernel well formed (its
arguments all filled, its sections as its reductions need), the BF16 variants derived from
their FP32 kernels, and the names docs/kernels.md lists."""

import pytest

from matndp.host.kernels.image import Section
from matndp.host.kernels.library import (BF16_TENSORS, KERNELS, OPS, DType, LibraryError, kernel,
                                         op)
from tests.host.kernels.library.test_kernels import BF16_SIZES, SIZES


def _first_problem(spec):
    return (BF16_SIZES if spec.trigger_spec.dtype is DType.BF16 else SIZES)[spec.dims][0]


@pytest.mark.parametrize("name", list(KERNELS))
def test_every_kernel_is_well_formed(name):
    spec = KERNELS[name]
    launch = spec.launch(_first_problem(spec))
    addresses = {t.name: 0x1000 * (i + 1) for i, t in enumerate(spec.tensors)}
    words = launch.arguments(addresses, scratchpad_base=64)
    assert len(words) == 16 and all(0 <= w < 1 << 64 for w in words)
    # every tensor but the trigger (whose sector arrives as DATA) reaches the kernel
    for tensor in spec.tensors:
        if tensor.name != spec.trigger:
            assert addresses[tensor.name] in words, f"{name}: {tensor.name} is not an argument"
    assert spec.image.name == spec.source.removesuffix(".s")
    # atomics are what makes a result depend on the trigger order (a maximum does not)
    assert spec.ordered == (not spec.order_independent or name.startswith("softmax_max"))
    # a kernel that keeps anything in the scratchpad prepares it in its initializer
    assert (launch.scratchpad_bytes > 0) == (Section.INIT in spec.sections)
    # reductions finish in the finalizer, which writes them to memory
    assert (Section.FINAL in spec.sections) == spec.ordered


def test_every_value_a_family_gives_is_an_argument_of_some_kernel():
    declared = {name for spec in KERNELS.values() for name in spec.image.arguments}
    given = {name for spec in KERNELS.values() for name in spec.values}
    assert given <= declared, f"values no source declares: {sorted(given - declared)}"


def test_ordered_comes_from_the_image():
    assert kernel("bn_stats").ordered and kernel("softmax_max").ordered
    assert not kernel("relu_fwd").ordered and not kernel("bn_apply").ordered


def test_bf16_variants_follow_their_fp32_kernels():
    for name, tensors in BF16_TENSORS.items():
        base, variant = KERNELS[name], KERNELS[f"{name}_bf16"]
        assert variant.source == base.source.removesuffix(".s") + "_bf16.s"
        assert variant.params == base.params and variant.dims == base.dims
        assert tensors and all(variant.tensor(t).dtype is DType.BF16 for t in tensors)
        assert variant.trigger_spec.dtype is DType.BF16
        assert variant.elements_per_sector == 2 * base.elements_per_sector
    assert [name for name in KERNELS if name.endswith("_bf16")] == [f"{name}_bf16" for name in BF16_TENSORS]
    assert set(BF16_TENSORS) == {name for name in KERNELS if not name.endswith("_bf16")}


def test_ops_cover_the_offload_planners_kernels():
    planner = ["relu_fwd", "relu_bwd", "gelu_fwd", "gelu_bwd", "tanh_fwd", "tanh_bwd",
               "scale_fwd", "scale_bwd", "dropout_fwd", "dropout_bwd", "where_fwd", "where_bwd",
               "add", "batchnorm_fwd", "batchnorm_bwd", "layernorm_fwd", "layernorm_bwd",
               "softmax_fwd", "softmax_bwd", "adam", "sgd_momentum"]
    extra = ["bias_relu", "bn_stats", "bn_apply", "layernorm_apply", "axpy", "adamw"]
    for name in planner + extra:
        assert name in OPS
    for name in OPS:
        for phase in OPS[name].phases:
            assert phase in KERNELS
    assert op("softmax_fwd_bf16").phases == ("softmax_max_bf16", "softmax_expsum_bf16",
                                              "softmax_scale_bf16")


@pytest.mark.parametrize("call, message", [
    (lambda: kernel("relu"), "no library kernel 'relu'"),
    (lambda: op("batchnorm"), "no library op 'batchnorm'"),
])
def test_unknown_names_are_refused(call, message):
    with pytest.raises(LibraryError, match=message):
        call()


def test_the_docs_name_every_kernel_and_op():
    from tests.paths import DOCS
    text = (DOCS / "kernels.md").read_text()
    for name in list(KERNELS) + list(OPS):
        assert f"`{name}`" in text
