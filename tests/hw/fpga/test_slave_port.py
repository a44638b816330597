# amaranth: UnusedElaboratable=no
"""The GPU side of the FPGA tops as one component: its ports and every constructor error.
Its behaviour is tested through the tops (tests/hw/fpga/test_axi_slice.py,
test_axi_expander.py) and its bridges' own tests."""

import pytest
from amaranth.hdl import Fragment

from matndp.hw.config import NDPConfig
from matndp.hw.fpga.config import AXIConfig
from matndp.hw.fpga.slave_port import AXISlavePort
from matndp.hw.layouts import request_layout, response_layout


CONFIG = NDPConfig(id_width=5, engine=None)


def test_ports():
    port = AXISlavePort(CONFIG, AXIConfig(id_width=3, read_slots=16))
    Fragment.get(port, None)
    assert len(port.axi.awid) == len(port.axi.bid) == len(port.axi.rid) == 3
    assert len(port.axi.wdata) == CONFIG.data_width
    assert port.port.req.payload.shape() == request_layout(CONFIG)
    assert port.port.resp.payload.shape() == response_layout(CONFIG)


@pytest.mark.parametrize("axi_config, error, message", [
    (None, TypeError, "axi_config must be an AXIConfig, not None"),
    (AXIConfig(read_slots=64), ValueError,
     r"AXIConfig.read_slots \(64\) exceeds the 32 read tags of NDPConfig.id_width \(5\)"),
])
def test_constructor_errors(axi_config, error, message):
    with pytest.raises(error, match=message):
        AXISlavePort(CONFIG, axi_config)
