"""Reusable cocotb drivers, one protocol per module."""
