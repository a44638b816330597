"""Point functions of the host models: ``gpu`` (one training iteration on a GPU preset,
with and without matNDP, as ``matndp gpu run``) and ``tier`` (tiered memory under a
placement policy, as ``matndp tier run``). Both models are deterministic: a seed only
repeats a point."""

import pathlib

from matndp.host.calibration import DEFAULT_CALIBRATION_PATH
from matndp.host.gpu import PRESETS
from matndp.host.ndpxnet import MAX_GPUS
from matndp.host.offload.policies import OFFLOAD_POLICIES
from matndp.host.tier.flash import FLASH_PRESETS
from matndp.host.tier.policies import TIER_POLICIES
from matndp.host.zoo import MODELS, PRECISIONS

from matndp.sim.sweep.interface import REQUIRED, Parameter, PointFunction, integer, number, one_of, optional
from matndp.sim.sweep.tier_adapter import tier_metrics


__all__ = ["GpuPoint", "TierPoint"]


def _existing_file(value):
    if not isinstance(value, str) or not value:
        return f"must be a file name, not {value!r}"
    return None if pathlib.Path(value).is_file() else f"no such file {value!r}"


_MODEL = Parameter("model", REQUIRED, one_of(MODELS), "zoo model")
_GPU = Parameter("gpu", "a100", one_of(PRESETS), "GPU preset")
_BATCH = Parameter("batch", 8, integer(1), "mini-batch size (per GPU)")
_DTYPE = Parameter("dtype", "fp32", one_of(PRECISIONS), "tensor dtype")
_SEQ_LEN = Parameter("seq_len", None, optional(integer(1)),
                     "sequence length of the transformers (default: the model's)")


class GpuPoint(PointFunction):
    name = "gpu"
    help = "one training iteration on a GPU preset, baseline vs matNDP (matndp gpu run)"
    parameters = (
        _MODEL, _GPU, _BATCH, _DTYPE, _SEQ_LEN,
        Parameter("gpus", 1, integer(1, MAX_GPUS), "data-parallel GPUs"),
        Parameter("policy", "auto", one_of(OFFLOAD_POLICIES), "offload policy"),
        Parameter("calibration", None, optional(_existing_file),
                  "NDP kernel calibration JSON (default: build/calibration/ndp_kernels.json "
                  "when it exists, else the documented defaults)"),
        Parameter("expanders", None, optional(integer(1)),
                  "NDPXNet memory expanders (default one per GPU)"),
        Parameter("ndp_slices_per_controller", None, optional(integer(1)),
                  "NDP slices per memory controller (default: the calibration's)"),
    )
    headline = ("speedup", "matndp_s", "energy_j_matndp")

    def configuration(self, values):
        # The calibration a run uses is part of what it computed: the default file, when
        # there is one, is named, and every path is made absolute so that workers in any
        # directory (Ray's included) read the same file.
        config = super().configuration(values)
        path = config["calibration"]
        if path is None and DEFAULT_CALIBRATION_PATH.exists():
            path = DEFAULT_CALIBRATION_PATH
        config["calibration"] = None if path is None else str(pathlib.Path(path).resolve())
        return config

    def check_configuration(self, config):
        model = MODELS[config["model"]]
        if config["seq_len"] is not None and not model.takes_seq_len:
            return f"seq_len: {config['model']} takes no sequence length (it is an image model)"
        return None

    def run(self, config, seed):
        from matndp.host.report import RunConfig, run_gpu
        return run_gpu(RunConfig(
            config["model"], config["gpu"], config["batch"], config["dtype"], config["gpus"],
            config["seq_len"], config["policy"], config["calibration"], config["expanders"],
            config["ndp_slices_per_controller"]))


class TierPoint(PointFunction):
    name = "tier"
    help = "tiered HBM + flash memory under a placement policy, per iteration (matndp tier run)"
    parameters = (
        _MODEL,
        Parameter("policy", "tm", one_of(TIER_POLICIES), "placement policy"),
        Parameter("hbm_fraction", None, optional(number()),
                  "HBM capacity as a fraction of the all-resident footprint"),
        Parameter("hbm_gb", None, optional(number()), "HBM capacity in GB (1e9 bytes)"),
        _GPU, _BATCH, _DTYPE, _SEQ_LEN,
        Parameter("flash", "zssd", one_of(FLASH_PRESETS), "flash preset"),
        Parameter("flash_devices", 1, integer(1), "identical flash devices striped together"),
        Parameter("link_gbs", 31.5, number(), "HBM-flash link bandwidth per direction, GB/s"),
        Parameter("iterations", 3, integer(2), "iterations simulated; the last is reported"),
    )
    headline = ("iteration_s", "inter_tier_bytes", "throughput_per_watt")

    def check_configuration(self, config):
        if (config["hbm_fraction"] is None) == (config["hbm_gb"] is None):
            return "hbm_fraction, hbm_gb: give exactly one of them"
        return GpuPoint.check_configuration(self, config)

    def run(self, config, seed):
        return tier_metrics(config)
