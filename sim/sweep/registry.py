"""The point functions a sweep specification can name, registered by name."""

from matndp.host.registry import Registry

from matndp.sim.sweep.host_points import GpuPoint, TierPoint
from matndp.sim.sweep.rtl_points import RtlBenchPoint


__all__ = ["POINT_FUNCTIONS"]


POINT_FUNCTIONS = Registry("point function", (GpuPoint(), TierPoint(), RtlBenchPoint()))
