"""A minimal register bus: one access per cycle, a fixed one-cycle response.

The initiator holds ``addr`` (byte address, 4-byte aligned) with a one-cycle ``r_en`` or
``w_en`` strobe (and ``w_data``). Exactly one cycle later the target pulses ``ack``; for a
read ``r_data`` is valid in that cycle. ``err`` accompanies ``ack`` when the address maps
to no register, is misaligned, or a write targets a read-only register; such writes have
no effect. Accesses may be issued back to back.
"""

from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


__all__ = ["CSRBusSignature", "CSR_DATA_WIDTH"]


CSR_DATA_WIDTH = 32


class CSRBusSignature(wiring.Signature):
    """The bus as seen by its initiator."""

    def __init__(self, addr_width):
        if not isinstance(addr_width, int) or isinstance(addr_width, bool) or addr_width < 2:
            raise ValueError(f"CSRBusSignature: addr_width must be an int of at least 2 (a "
                             f"byte address of 4-byte registers), not {addr_width!r}")
        self.addr_width = addr_width
        super().__init__({
            "addr":   Out(addr_width),
            "w_en":   Out(1),
            "w_data": Out(CSR_DATA_WIDTH),
            "r_en":   Out(1),
            "ack":    In(1),
            "r_data": In(CSR_DATA_WIDTH),
            "err":    In(1),
        })

    def __eq__(self, other):
        return isinstance(other, CSRBusSignature) and other.addr_width == self.addr_width

    def __repr__(self):
        return f"CSRBusSignature({self.addr_width})"
