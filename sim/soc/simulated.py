"""The NDP SoC (:class:`~.soc.NDPSoC`) for LiteX's Verilator simulation: a simulated clock,
LiteX's simulated UART, and LiteDRAM's simulated DDR3 module (``SDRAMPHYModel``,
MT41K128M16's timings)."""

from litedram import modules as dram_modules
from litedram.phy.model import SDRAMPHYModel, get_sdram_phy_settings, sdram_module_nphases
from litex.build.generic_platform import Pins, Subsignal
from litex.build.io import CRG
from litex.build.sim import SimPlatform

from .soc import NDPSoC


__all__ = ["SimulatedSoC", "DRAM_MODULE", "SYSTEM_CLOCK"]


DRAM_MODULE = "MT41K128M16"
DRAM_CHIP_WIDTH = 16
# The module's timings are LiteX's for this clock (the simulation's clock is nominal).
DRAM_TIMING_CLOCK = int(100e6)
SYSTEM_CLOCK = int(1e6)

_IO = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    ("serial", 0,
        Subsignal("source_valid", Pins(1)), Subsignal("source_ready", Pins(1)),
        Subsignal("source_data", Pins(8)),
        Subsignal("sink_valid", Pins(1)), Subsignal("sink_ready", Pins(1)),
        Subsignal("sink_data", Pins(8))),
]


class SimulatedSoC(NDPSoC):
    """The SoC around the slice whose Verilog is ``slice_verilog`` (module ``module``,
    the AXI top of a slice of ``config``), as LiteX's simulation builds it."""

    def __init__(self, slice_verilog, module, config, firmware=None):
        platform = SimPlatform("SIM", _IO)
        NDPSoC.__init__(self, platform, SYSTEM_CLOCK, uart_name="sim", firmware=firmware)
        self.crg = CRG(platform.request("sys_clk"))
        # The simulator's trace switch (a traced model's firmware turns it on for each
        # kernel) and the register the firmware ends the run with.
        platform.add_debug(self, reset=0)

        module_class = getattr(dram_modules, DRAM_MODULE)
        rate = f"1:{sdram_module_nphases[module_class.memtype]}"
        dram_module = module_class(DRAM_TIMING_CLOCK, rate)
        settings = get_sdram_phy_settings(memtype=module_class.memtype,
                                          data_width=DRAM_CHIP_WIDTH,
                                          clk_freq=DRAM_TIMING_CLOCK)
        self.sdrphy = SDRAMPHYModel(module=dram_module, settings=settings,
                                    clk_freq=DRAM_TIMING_CLOCK)
        self.add_sdram("sdram", phy=self.sdrphy, module=dram_module, l2_cache_size=0)
        self.add_ndp_slice(slice_verilog, module, config)
