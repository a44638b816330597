"""A stand-in for the slice's exported Verilog, for building the SoC without exporting it."""

# The slice's ports outside its buses and one of each bus, enough for the SoC to bind.
STAND_IN_SLICE = """module ndp_slice_axi(clk, rst, irq, s_axil_awaddr, s_axi_awvalid, m_axi_arvalid);
  input clk;
  input rst;
  output irq;
  input [20:0] s_axil_awaddr;
  input s_axi_awvalid;
  output m_axi_arvalid;
endmodule
"""
