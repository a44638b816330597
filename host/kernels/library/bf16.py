"""BF16 variants of the library's kernels.

Mixed-precision training keeps activations and their gradients in BF16; parameters,
statistics, optimizer state and the workspaces between phases stay FP32. A BF16 sector
holds 16 elements: a variant widens its halves (exactly), computes as its FP32 kernel does
and rounds each result once. A variant is its FP32 kernel with the named tensors in BF16,
assembled from ``NAME_bf16.s`` beside the FP32 kernel's source.
"""

from dataclasses import replace

from matndp.host.kernels.library.shapes import multiple, row_partials
from matndp.host.kernels.library.spec import LANES, DType


__all__ = ["bf16_variant", "BF16_LANES", "BF16_HALVES", "bf16_row_partials", "sixteen"]


BF16_LANES = 2 * LANES
# How a row reduction's BF16 variant combines a sector before adding it (docs/kernels.md).
BF16_HALVES = ("; per BF16 sector the halves' terms are combined first (lo then hi, the "
               "second by FMA)")


def sixteen(dim):
    """The check that a BF16 sector holds elements of one row: ``dim`` a multiple of 16."""
    return multiple(dim, BF16_LANES)


def bf16_row_partials(problem):
    return row_partials(problem, lanes=BF16_LANES)


def bf16_variant(base, bf16, *, tensors=None, summary=None, **changes):
    """``base`` with tensors ``bf16`` (names) in BF16: kernel ``NAME_bf16`` from source
    ``NAME_bf16.s``. ``tensors`` replaces the base's tensors (before the conversion),
    ``summary`` its summary (default: the base's, ", BF16" added); ``changes`` replace
    other fields (check, order, trigger, partials, values)."""
    kept = base.tensors if tensors is None else tuple(tensors)
    unknown = set(bf16) - {t.name for t in kept}
    if unknown:
        raise ValueError(f"{base.name}_bf16: no tensors {sorted(unknown)}")
    converted = tuple(replace(t, dtype=DType.BF16) if t.name in bf16 else t for t in kept)
    return replace(base, name=f"{base.name}_bf16",
                   source=f"{base.source.removesuffix('.s')}_bf16.s",
                   summary=summary or f"{base.summary}, BF16", tensors=converted, **changes)
