"""The NDP kernel library: the one list of kernel names, and everything a runner needs to
use a kernel without knowing it (docs/kernels.md).

Each family module — :mod:`.elementwise`, :mod:`.batchnorm`, :mod:`.layernorm`,
:mod:`.softmax`, :mod:`.optimizers` — declares its kernels (:class:`~.spec.KernelSpec`),
their BF16 variants (:mod:`.bf16`) and its multi-phase ops; each kernel's assembly source
lies beside them in this folder, with the files the sources include. This module lists
them: :data:`KERNELS` (the FP32 kernels, then the BF16 variants, family by family) and
:data:`OPS` (every kernel as an op of one phase, and the multi-phase ops).
:mod:`.iss_runner` runs launches on the instruction-set simulator.
"""

from types import MappingProxyType

from matndp.host.kernels.library import batchnorm, elementwise, layernorm, optimizers, softmax
from matndp.host.kernels.library.sources import library_source
from matndp.host.kernels.library.spec import (LANES, SECTOR_BYTES, Access, Binding, DType,
                                              Kind, KernelLaunch, KernelSpec, LibraryError,
                                              OpSpec, ParamSpec, Region, Role, TensorSpec)


__all__ = ["KERNELS", "OPS", "BF16_TENSORS", "kernel", "op", "library_source", "SECTOR_BYTES",
           "LANES", "Access", "Binding", "DType", "Kind", "KernelLaunch", "KernelSpec",
           "LibraryError", "OpSpec", "ParamSpec", "Region", "Role", "TensorSpec"]


_FAMILIES = (elementwise, batchnorm, layernorm, softmax, optimizers)


def _by_name(specs, what):
    listed = {}
    for spec in specs:
        if spec.name in listed:
            raise ValueError(f"{what} {spec.name} is listed twice")
        listed[spec.name] = spec
    return MappingProxyType(listed)


KERNELS = _by_name([spec for family in _FAMILIES for spec in family.KERNELS]
                   + [spec for family in _FAMILIES for spec in family.BF16_KERNELS], "kernel")

# {FP32 kernel: the tensors its BF16 variant takes in BF16}
BF16_TENSORS = MappingProxyType({
    spec.name.removesuffix("_bf16"): tuple(t.name for t in spec.tensors if t.dtype is DType.BF16)
    for family in _FAMILIES for spec in family.BF16_KERNELS})


def _ops():
    phases = [phase for family in _FAMILIES for phase in getattr(family, "PHASES", ())]
    phases += [(f"{name}_bf16", tuple(f"{kernel}_bf16" for kernel in kernels), f"{summary}, BF16")
               for name, kernels, summary in phases]
    ops = [OpSpec(name, (spec,), spec.summary) for name, spec in KERNELS.items()]
    ops += [OpSpec(name, tuple(KERNELS[kernel] for kernel in kernels), summary)
            for name, kernels, summary in phases]
    return _by_name(ops, "op")


OPS = _ops()


def kernel(name):
    """The :class:`KernelSpec` named ``name``."""
    if name not in KERNELS:
        raise LibraryError(f"no library kernel {name!r}; kernels: {', '.join(KERNELS)}")
    return KERNELS[name]


def op(name):
    """The :class:`OpSpec` named ``name`` (a kernel, or a multi-phase op)."""
    if name not in OPS:
        raise LibraryError(f"no library op {name!r}; ops: {', '.join(OPS)}")
    return OPS[name]
