"""The memory-expander slice: one NDP slice shared by K GPUs (docs/ndpxnet-rtl.md).

K GPU-side ports are merged into one (:class:`~.port_merge.PortMerge`), in front of an
:class:`~matndp.hw.ndp_slice.NDPSlice` built for the merged id width. The trigger thus
watches the gradient ranges of every port, and the engine, its scratchpad and the arbiter
are the slice's, unchanged. A port's requests keep their order and ids; responses return
to the port that asked.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from ..arbiter import with_id_width
from ..bus.signature import CSRBusSignature
from ..config import NDPConfig
from ..csr_map import register_map
from ..layouts import MemoryPortSignature
from ..ndp_slice import NDPSlice
from .port_merge import PortMerge, checked_ports, merged_config


__all__ = ["ExpanderSlice"]


class ExpanderSlice(wiring.Component):
    """Ports: ``gpu[0]`` … ``gpu[K − 1]`` (targets, ids of ``config.id_width`` bits),
    ``mem`` (initiator, ids of :attr:`slice_config`'s ``mem_id_width``),
    ``mem_write_error``, ``csr`` and ``irq`` as the NDP slice's.

    ``slice_config`` is the configuration of the slice inside (the merged id width): the
    one its register map and a runtime driving it are built from."""

    def __init__(self, config=None, ports=4, *, response_depth=8):
        config = config or NDPConfig()
        if not isinstance(config, NDPConfig):
            raise TypeError(f"config must be an NDPConfig, not {config!r}")
        if config.engine is None:
            raise ValueError("an expander slice reduces with its engine: its configuration "
                             "needs one (NDPConfig.engine is None)")
        self.ports, self.response_depth = checked_ports(ports, response_depth)
        self.config = config
        self.slice_config = slice_config = merged_config(config, ports)
        self.register_map = register_map(slice_config)
        super().__init__({
            "gpu": In(MemoryPortSignature(config)).array(ports),
            "mem": Out(MemoryPortSignature(with_id_width(slice_config, slice_config.mem_id_width))),
            "mem_write_error": In(1),
            "csr": In(CSRBusSignature(self.register_map.addr_width)),
            "irq": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.merge = merge = PortMerge(self.config, self.ports,
                                               response_depth=self.response_depth)
        m.submodules.ndp_slice = ndp_slice = NDPSlice(self.slice_config)
        for port in range(self.ports):
            connect(m, flipped(self.gpu[port]), merge.gpu[port])
        connect(m, merge.mem, ndp_slice.gpu)
        connect(m, ndp_slice.mem, flipped(self.mem))
        connect(m, flipped(self.csr), ndp_slice.csr)
        m.d.comb += [
            ndp_slice.mem_write_error.eq(self.mem_write_error),
            self.irq.eq(ndp_slice.irq),
        ]
        return m
