"""The SoC on the ULX3S 85F: built on a stand-in slice (its ports only), its pins as the
board's published constraints place them, its clocking and DRAM; with the CPU's Verilog
installed (make soc-setup), the gateware LiteX writes from it."""

import pytest

from matndp.sim.designs import FPGA_ENGINE_SLICE
from matndp.sim.soc.soc import NDP_REGISTER_BASE

from .stand_in import STAND_IN_SLICE


# The ULX3S's pins of the signals the SoC uses, from the board's constraint file
# (ulx3s_v20.lpf, as LiteX-Boards' radiona_ulx3s.py has them).
BOARD_PINS = {
    "clk25": "G2", "rst": "R1", "serial_tx": "L4", "serial_rx": "M1", "sdram_clock": "F19",
    "sdram_cs_n": "P20", "sdram_cke": "F20", "sdram_we_n": "T20", "sdram_ras_n": "R20",
    "sdram_cas_n": "T19", "user_led0": "B2", "user_led7": "H3",
}
SDRAM_BUS_PINS = {
    "sdram_a": "M20 M19 L20 L19 K20 K19 K18 J20 J19 H20 N19 G20 G19".split(),
    "sdram_dq": "J16 L18 M18 N18 P18 T18 T17 U20 E19 D20 D19 C20 E18 F18 J18 J17".split(),
    "sdram_ba": ["P19", "N20"],
    "sdram_dm": ["U19", "E20"],
}



@pytest.fixture
def board_soc(tmp_path):
    from matndp.sim.soc.ulx3s import ULX3SSoC
    stand_in = tmp_path / "ndp_slice_axi.v"
    stand_in.write_text(STAND_IN_SLICE)
    return ULX3SSoC(stand_in, "ndp_slice_axi", FPGA_ENGINE_SLICE)


def _requested_pins(platform):
    pins = {}
    for signal, signal_pins, _, (name, number, subsignal) in \
            platform.constraint_manager.get_sig_constraints():
        key = f"{name}_{subsignal}" if subsignal else (f"{name}{number}" if name == "user_led" else name)
        pins[key] = signal_pins
    return pins


def test_the_soc_requests_the_boards_pins(board_soc):
    pins = _requested_pins(board_soc.platform)
    for name, pin in BOARD_PINS.items():
        assert pins[name] == [pin], name
    for name, bus_pins in SDRAM_BUS_PINS.items():
        assert pins[name] == bus_pins, name
    assert board_soc.platform.device == "LFE5U-85F-6BG381C"


def test_the_pll_makes_the_system_clock_from_the_oscillator(board_soc):
    pll = board_soc.crg.pll
    assert pll.clkin_freq == 25e6
    # The system clock and the SDRAM's, a quarter period later.
    assert [(freq, phase) for _, freq, phase, *_ in pll.clkouts.values()] == [(50e6, 0), (50e6, 90)]
    assert board_soc.sys_clk_freq == 50e6


def test_a_soc_built_for_another_clock_has_its_pll_and_its_drams_timings_at_it(tmp_path):
    from matndp.sim.soc.ulx3s import ULX3SSoC
    stand_in = tmp_path / "ndp_slice_axi.v"
    stand_in.write_text(STAND_IN_SLICE)
    soc = ULX3SSoC(stand_in, "ndp_slice_axi", FPGA_ENGINE_SLICE, clock_hz=30e6)
    assert [(freq, phase) for _, freq, phase, *_ in soc.crg.pll.clkouts.values()] == \
        [(30e6, 0), (30e6, 90)]
    assert soc.sys_clk_freq == 30e6 and soc.sdram.controller.settings.phy.nphases == 1
    # The SDRAM's refresh interval, 7.8 µs, counted in the slower clock's cycles (rounded up).
    assert 234 <= soc.sdram.controller.settings.timing.tREFI <= 235


def test_the_slice_sits_on_the_bus_and_the_dram_is_the_boards(board_soc):
    from litedram.phy import GENSDRPHY
    assert isinstance(board_soc.sdrphy, GENSDRPHY)
    assert board_soc.bus.regions["ndp"].origin == NDP_REGISTER_BASE
    assert board_soc.bus.regions["main_ram"].size == 32 * 2**20
    assert "slice_irq" in board_soc.irq.locs
    assert board_soc.cpu_type == "vexriscv" and board_soc.cpu.variant == "minimal"


def test_a_slice_without_its_engines_ports_and_a_soc_without_dram_are_refused(tmp_path):
    from matndp.sim.soc.ulx3s import ULX3SSoC
    from matndp.sim.soc.soc import NDPSoC
    trigger_only = tmp_path / "ndp_slice_axi.v"
    trigger_only.write_text(STAND_IN_SLICE.replace("irq, ", "").replace("  output irq;\n", ""))
    with pytest.raises(ValueError, match=r"outside its buses are \['clk', 'rst'\], expected "
                                         r"\['clk', 'irq', 'rst'\]"):
        ULX3SSoC(trigger_only, "ndp_slice_axi", FPGA_ENGINE_SLICE)
    from litex.build.sim import SimPlatform
    from litex.build.generic_platform import Pins
    bare = NDPSoC(SimPlatform("SIM", [("sys_clk", 0, Pins(1))]), int(1e6), uart_name="stub")
    with pytest.raises(ValueError, match="no DRAM yet: add_sdram comes before add_ndp_slice"):
        bare.add_ndp_slice(trigger_only, "ndp_slice_axi", FPGA_ENGINE_SLICE)


def _has_cpu_verilog():
    try:
        import pythondata_cpu_vexriscv   # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _has_cpu_verilog(), reason="make soc-setup has not run")
def test_the_gateware_places_every_pin_and_instantiates_the_slice(board_soc, tmp_path):
    from litex.soc.integration.builder import Builder
    builder = Builder(board_soc, output_dir=str(tmp_path / "build"), compile_software=False,
                      compile_gateware=False)
    builder.build(build_name="board", run=False)
    gateware = tmp_path / "build" / "gateware"
    constraints = (gateware / "board.lpf").read_text()
    for name, pin in BOARD_PINS.items():
        assert f'LOCATE COMP "{name}" SITE "{pin}";' in constraints, name
    for name, bus_pins in SDRAM_BUS_PINS.items():
        for index, pin in enumerate(bus_pins):
            assert f'LOCATE COMP "{name}[{index}]" SITE "{pin}";' in constraints
    assert 'FREQUENCY PORT "clk25" 25.0 MHz;' in constraints
    verilog = (gateware / "board.v").read_text()
    assert "ndp_slice_axi ndp_slice_axi(" in verilog
    assert "EHXPLLL" in verilog
    assert f"read_verilog {tmp_path / 'ndp_slice_axi.v'}" in (gateware / "board.ys").read_text()
    assert "--85k --package CABGA381 --speed 6" in (gateware / "build_board.sh").read_text()
