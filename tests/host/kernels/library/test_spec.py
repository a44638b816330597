"""A kernel's description and its launches: what to place, trigger and read back; the
argument words filled by name; the scratchpad regions; and the errors of a bad kernel
description, problem, parameter or address."""

from types import MappingProxyType

import numpy as np
import pytest

from matndp.host.kernels.library import KERNELS, Access, LibraryError, kernel
from matndp.host.kernels.library.constants import CONSTANTS
from matndp.host.kernels.library.shapes import ELEMENTS, IN, OUT, fp32
from matndp.host.kernels.library.spec import Kind, KernelSpec, ParamSpec, Region


def test_a_launch_says_what_to_place_trigger_and_read():
    launch = kernel("adam").launch({"elements": 20}, lr=0.01, step=3)
    assert launch.inputs == ("grad", "param", "exp_avg", "exp_avg_sq")
    assert launch.outputs == ("param", "exp_avg", "exp_avg_sq")
    assert launch.trigger == "grad" and launch.access is Access.WRITE
    assert launch.expected_triggers == 3
    assert launch.allocation("param") == 96          # whole trigger sectors
    assert launch.trigger_accesses() == [(0, (1 << 32) - 1), (32, (1 << 32) - 1), (64, 0xFFFF)]
    offsets, masks = launch.trigger_access_columns()
    assert offsets.dtype == masks.dtype == np.uint64
    assert offsets.tolist() == [0, 32, 64] and masks.tolist() == [(1 << 32) - 1, (1 << 32) - 1, 0xFFFF]
    whole = kernel("relu_fwd").launch({"elements": 16}).trigger_access_columns()
    assert [column.tolist() for column in whole] == [[0, 32], [(1 << 32) - 1] * 2]
    assert launch.params["step"] == 3 and launch.params["maximize"] is False
    bn = kernel("bn_apply").launch({"rows": 4, "channels": 16})
    assert bn.access is Access.READ and bn.scratchpad_bytes == 128 and bn.allocation("scale") == 64


def test_any_mapping_sizes_a_launch():
    launch = kernel("bn_apply").launch(MappingProxyType({"rows": 4, "channels": 16}))
    assert launch.allocation("scale") == 64 and launch.expected_triggers == 4 * 16 // 8


def _words(launch, addresses, base=0):
    words = launch.arguments(addresses, base)
    return {name: words[index] for name, index in launch.kernel.image.arguments.items()}


def test_arguments_are_filled_by_their_names():
    launch = kernel("bn_stats").launch({"rows": 6, "channels": 16}, eps=0.5, partials=2)
    addresses = {t.name: 0x1000 * (i + 1) for i, t in enumerate(launch.tensors)}
    words = _words(launch, addresses, base=0x200)
    assert words["RUNNING_VAR"] == addresses["running_var"]          # a tensor's address
    assert words["SQUARES_SP"] == 0x200                               # a region's
    assert launch.regions(0x200) == {"SQUARES_SP": 0x200, "SUMS_SP": 0x200 + 4 * 16 * 2}
    assert words["EPS"] == int(np.float32(0.5).view(np.uint32))       # a float parameter's
    assert words["PARTIALS_BYTES"] == 4 * 16 * 2 and words["ROW_BYTES"] == 64   # the family's
    gelu = _words(kernel("gelu_fwd").launch({"elements": 8}), {"x": 0, "y": 32})
    assert gelu["EXP_MAGIC"] == CONSTANTS["EXP_MAGIC"] == 0x4B4000BF  # a library constant
    # a backward that is its forward's kernel writes dx where the forward writes y
    assert _words(kernel("scale_bwd").launch({"elements": 8}), {"dy": 0, "dx": 96})["Y"] == 96


def test_the_scratchpad_is_its_regions_one_after_the_other():
    launch = kernel("layernorm_bwd_stats").launch({"rows": 3, "columns": 64}, partials=4)
    regions = launch.regions(64)
    assert regions == {"WEIGHT_SP": 64, "DOTS_SP": 64 + 256, "SUMS_SP": 64 + 256 + 3 * 32 * 4}
    assert launch.scratchpad_bytes == 256 + 2 * 3 * 32 * 4


def _spec(**changes):
    fields = dict(name="k", source="relu_fwd.s", summary="s", dims=ELEMENTS,
                  tensors=(fp32("x", IN), fp32("y", OUT)), params=(), trigger="x",
                  access=Access.WRITE, order="y = x")
    fields.update(changes)
    return KernelSpec(**fields)


@pytest.mark.parametrize("changes, message", [
    ({"tensors": (fp32("x", IN), fp32("x", OUT))}, "tensor names repeat"),
    ({"trigger": "z"}, "the trigger 'z' is not one of its tensors"),
    ({"scratchpad": (Region("A_SP", lambda p, k: 32), Region("A_SP", lambda p, k: 32))},
     "scratchpad region names repeat"),
    ({"values": {"Y": lambda b: 0}}, "a value for Y hides its naming rule"),
    ({"values": {"EXP_C4": lambda b: 0}}, "a value for EXP_C4 hides its naming rule"),
    ({"params": (ParamSpec("x", 1.0, "clash"),)}, "argument name X is both"),
    ({"summary": "ReLU on the writes of y"}, "the summary names writes of y, the kernel triggers on writes of x"),
    ({"summary": "ReLU on reads of x"}, "the summary names reads of x, the kernel triggers on writes of x"),
])
def test_a_bad_kernel_description_is_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        _spec(**changes)


def test_an_argument_nothing_fills_is_named():
    spec = _spec(params=(ParamSpec("flag", False, "a bool is no argument", Kind.BOOL),),
                 source="add.s")          # declares B and Y; this kernel has no tensor b
    with pytest.raises(LibraryError, match="nothing gives argument B its value"):
        spec.launch({"elements": 8}).arguments({"x": 0, "y": 32})


@pytest.mark.parametrize("call, message", [
    (lambda: kernel("relu_fwd").launch({"rows": 4}), "sized by elements"),
    (lambda: kernel("relu_fwd").launch([8]), "the problem is a mapping"),
    (lambda: kernel("relu_fwd").launch({"elements": 0}), "elements must be a positive integer"),
    (lambda: kernel("relu_fwd").launch({"elements": 8}, alpha=2.0), "no parameter alpha"),
    (lambda: kernel("relu_fwd").launch({"elements": 8}, partials=0), "partials must be a positive"),
    (lambda: kernel("bn_stats").launch({"rows": 4, "channels": 12}), "multiple of 8"),
    (lambda: kernel("bn_stats").launch({"rows": 1, "channels": 8}), "at least 2"),
    (lambda: kernel("bn_apply").tensor("z"), "has no tensor 'z'"),
    (lambda: kernel("layernorm_stats").launch({"rows": 3, "columns": 12}), "multiple of 8"),
    (lambda: kernel("layernorm_stats_bf16").launch({"rows": 3, "columns": 24}), "multiple of 16"),
    (lambda: kernel("bias_relu").launch({"rows": 1 << 27, "channels": 16}), "exceed the 32-bit"),
    (lambda: kernel("dropout_fwd").launch({"elements": 8}, p=1.0), r"p must be in \[0, 1\)"),
    (lambda: kernel("sgd_momentum").launch({"elements": 8}, momentum=0.0), "momentum must be > 0"),
    (lambda: kernel("sgd_momentum").launch({"elements": 8}, nesterov=True, dampening=0.5), "zero dampening"),
    (lambda: kernel("adam").launch({"elements": 8}, step=0), "step must be a positive integer"),
    (lambda: kernel("adam").launch({"elements": 8}, maximize=1), "maximize must be a bool"),
    (lambda: kernel("adam").launch({"elements": 8}, lr=float("nan")), "lr must be a finite number"),
    (lambda: kernel("adam").launch({"elements": 8}, beta2=1.0), "beta2 must be in"),
    (lambda: kernel("softmax_max").launch({"rows": 2, "columns": 64}, partials=3).arguments(
        {"x": 0, "max_rows": 256}), "power-of-two number of partials"),
    (lambda: kernel("relu_fwd").launch({"elements": 8}).arguments({"x": 0}), "no address for tensor 'y'"),
    (lambda: kernel("relu_fwd").launch({"elements": 8}).arguments({"x": 0, "y": 4}), "not sector-aligned"),
    (lambda: kernel("relu_fwd").launch({"elements": 8}).arguments({"x": 0, "y": 32}, 8), "not a sector address"),
])
def test_errors_name_the_problem(call, message):
    with pytest.raises(LibraryError, match=message):
        call()


def test_every_kernel_describes_itself_as_plain_data():
    for spec in KERNELS.values():
        row = spec.describe()
        assert row["name"] == spec.name and row["instructions_per_sector"] > 0
        assert [t["name"] for t in row["tensors"]] == [t.name for t in spec.tensors]
