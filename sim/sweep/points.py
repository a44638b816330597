"""The point functions a sweep specification can name, registered by name."""

from matndp.host.registry import Registry

from .host_points import GpuPoint, TierPoint
from .rtl_points import RtlBenchPoint


__all__ = ["POINT_FUNCTIONS"]


POINT_FUNCTIONS = Registry("point function", (GpuPoint(), TierPoint(), RtlBenchPoint()))
