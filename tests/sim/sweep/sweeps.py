"""Small specifications the sweep tests share, and a comparison of lines without their
timing."""

from matndp.sim.sweep import TIMING_FIELDS, parse_spec


# Eight host-model points; VGG at batch 192 in FP32 does not fit a V100 (its two points
# fail), ResNet-50 does.
GPU_SPEC = {
    "point": "gpu",
    "fixed": {"gpu": "v100", "dtype": "fp32"},
    "axes": {"batch": [2, 192], "model": ["resnet50", "vgg16_bn"], "policy": ["auto", "none"]},
}
FAILING = {("vgg16_bn", 192)}


def gpu_spec():
    return parse_spec(GPU_SPEC, source="gpu.toml")


def without_timing(lines):
    """Lines by key, without the fields that say how (not what) a point ran."""
    return {line["key"]: {k: v for k, v in line.items() if k not in TIMING_FIELDS}
            for line in lines}
