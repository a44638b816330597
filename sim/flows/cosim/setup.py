"""What a co-simulation runs: the one object its parameters live in."""

from dataclasses import dataclass

from matndp.host.gpu import PRESETS
from matndp.host.tier.flash import FLASH_PRESETS
from matndp.host.tier.policies import TIER_POLICIES
from matndp.host.zoo import MODELS


__all__ = ["CosimSetup", "CosimError"]


class CosimError(ValueError):
    """A co-simulation that cannot be set up as asked: the message names the problem."""


@dataclass(frozen=True)
class CosimSetup:
    """One slice's share of ``block`` (an op-name prefix of ``model``, e.g. ``layer1.0``; its
    forward, backward and optimizer ops) of a training iteration at ``batch`` on GPU preset
    ``gpu``, with HBM of ``hbm_fraction`` of the footprint over ``flash`` under tiering
    ``policy``. The GPU's memory is interleaved over ``slices`` slices (None: its controllers
    × the calibration's slices per controller); the share is slice number ``slice_index``'s,
    what the interleave deals it of every tensor
    (:mod:`~matndp.sim.flows.cosim.interleave`). ``pressure`` is the random back-pressure on every stream of the harness;
    ``seed`` seeds values and back-pressure. With ``overlap`` the steps the host model
    schedules at the same time run as one stage (:mod:`~matndp.sim.flows.cosim.overlap`);
    without, one after another."""

    model: str = "resnet50"
    block: str = "layer1.0"
    batch: int = 2
    gpu: str = "a100"
    policy: str = "tm"
    hbm_fraction: float = 0.5
    flash: str = "zssd"
    slices: int | None = None
    slice_index: int = 0
    seed: int = 1
    pressure: float = 0.1
    overlap: bool = True

    def __post_init__(self):
        if self.model not in MODELS.names:
            raise CosimError(f"unknown model {self.model!r}; known: {', '.join(MODELS.names)}")
        if self.gpu not in PRESETS.names:
            raise CosimError(f"unknown GPU preset {self.gpu!r}; known: {', '.join(PRESETS.names)}")
        if self.policy not in TIER_POLICIES.names:
            raise CosimError(f"unknown tiering policy {self.policy!r}; known: "
                             f"{', '.join(TIER_POLICIES.names)}")
        if self.flash not in FLASH_PRESETS.names:
            raise CosimError(f"unknown flash preset {self.flash!r}; known: "
                             f"{', '.join(FLASH_PRESETS.names)}")
        for name in ("batch", "seed", "slice_index") + (("slices",) if self.slices is not None else ()):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (1 if name in ("batch", "slices") else 0):
                raise CosimError(f"{name} must be a {'positive' if name in ('batch', 'slices') else 'non-negative'} "
                                 f"integer, not {value!r}")
        if self.slices is not None and self.slice_index >= self.slices:
            raise CosimError(f"slice_index must be below slices ({self.slices}), not {self.slice_index}")
        if not 0 < self.hbm_fraction <= 1:
            raise CosimError(f"hbm_fraction must be in (0, 1], not {self.hbm_fraction!r}")
        if not 0 <= self.pressure < 1:
            raise CosimError(f"pressure must be in [0, 1), not {self.pressure!r}")
        if not isinstance(self.overlap, bool):
            raise CosimError(f"overlap must be True or False, not {self.overlap!r}")
        if not self.block or not isinstance(self.block, str):
            raise CosimError(f"block must be an op-name prefix such as 'layer1.0', not {self.block!r}")

    def as_dict(self):
        return {name: getattr(self, name) for name in self.__dataclass_fields__}
