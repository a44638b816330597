"""The NDP SoC (:class:`~.soc.NDPSoC`) on a ULX3S board with an LFE5U-85F (Radiona's
ULX3S, revision 3): the 25 MHz oscillator through the ECP5's PLL to the system clock,
the board's SDR SDRAM (32 MiB, MT48LC16M16, 16-bit) on LiteDRAM's ``GENSDRPHY``, the
UART of its FTDI USB port, and its LEDs.

The pins are those of LiteX-Boards' ULX3S platform (``litex_boards/platforms/
radiona_ulx3s.py``, BSD-2-Clause), the few the SoC uses, kept here so that the project
depends on no board package: the one on PyPI is a year older than the LiteX it pins."""

from migen import ClockDomain, ClockSignal, Signal

from litedram.modules import MT48LC16M16
from litedram.phy import GENSDRPHY
from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal
from litex.build.io import DDROutput
from litex.build.lattice import LatticePlatform
from litex.gen import LiteXModule
from litex.soc.cores.clock import ECP5PLL
from litex.soc.cores.led import LedChaser

from .board import DEVICE, OSCILLATOR_HZ, SPEED_GRADE, SYSTEM_CLOCK
from .soc import NDPSoC


__all__ = ["ULX3SPlatform", "ULX3SSoC", "DRAM_MODULE"]


DRAM_MODULE = MT48LC16M16
# The SDRAM's clock leads the system clock by a quarter period, so that the chip samples
# the commands and data the PHY's registers launched at the system clock's edge in the
# middle of their window.
DRAM_CLOCK_PHASE_DEGREES = 90

_IO = [
    ("clk25", 0, Pins("G2"), IOStandard("LVCMOS33")),
    # A button, high while pressed.
    ("rst", 0, Pins("R1"), IOStandard("LVCMOS33")),
    *[("user_led", index, Pins(pin), IOStandard("LVCMOS33"))
      for index, pin in enumerate("B2 C2 C1 D2 D1 E2 E1 H3".split())],
    # The FTDI chip's UART: tx is the FPGA's output.
    ("serial", 0,
        Subsignal("tx", Pins("L4"), IOStandard("LVCMOS33")),
        Subsignal("rx", Pins("M1"), IOStandard("LVCMOS33"))),
    ("sdram_clock", 0, Pins("F19"), IOStandard("LVCMOS33")),
    ("sdram", 0,
        Subsignal("a", Pins("M20 M19 L20 L19 K20 K19 K18 J20 J19 H20 N19 G20 G19")),
        Subsignal("dq", Pins("J16 L18 M18 N18 P18 T18 T17 U20 E19 D20 D19 C20 E18 F18 J18 J17")),
        Subsignal("we_n", Pins("T20")),
        Subsignal("ras_n", Pins("R20")),
        Subsignal("cas_n", Pins("T19")),
        Subsignal("cs_n", Pins("P20")),
        Subsignal("cke", Pins("F20")),
        Subsignal("ba", Pins("P19 N20")),
        Subsignal("dm", Pins("U19 E20")),
        IOStandard("LVCMOS33"),
        Misc("SLEWRATE=FAST")),
]


class ULX3SPlatform(LatticePlatform):
    """The ULX3S's pins the SoC uses, for LiteX's Yosys / nextpnr-ecp5 flow (``trellis``)."""
    default_clk_name = "clk25"
    default_clk_period = 1e9 / OSCILLATOR_HZ

    def __init__(self):
        LatticePlatform.__init__(self, f"{DEVICE}-{SPEED_GRADE}BG381C", _IO, toolchain="trellis")

    def do_finalize(self, fragment):
        LatticePlatform.do_finalize(self, fragment)
        self.add_period_constraint(self.lookup_request("clk25", loose=True), 1e9 / OSCILLATOR_HZ)


class _ClockReset(LiteXModule):
    """The system clock from the oscillator by the PLL, held in reset while the button is
    pressed or the PLL unlocked; the SDRAM's clock, shifted (:data:`DRAM_CLOCK_PHASE_DEGREES`),
    leaves through an output DDR register."""

    def __init__(self, platform, clock_hz):
        self.rst = Signal()
        self.cd_sys = ClockDomain()
        self.cd_sys_ps = ClockDomain()
        self.pll = pll = ECP5PLL()
        self.comb += pll.reset.eq(platform.request("rst") | self.rst)
        pll.register_clkin(platform.request("clk25"), OSCILLATOR_HZ)
        pll.create_clkout(self.cd_sys, clock_hz)
        pll.create_clkout(self.cd_sys_ps, clock_hz, phase=DRAM_CLOCK_PHASE_DEGREES)
        self.specials += DDROutput(1, 0, platform.request("sdram_clock"), ClockSignal("sys_ps"))


class ULX3SSoC(NDPSoC):
    """The SoC around the slice whose Verilog is ``slice_verilog`` (module ``module``, the
    AXI top of a slice of ``config``) on the ULX3S 85F at ``clock_hz``. The LEDs chase
    while the SoC is clocked and out of reset."""

    def __init__(self, slice_verilog, module, config, *, clock_hz=SYSTEM_CLOCK, firmware=None):
        platform = ULX3SPlatform()
        NDPSoC.__init__(self, platform, clock_hz, uart_name="serial", firmware=firmware)
        self.crg = _ClockReset(platform, clock_hz)
        self.sdrphy = GENSDRPHY(platform.request("sdram"), clock_hz)
        self.add_sdram("sdram", phy=self.sdrphy, module=DRAM_MODULE(clock_hz, "1:1"),
                       l2_cache_size=0)
        self.add_ndp_slice(slice_verilog, module, config)
        self.leds = LedChaser(pads=platform.request_all("user_led"), sys_clk_freq=clock_hz)
