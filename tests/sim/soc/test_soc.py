"""The SoC's binding of the slice's exported ports to LiteX's AXI interfaces by name."""

import pytest
from litex.soc.interconnect.axi import AXIInterface, AXILiteInterface

from matndp.sim.soc.soc import instance_ports


VERILOG = """module top(s_axi_awaddr, s_axi_awvalid, s_axi_wdata, s_axil_rdata, m_axi_bid, clk, irq);
  input [39:0] s_axi_awaddr;
  input s_axi_awvalid;
  wire [3:0] unrelated;
  input [255:0] s_axi_wdata;
  output [31:0] s_axil_rdata;
  input [8:0] m_axi_bid;
  input clk;
  output irq;
endmodule
"""


def _buses():
    return {"s_axi_": AXIInterface(data_width=256, address_width=40, id_width=8),
            "s_axil_": AXILiteInterface(data_width=32, address_width=32),
            "m_axi_": AXIInterface(data_width=256, address_width=40, id_width=9)}


def test_ports_bind_to_their_channels_by_name_and_the_rest_are_returned():
    buses = _buses()
    bound, other = instance_ports(VERILOG, "top", buses)
    assert bound["i_s_axi_awaddr"] is buses["s_axi_"].aw.addr
    assert bound["i_s_axi_awvalid"] is buses["s_axi_"].aw.valid
    assert bound["i_s_axi_wdata"] is buses["s_axi_"].w.data
    assert bound["o_s_axil_rdata"] is buses["s_axil_"].r.data
    assert bound["i_m_axi_bid"] is buses["m_axi_"].b.id
    assert other == {"clk": ("input", 1), "irq": ("output", 1)}


def test_a_narrower_port_takes_the_low_bits():
    buses = _buses()
    buses["s_axi_"] = AXIInterface(data_width=256, address_width=48, id_width=8)
    bound, _ = instance_ports(VERILOG, "top", buses)
    assert len(bound["i_s_axi_awaddr"]) == 40


def test_a_port_wider_than_its_signal_a_missing_module_and_an_unknown_channel_are_refused():
    buses = _buses()
    buses["m_axi_"] = AXIInterface(data_width=256, address_width=40, id_width=4)
    with pytest.raises(ValueError, match="port m_axi_bid \\(9 bits\\) is wider"):
        instance_ports(VERILOG, "top", buses)
    with pytest.raises(ValueError, match="no module other"):
        instance_ports(VERILOG, "other", _buses())
    with pytest.raises(ValueError, match="port s_axi_zzz: no AXI channel"):
        instance_ports(VERILOG.replace("s_axi_wdata", "s_axi_zzz"), "top", _buses())
