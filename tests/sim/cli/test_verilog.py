"""``matndp export --config``: the AXI top around the slice of a named configuration, its
engine's windows in the register port (bad input: tests/sim/cli/test_bad_input.py)."""

import re

import pytest

from matndp.hw.config import named_config
from matndp.hw.csr_map import register_map

from .commands import exit_code


@pytest.mark.slow
def test_the_axi_top_of_the_fpga_configuration_carries_its_engine(tmp_path):
    output = tmp_path / "top.v"
    assert exit_code(["export", "--design", "axi", "--config", "fpga", "--output", str(output)]) == 0
    text = output.read_text()
    width = register_map(named_config("fpga")).addr_width
    assert re.search(rf"input \[{width - 1}:0\] s_axil_awaddr;", text)
    assert "events_valid" not in text
    ids = named_config("fpga").mem_id_width
    assert re.search(rf"output \[{ids - 1}:0\] m_axi_awid;", text)
