"""The NDP slice with its engine in a LiteX SoC under Verilator (docs/fpga.md, "The slice in
a LiteX SoC"): :mod:`.firmware_header` generates the firmware's C header from the register
map, the library's kernels and their reference outputs; :mod:`.soc` is the SoC and
:mod:`.ulx3s` the same on the ULX3S board (LiteX and migen are imported only in these two
and inside the functions that build them); :mod:`.flow` builds and runs the simulated SoC,
:mod:`.bitstream` the board's; :mod:`.board` holds the board's facts that the command
needs without LiteX."""
