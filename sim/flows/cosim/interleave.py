"""Which part of a tensor each NDP slice holds, as the GPU's address interleave gives it.

The GPU's memory is interleaved over its N slices (controllers × slices per controller) in
*granules*, dealt round-robin: granule g of a tensor lies in slice g mod N. A tensor's
allocation is aligned to the interleave's period, so its first granule lies in slice 0,
and slice s holds granules s, s + N, s + 2N, …: ``G // N`` of a tensor of G granules, one
more for the slices below ``G mod N``. The tensor's tail (its last granule) lies in slice
(G − 1) mod N.

The granule is a whole row of an activation laid out as rows of channels (NHWC): the
channels of a row stay in one slice, so a per-channel reduction (a batch-norm's
statistics) is each slice's partial over its rows. Anything else is dealt in sectors (the
last one possibly part-filled).
"""

from math import prod

import numpy as np

from matndp.host.graph import DTYPE_BYTES
from matndp.sim.designs import KERNEL_CONFIG


__all__ = ["ROW_KINDS", "by_rows", "granules", "granule_elements", "held_granules", "held_count",
           "spread_slices", "tensor_itemsize"]


SECTOR = KERNEL_CONFIG.sector_bytes
# Tensors laid out as rows of channels (NHWC): a slice holds whole rows of them.
ROW_KINDS = ("activation", "gradient", "input")


def tensor_itemsize(tensor):
    return DTYPE_BYTES[tensor.dtype]


def by_rows(tensor):
    """Whether ``tensor`` is dealt in whole rows of channels."""
    return len(tensor.shape) == 4 and tensor.kind in ROW_KINDS


def granule_elements(tensor):
    """Elements of ``tensor`` in one granule: a row's channels, or a sector's elements."""
    return tensor.shape[1] if by_rows(tensor) else SECTOR // tensor_itemsize(tensor)


def granules(tensor):
    """The granules ``tensor`` takes (its last sector may be part-filled)."""
    return -(-prod(tensor.shape) // granule_elements(tensor))


def held_count(count, slices, index):
    """How many of ``count`` granules dealt round-robin over ``slices`` slice ``index`` holds."""
    _check_slice(slices, index)
    return count // slices + (1 if index < count % slices else 0)


def held_granules(count, slices, index):
    """The granule numbers, in address order, slice ``index`` holds of ``count``."""
    _check_slice(slices, index)
    return np.arange(index, count, slices)


def spread_slices(count, slices):
    """``count`` slices of ``slices`` spread evenly over the GPU, slice 0 first: slice
    ``i * slices // count`` for i in 0..count − 1 (every slice when ``count == slices``)."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= slices:
        raise ValueError(f"the slices to simulate must be an integer in 1..{slices}, not {count!r}")
    return [index * slices // count for index in range(count)]


def _check_slice(slices, index):
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < slices:
        raise ValueError(f"slice index must be an integer in 0..{slices - 1}, not {index!r}")
