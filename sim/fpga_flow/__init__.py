"""The FPGA tool flow over exported Verilog: Verilator lint, Yosys and nextpnr synthesis
for ECP5, and static timing over the routed design (docs/fp-synthesis.md)."""
