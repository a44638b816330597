"""The designs ``matndp synth`` reports on: the engine's parts of the `fpga` configuration
build from it and run only when named."""

from amaranth.lib import wiring

from matndp.hw.config import named_config
from matndp.sim.fpga_flow.synth_designs import DEFAULT_DESIGNS, DESIGNS, ENGINE_PARTS


def test_every_engine_part_is_a_design_of_the_fpga_configuration():
    for name in ENGINE_PARTS:
        design = DESIGNS[f"engine_fpga_{name}"]
        component = design["build"]()
        assert isinstance(component, wiring.Component), name
        assert component.config == named_config("fpga"), name
        assert "fpga" in design["design"], name
        # Built to be looked at, not elaborated: Amaranth would warn when it is collected,
        # in whichever test runs then.
        component._MustUse__silence = True


def test_the_engine_parts_and_slices_run_only_when_named():
    named_only = {name for name in DESIGNS if name.startswith(("engine_fpga_", "ndp_slice_engine"))}
    assert len(named_only) == len(ENGINE_PARTS) + 3
    assert not named_only & set(DEFAULT_DESIGNS)
    assert set(DEFAULT_DESIGNS) | named_only == set(DESIGNS)
