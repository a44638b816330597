"""The register bus: one access at a time, acknowledged after a wait of one or more cycles.

An access is a one-cycle strobe from the initiator: ``r_en`` (a read) or ``w_en`` (a write,
with ``w_data``), never both, with ``addr`` a byte address of a 4-byte word. The target
answers with ``ack`` for one cycle, one or more cycles after the strobe; for a read
``r_data`` is valid in that cycle. ``err`` accompanies ``ack`` when the target refuses the
access: the address maps to nothing, is misaligned, or a write targets something read-only;
a refused write has no effect, and what a refused read returns carries no meaning (the
register file and the decoder return 0).

The initiator issues no new access before the ``ack`` of the last one, and keeps ``addr``
and ``w_data`` unchanged from the strobe through the cycle of the ``ack``, so a target may
use them in any cycle in between. A new strobe may come in the cycle after the ``ack``.
A target never acknowledges in the cycle of the strobe, nor without an access; outside
its ``ack`` cycle a target's ``r_data`` and ``err`` carry no meaning.

The register file answers after exactly three cycles; a window's target (a block RAM shared
with hardware, a bridge) may take longer. Nothing in the protocol bounds the wait: the host
side gives up after a timeout and reports the address, after which the state of the target
that did not answer is unknown.
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
