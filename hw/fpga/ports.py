"""The FPGA tops' flat ports: every bus of a top is a set of ports named
``<prefix><AXI signal name>`` (``s_axi_awaddr``, ``m_axi_rvalid``, ...) so that they bind
to an interconnect or a controller by name; these helpers make such ports from a bus
signature and join them to the interface of the submodule that serves the bus."""

from amaranth.hdl import Value
from amaranth.lib.wiring import Out


__all__ = ["flat_members", "Prefixed", "join_flat"]


def flat_members(prefix, signature, *, flip):
    """The members of ``signature`` as flat ports named ``prefix + name``; ``flip`` for a
    bus the top serves (a slave) rather than drives."""
    return {prefix + name: member.flip() if flip else member
            for name, member in signature.members.items()}


class Prefixed:
    """The members ``prefix + name`` of a component, by ``name``."""

    def __init__(self, component, prefix, names):
        for name in names:
            setattr(self, name, getattr(component, prefix + name))


def join_flat(m, inner, outer):
    """Join the interface ``inner`` of a submodule to a top's flat ports ``outer`` (a
    :class:`Prefixed` of the same names): what the submodule drives drives the ports, the
    rest comes from them."""
    for name, member in inner.signature.members.items():
        if member.flow == Out:
            m.d.comb += getattr(outer, name).eq(Value.cast(getattr(inner, name)))
        else:
            m.d.comb += getattr(inner, name).eq(getattr(outer, name))
