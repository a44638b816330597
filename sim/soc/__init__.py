"""The NDP slice with its engine in a LiteX SoC under Verilator (docs/fpga.md, "The slice in
a LiteX SoC"): :mod:`.firmware_header` generates the firmware's C header from the register
map, the library's kernels and their reference outputs; :mod:`.soc` is the SoC (LiteX and
migen are imported only there, in :mod:`.ulx3s`, the SoC on the ULX3S board, and in the
flows' functions that build them); :mod:`.flow` builds and runs it, :mod:`.bitstream` builds
the board's; :mod:`.board` holds the board's facts the command needs without LiteX."""
