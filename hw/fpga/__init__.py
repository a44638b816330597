"""The FPGA top of an NDP slice: AXI4 toward the GPU side and toward memory, AXI4-Lite
for the registers (docs/fpga.md)."""
