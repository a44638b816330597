"""AXI4-Lite onto the register bus (:mod:`matndp.hw.bus.signature`): one access at a time,
answered when the register bus acknowledges it, however long that takes
(docs/fpga.md, "Registers").

Responses: OKAY; DECERR for an address in no register block and no window of the map;
SLVERR for what the register bus refuses otherwise (no register at that offset, a
misaligned address, a write to a read-only register, a window access its rules forbid) and
for a write whose ``WSTRB`` is not all four bytes (registers are written whole; the write
is not performed). When reads and writes both wait they take turns.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..bus.map import RegisterMap
from ..bus.signature import CSR_DATA_WIDTH, CSRBusSignature
from ..layouts import ResponseStatus
from .axi import AXI4LiteSignature


__all__ = ["AXILiteCSRBridge"]


_ALL_BYTES = (1 << CSR_DATA_WIDTH // 8) - 1


class AXILiteCSRBridge(wiring.Component):
    """Ports: ``axil`` (AXI4-Lite slave, addresses as wide as the map's), ``csr`` (the
    register bus, initiator)."""

    def __init__(self, register_map):
        if not isinstance(register_map, RegisterMap):
            raise TypeError(f"AXILiteCSRBridge: {register_map!r} is not a RegisterMap")
        self.register_map = register_map
        width = register_map.addr_width
        super().__init__({
            "axil": In(AXI4LiteSignature(addr_width=width)),
            "csr": Out(CSRBusSignature(width)),
        })

    def _decoded(self, address):
        """Whether ``address`` lies in a register block or a window of the map."""
        hit = 0
        for part in (*self.register_map.blocks, *self.register_map.windows):
            bits = (part.end - part.base - 1).bit_length()
            hit = hit | (address[bits:] == part.base >> bits)
        return hit

    def elaborate(self, platform):
        m = Module()
        axil, csr = self.axil, self.csr
        # All ones until the first access, and in reset: the address then moves when the
        # first access comes, so logic decoding it is evaluated by every simulator, also
        # where that access is to address 0 (Icarus gives registers their initial value
        # without an event). Reset reaches it as any register's, not through logic.
        address = Signal(self.register_map.addr_width,
                         init=(1 << self.register_map.addr_width) - 1)
        write_data = Signal(CSR_DATA_WIDTH)
        read_data = Signal(CSR_DATA_WIDTH)
        response = Signal(ResponseStatus)
        writes_turn = Signal()           # a write goes first when both wait
        # The strobes and the responses' valid signals are registers of their own, not
        # decoded from the state: defined from the first instant in every simulator,
        # whatever the inputs.
        read_strobe = Signal()
        write_strobe = Signal()
        read_valid = Signal()
        write_valid = Signal()

        m.d.comb += [csr.addr.eq(address), csr.w_data.eq(write_data),
                     csr.r_en.eq(read_strobe), csr.w_en.eq(write_strobe),
                     axil.rdata.eq(read_data), axil.rresp.eq(response),
                     axil.bresp.eq(response), axil.rvalid.eq(read_valid),
                     axil.bvalid.eq(write_valid)]
        # A strobe lasts one cycle.
        m.d.sync += [read_strobe.eq(0), write_strobe.eq(0)]

        def answer(is_read):
            error = ResponseStatus.SLAVE_ERROR
            with m.If(csr.err):
                m.d.sync += response.eq(error)
                with m.If(~self._decoded(address)):
                    m.d.sync += response.eq(ResponseStatus.DECODE_ERROR)
            with m.Else():
                m.d.sync += response.eq(ResponseStatus.OKAY)
            if is_read:
                m.d.sync += read_data.eq(csr.r_data)

        with m.FSM():
            with m.State("IDLE"):
                read_waits = axil.arvalid
                write_waits = axil.awvalid & axil.wvalid
                with m.If(write_waits & (writes_turn | ~read_waits)):
                    m.d.comb += [axil.awready.eq(1), axil.wready.eq(1)]
                    m.d.sync += [address.eq(axil.awaddr), write_data.eq(axil.wdata),
                                 writes_turn.eq(0)]
                    with m.If(axil.wstrb == _ALL_BYTES):
                        m.d.sync += write_strobe.eq(1)
                        m.next = "WRITE_WAIT"
                    with m.Else():
                        m.d.sync += [response.eq(ResponseStatus.SLAVE_ERROR), write_valid.eq(1)]
                        m.next = "B"
                with m.Elif(read_waits):
                    m.d.comb += axil.arready.eq(1)
                    m.d.sync += [address.eq(axil.araddr), writes_turn.eq(1), read_strobe.eq(1)]
                    m.next = "READ_WAIT"
            with m.State("READ_WAIT"):
                with m.If(csr.ack):
                    answer(is_read=True)
                    m.d.sync += read_valid.eq(1)
                    m.next = "R"
            with m.State("R"):
                with m.If(axil.rready):
                    m.d.sync += read_valid.eq(0)
                    m.next = "IDLE"
            with m.State("WRITE_WAIT"):
                with m.If(csr.ack):
                    answer(is_read=False)
                    m.d.sync += write_valid.eq(1)
                    m.next = "B"
            with m.State("B"):
                with m.If(axil.bready):
                    m.d.sync += write_valid.eq(0)
                    m.next = "IDLE"
        return m
