"""Synthesizable Amaranth RTL of the matNDP slice."""
