# amaranth: UnusedElaboratable=no
"""The FPGA top's construction: every constructor error, elaboration with and without an
engine, and `matndp export --design axi`: reproducible across processes, lint-clean Verilog with
AXI's port names."""

import subprocess
import sys

import pytest
from amaranth.hdl import Fragment

from matndp.hw.config import NDPConfig
from matndp.hw.fpga.axi import AXI4LiteSignature, AXI4Signature
from matndp.hw.fpga.config import AXIConfig
from matndp.hw.fpga.top import AXISlice
from matndp.sim.designs import (AXI_SLICE_MODULE, PIPELINED_TRIGGER_SLICE, TRIGGER_SLICE,
                                axi_slice_verilog)
from matndp.sim.fpga_flow.lint import lint


@pytest.mark.parametrize("arguments, error, message", [
    ((None,), TypeError, "config must be an NDPConfig"),
    ((TRIGGER_SLICE, "axi"), TypeError, "axi_config must be an AXIConfig"),
    ((NDPConfig(id_width=4, engine=None), AXIConfig(read_slots=32)), ValueError,
     r"AXIConfig.read_slots \(32\) exceeds the 16 read tags of NDPConfig.id_width \(4\)"),
])


def test_constructor_errors(arguments, error, message):
    with pytest.raises(error, match=message):
        AXISlice(*arguments)


@pytest.mark.parametrize("arguments, message", [
    ({"id_width": 0}, "AXIConfig.id_width must be in 1..16"),
    ({"read_slots": 24}, "AXIConfig.read_slots must be a power of two"),
    ({"read_slots": 1}, "AXIConfig.read_slots must be a power of two of at least 2"),
    ({"write_bursts": 1}, "AXIConfig.write_bursts must be in 2..256"),
])
def test_axi_config_errors(arguments, message):
    with pytest.raises(ValueError, match=message):
        AXIConfig(**arguments)


def test_axi_config_refuses_what_is_not_an_int():
    with pytest.raises(TypeError, match="AXIConfig.read_slots must be an int"):
        AXIConfig(read_slots=32.0)


@pytest.mark.parametrize("arguments, message", [
    ({"addr_width": 8, "data_width": 64, "id_width": 4}, "addr_width must be an int of at least 12"),
    ({"addr_width": 32, "data_width": 48, "id_width": 4}, "data_width must be one of AXI's"),
    ({"addr_width": 32, "data_width": 64, "id_width": 0}, "id_width must be an int of at least 1"),
    ({"addr_width": 32, "data_width": 64, "id_width": 4, "halves": ("both",)}, "halves must name"),
])
def test_signature_errors(arguments, message):
    with pytest.raises(ValueError, match=message):
        AXI4Signature(**arguments)
    with pytest.raises(ValueError, match="addr_width must be an int of at least 2"):
        AXI4LiteSignature(addr_width=1)


def test_elaborates_with_the_engine():
    top = AXISlice(NDPConfig())
    Fragment.get(top, None)
    names = set(top.signature.members)
    assert "events_valid" not in names and "irq" in names
    # The memory side's ids name the source.
    assert len(top.m_axi_arid) == NDPConfig().mem_id_width
    assert len(top.s_axil_araddr) == top.register_map.addr_width


def _command_line_export(design, output):
    result = subprocess.run([sys.executable, "-m", "matndp.sim.cli", "export", "--design", design,
                             "--output", str(output)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return output.read_text()


# The exports below are the ones the top's simulation tests build from (one per process,
# sim/designs/files.py): the tests share their worker, and the command line's export, in a
# process of its own, is the second one each comparison needs.
@pytest.mark.xdist_group("axi_slice")
def test_the_command_lines_export_is_reproducible_lint_clean_and_uses_axi_names(tmp_path):
    exported = axi_slice_verilog(TRIGGER_SLICE).read_text()
    text = _command_line_export("axi", tmp_path / "axi.v")
    assert text == exported
    assert "/work" not in text and ".py:" not in text
    for port in ("s_axi_awaddr", "s_axi_rdata", "m_axi_wstrb", "m_axi_bresp", "s_axil_araddr",
                 "events_valid", "irq"):
        assert f" {port};" in text, port
    assert lint(tmp_path / "axi.v", top=AXI_SLICE_MODULE) == 0


@pytest.mark.xdist_group("axi_slice")
def test_the_command_lines_export_of_the_pipelined_build_is_lint_clean(tmp_path):
    text = _command_line_export("axi-pipelined", tmp_path / "axi_pipelined.v")
    assert text == axi_slice_verilog(PIPELINED_TRIGGER_SLICE).read_text()
    assert text != axi_slice_verilog(TRIGGER_SLICE).read_text()
    assert "address_copy0" in text
    assert lint(tmp_path / "axi_pipelined.v", top=AXI_SLICE_MODULE) == 0
