"""The memory-expander slice: K GPU-side ports merged in front of one NDP slice, whose
engine reduces the K GPUs' gradients as they arrive and runs the optimizer in place
(docs/ndpxnet-rtl.md)."""

from .expander_slice import ExpanderSlice
from .port_merge import MAX_PORTS, PortMerge, checked_ports, merged_config, port_index_bits


__all__ = ["ExpanderSlice", "PortMerge", "checked_ports", "merged_config", "port_index_bits", "MAX_PORTS"]
