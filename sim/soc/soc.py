"""The LiteX SoC around the NDP slice (docs/fpga.md, "The slice in a LiteX SoC"): what the
simulated SoC (:mod:`.simulated`) and the board's (:mod:`.ulx3s`) share, built the same
way on both.

VexRiscv (``minimal``: RV32I, no caches, so the CPU and the DMAs see DRAM alike) runs the
firmware from ROM, with SRAM for its stack. DRAM is LiteDRAM without an L2 cache, its PHY
and module the platform's; :meth:`NDPSoC.add_ndp_slice` adds two ports to its crossbar
beside the CPU's main RAM (Wishbone): the slice's ``m_axi`` (AXI4, 256-bit, through
LiteDRAM's AXI-to-native bridge and its width converter) and the DMA's reads (native,
256-bit). The slice's exported Verilog is instantiated as it is: its ``s_axil`` registers
sit on the SoC bus at :data:`NDP_REGISTER_BASE` (LiteX bridges Wishbone to AXI4-Lite), its
``s_axi`` GPU side takes the DMA's writes and reads (:class:`~.dma.SectorDMA`), its
``irq`` goes to the SoC's interrupt controller (:class:`~.interrupt.SliceInterrupt`) and
to the DMA, which times it."""

import re

from migen import ClockSignal, Instance, ResetSignal, Signal

from litedram.frontend.axi import LiteDRAMAXI2Native
from litex.soc.integration.soc import SoCRegion
from litex.soc.integration.soc_core import SoCCore
from litex.soc.interconnect.axi import AXIInterface, AXILiteInterface

from matndp.hw.bus.signature import CSR_DATA_WIDTH
from matndp.hw.csr_map import register_map
from matndp.hw.fpga.config import AXIConfig

from .dma import SectorDMA
from .interrupt import SliceInterrupt


__all__ = ["NDPSoC", "NDP_REGISTER_BASE", "SLICE_PORTS", "instance_ports"]


NDP_REGISTER_BASE = 0x8000_0000
ROM_BYTES = 0x1_0000
SRAM_BYTES = 0x2000
# The slice's ports outside its three buses: a slice with an engine.
SLICE_PORTS = frozenset({"clk", "rst", "irq"})

_PORT = re.compile(r"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?(\w+);", re.MULTILINE)
_CHANNELS = ("aw", "ar", "w", "b", "r")


def instance_ports(verilog, module, buses):
    """``Instance`` keyword arguments binding the ports of ``module`` in the Verilog text
    ``verilog`` to ``buses`` ({prefix: LiteX AXI or AXI-Lite interface}) by AXI's names
    (``<prefix><channel><signal>``); ports of no bus are returned apart, by name, as
    (direction, width). Ports narrower than their signal take its low bits."""
    header = re.search(rf"^module {module}\((.*?)^endmodule", verilog, re.MULTILINE | re.DOTALL)
    if header is None:
        raise ValueError(f"no module {module} in the Verilog")
    bound, other = {}, {}
    for direction, msb, name in _PORT.findall(header.group(1)):
        width = int(msb) + 1 if msb else 1
        signal = None
        for prefix, bus in sorted(buses.items(), key=lambda item: -len(item[0])):
            rest = name[len(prefix):] if name.startswith(prefix) else None
            if rest is None:
                continue
            channel = next((c for c in _CHANNELS if rest.startswith(c)), None)
            if channel is None:
                raise ValueError(f"port {name}: no AXI channel {rest!r}")
            signal = getattr(getattr(bus, channel), rest[len(channel):])
            break
        if signal is None:
            other[name] = (direction, width)
            continue
        if len(signal) < width:
            raise ValueError(f"port {name} ({width} bits) is wider than its bus signal "
                             f"({len(signal)} bits)")
        key = ("i_" if direction == "input" else "o_") + name
        bound[key] = signal if len(signal) == width else signal[:width]
    return bound, other


class NDPSoC(SoCCore):
    """The SoC's common part on ``platform`` at ``clock_hz``: the CPU, ROM and SRAM, the
    UART ``uart_name`` (LiteX's name of its kind). A platform's SoC then adds its clocking,
    its DRAM (``add_sdram``, the PHY and module its own) and the slice
    (:meth:`add_ndp_slice`), in that order.

    ``firmware``: a function giving the ROM's words, called once LiteX has generated the
    headers it is compiled against (``init_mems``)."""

    def __init__(self, platform, clock_hz, *, uart_name, firmware=None, **soc_options):
        self.firmware = firmware
        SoCCore.__init__(self, platform, clk_freq=clock_hz, ident="matNDP SoC",
                         cpu_type="vexriscv", cpu_variant="minimal",
                         integrated_rom_size=ROM_BYTES, integrated_sram_size=SRAM_BYTES,
                         uart_name=uart_name, with_timer=False, **soc_options)

    def add_ndp_slice(self, slice_verilog, module, config):
        """The slice whose Verilog is the file ``slice_verilog`` (module ``module``, the AXI
        top of a slice of ``config``, an :class:`~matndp.hw.config.NDPConfig`), with its
        registers on the bus, the DMA on its GPU side, its memory side on a DRAM port and
        its ``irq`` to the interrupt controller. The DRAM (``self.sdram``) must be there."""
        if not hasattr(self, "sdram"):
            raise ValueError("the SoC has no DRAM yet: add_sdram comes before add_ndp_slice")
        data_width = config.data_width
        memory_side = AXIInterface(data_width=data_width, address_width=config.addr_width,
                                   id_width=config.mem_id_width)
        self.memory_bridge = LiteDRAMAXI2Native(
            memory_side, self.sdram.crossbar.get_port(data_width=data_width), base_address=0)
        gpu_side = AXIInterface(data_width=data_width, address_width=config.addr_width,
                                id_width=AXIConfig().id_width)
        registers = AXILiteInterface(data_width=CSR_DATA_WIDTH, address_width=32)
        self.bus.add_slave("ndp", registers, SoCRegion(
            origin=NDP_REGISTER_BASE, size=2 ** register_map(config).addr_width, cached=False))

        irq = Signal()
        self.dma = SectorDMA(self.sdram.crossbar.get_port(mode="read", data_width=data_width),
                             gpu_side, irq)

        ports, other = instance_ports(slice_verilog.read_text(), module,
                                      {"s_axil_": registers, "s_axi_": gpu_side,
                                       "m_axi_": memory_side})
        if set(other) != SLICE_PORTS:
            raise ValueError(f"the slice's ports outside its buses are {sorted(other)}, "
                             f"expected {sorted(SLICE_PORTS)} (a slice with an engine)")
        self.specials += Instance(module, i_clk=ClockSignal("sys"), i_rst=ResetSignal("sys"),
                                  o_irq=irq, **ports)
        self.slice_irq = SliceInterrupt(irq)
        self.irq.add("slice_irq", use_loc_if_exists=True)
        self.platform.add_source(str(slice_verilog))

    def init_mems(self, **kwargs):
        if self.firmware is not None:
            self.init_rom("rom", contents=self.firmware(), auto_size=False)
