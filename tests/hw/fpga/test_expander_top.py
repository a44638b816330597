# amaranth: UnusedElaboratable=no
"""The expander's FPGA top: every constructor error, its ports (K GPU-side AXI4 slaves,
the memory master, the register slave), and `matndp export --design expander-axi`:
lint-clean Verilog with AXI's port names (a small top's in the default suite, the full one's
in the slow suite), the same across processes (slow). Its behaviour
under cocotbext-axi is tests/hw/fpga/test_axi_expander.py's."""

import subprocess
import sys

import pytest
from amaranth.hdl import Fragment

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.export import export_verilog
from matndp.hw.fpga.config import AXIConfig
from matndp.hw.fpga.expander_top import AXIExpander, gpu_prefix
from matndp.sim.designs import AXI_EXPANDER_MODULE, EXPANDER_CONFIG, EXPANDER_PORTS
from matndp.sim.fpga_flow.lint import lint


# An engine as small as the top allows, so that its export and lint take half a minute
# rather than the full top's minutes.
SMALL = NDPConfig(id_width=6, trigger=TriggerConfig(filter_entries=4),
                  engine=EngineConfig(slots=2, instruction_words=64, argument_blocks=1,
                                      scratchpad_bytes=256, divide_units=1, fma_units=2,
                                      reduce_tree=False, in_flight=1, memory_first=False))


@pytest.mark.parametrize("arguments, keywords, error, message", [
    ((None,), {}, TypeError, "AXIExpander: config must be an NDPConfig, not None"),
    ((SMALL, 2, "axi"), {}, TypeError, "AXIExpander: axi_config must be an AXIConfig"),
    ((NDPConfig(engine=None),), {}, ValueError, r"needs one \(NDPConfig.engine is None\)"),
    ((SMALL, "4"), {}, TypeError, "ports must be an int, not '4'"),
    ((SMALL, 1), {}, ValueError, "ports must be at least 2"),
    ((SMALL, 17), {}, ValueError, r"ports must be in 1\.\.16, not 17"),
    ((NDPConfig(id_width=4), 2), {}, ValueError,
     r"AXIConfig.read_slots \(32\) exceeds the 16 read tags of NDPConfig.id_width \(4\)"),
    ((NDPConfig(id_width=10), 16), {}, ValueError, "16 ports need 4 id bits above the ports' 10"),
    ((SMALL, 2), {"response_depth": 0}, ValueError, r"response_depth must be in 1\.\.1024"),
    ((SMALL, 2), {"write_answers": 0}, ValueError, r"write_answers must be in 1\.\.1024, not 0"),
    ((SMALL, 2), {"write_answers": 8.0}, TypeError, "write_answers must be an int"),
])
def test_constructor_errors(arguments, keywords, error, message):
    with pytest.raises(error, match=message):
        AXIExpander(*arguments, **keywords)


def test_default_is_four_ports():
    assert AXIExpander(SMALL).ports == 4 == EXPANDER_PORTS


@pytest.mark.parametrize("ports", [2, 3])
def test_ports_and_widths(ports):
    axi_config = AXIConfig(id_width=5)
    top = AXIExpander(SMALL, ports, axi_config)
    Fragment.get(top, None)
    names = set(top.signature.members)
    for port in range(ports):
        prefix = gpu_prefix(port)
        for channel in ("aw", "w", "b", "ar", "r"):
            assert f"{prefix}{channel}valid" in names and f"{prefix}{channel}ready" in names
        for name in ("awid", "bid", "arid", "rid"):
            assert len(getattr(top, prefix + name)) == axi_config.id_width
    assert f"{gpu_prefix(ports)}awvalid" not in names
    assert "irq" in names and not any(name.startswith("events_") for name in names)
    # Memory's ids: a GPU's id, the port index above it, the source bit on top.
    assert top.slice_config.id_width == SMALL.id_width + (ports - 1).bit_length()
    assert len(top.m_axi_arid) == len(top.m_axi_bid) == top.slice_config.mem_id_width
    assert len(top.s_axil_araddr) == top.register_map.addr_width


def _check_exported_top(output, ports):
    """The exported top in ``output`` names its ports as AXI does, has ``ports`` GPU-side
    ports, no source paths, and is lint-clean."""
    text = output.read_text()
    assert "/work" not in text and ".py:" not in text
    last = ports - 1
    for port in ("s_axi0_awaddr", f"s_axi{last}_rdata", f"s_axi{last - 1}_bid", "m_axi_wstrb",
                 "m_axi_bresp", "s_axil_araddr", "irq"):
        assert f" {port};" in text, port
    assert f" s_axi{ports}_awaddr;" not in text
    assert lint(output, top=AXI_EXPANDER_MODULE) == 0


def test_a_small_tops_export_is_lint_clean_and_uses_axi_names(tmp_path):
    output = tmp_path / "expander_axi.v"
    output.write_text(export_verilog(AXIExpander(SMALL, 3), AXI_EXPANDER_MODULE))
    _check_exported_top(output, 3)


# The export of the expander's full top takes more than a minute: the default suite lints a
# small one (above), the slow suite the command line's.
@pytest.mark.slow
def test_the_command_lines_export_is_lint_clean_and_uses_axi_names(tmp_path):
    output = tmp_path / "expander_axi.v"
    result = subprocess.run([sys.executable, "-m", "matndp.sim.cli", "export", "--design",
                             "expander-axi", "--output", str(output)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    _check_exported_top(output, EXPANDER_PORTS)


# That exports are the same across processes is checked in the default suite on the
# slice's AXI top.
@pytest.mark.slow
def test_the_export_is_the_same_in_another_process(tmp_path):
    output = tmp_path / "expander_axi.v"
    command = subprocess.Popen([sys.executable, "-m", "matndp.sim.cli", "export", "--design",
                                "expander-axi", "--output", str(output)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        text = export_verilog(AXIExpander(EXPANDER_CONFIG, EXPANDER_PORTS), AXI_EXPANDER_MODULE)
    finally:
        _, errors = command.communicate()
    assert command.returncode == 0, errors
    assert output.read_text() == text
