"""The simulated SoC built on a stand-in slice: the DRAM model, the slice's registers on the
bus and its interrupt (the SoC run whole: test_flow.py, ``-m slow``)."""

from matndp.sim.designs import FPGA_ENGINE_SLICE
from matndp.sim.soc.soc import NDP_REGISTER_BASE

from .stand_in import STAND_IN_SLICE


def test_the_simulated_soc_has_the_dram_model_and_the_slice(tmp_path):
    from litedram.phy.model import SDRAMPHYModel
    from matndp.sim.soc.simulated import SimulatedSoC
    stand_in = tmp_path / "ndp_slice_axi.v"
    stand_in.write_text(STAND_IN_SLICE)
    soc = SimulatedSoC(stand_in, "ndp_slice_axi", FPGA_ENGINE_SLICE)
    assert isinstance(soc.sdrphy, SDRAMPHYModel)
    assert soc.bus.regions["ndp"].origin == NDP_REGISTER_BASE
    assert soc.bus.regions["main_ram"].size == 256 * 2**20
    assert "slice_irq" in soc.irq.locs
    assert str(stand_in) in [source[0] for source in soc.platform.sources]
