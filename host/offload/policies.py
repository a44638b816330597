"""Offload policies: which ops with an NDP kernel the planner may move off the GPU.

A policy screens an op before its NDP time is estimated (``keep_on_gpu``) and may refuse
the estimate (``refuses``). Policies register under their name; :data:`OFFLOAD_POLICIES`
is the one list of them.
"""

from typing import ClassVar

from ..registry import Registry


__all__ = ["OffloadPolicy", "OffloadAuto", "OffloadAll", "OffloadNone", "OFFLOAD_POLICIES",
           "register_offload_policy", "offload_policy"]


# name -> policy class, in registration order
OFFLOAD_POLICIES = Registry("offload policy")

register_offload_policy = OFFLOAD_POLICIES.register


def offload_policy(name):
    """A policy object of the registered ``name``."""
    return OFFLOAD_POLICIES.lookup(name)()


class OffloadPolicy:
    """Offloads every op that has an NDP kernel, unless the configuration keeps the
    optimizer step on the GPU."""

    name: ClassVar[str]
    help: ClassVar[str]

    def keep_on_gpu(self, graph, op, memory, config):
        """Why ``op`` stays on the GPU whatever its NDP estimate, or None; ``memory``:
        the run's :class:`~matndp.host.offload.memory.MemoryPlacement`."""
        if op.kind == "optimizer" and not config.offload_optimizer:
            return "optimizer offload disabled"
        return None

    def refuses(self, estimate_s, gpu_s):
        """Why an NDP estimate of ``estimate_s`` against ``gpu_s`` on the GPU is not
        taken, or None."""
        return None


@register_offload_policy
class OffloadAuto(OffloadPolicy):
    name = "auto"
    help = "offload a memory-bound op when its NDP estimate beats the GPU kernel"

    def keep_on_gpu(self, graph, op, memory, config):
        reason = super().keep_on_gpu(graph, op, memory, config)
        if reason is None and not memory.is_memory_bound(graph, op):
            reason = "compute-bound on the GPU"
        return reason

    def refuses(self, estimate_s, gpu_s):
        if estimate_s >= gpu_s:
            return f"NDP estimate {estimate_s * 1e6:.1f} us not below GPU {gpu_s * 1e6:.1f} us"
        return None


@register_offload_policy
class OffloadAll(OffloadPolicy):
    name = "all"
    help = "offload every op that has an NDP kernel"


@register_offload_policy
class OffloadNone(OffloadPolicy):
    name = "none"
    help = "offload nothing (the GPU baseline)"

    def keep_on_gpu(self, graph, op, memory, config):
        return "policy none"
