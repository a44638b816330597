"""The ULX3S 85F board's facts the SoC's build and its command need without LiteX: the
part, the oscillator and the system clocks (:mod:`.ulx3s` builds the SoC on them)."""

__all__ = ["DEVICE", "SPEED_GRADE", "OSCILLATOR_HZ", "SYSTEM_CLOCK", "CLOCK_RANGE_MHZ"]


DEVICE = "LFE5U-85F"
SPEED_GRADE = 6
OSCILLATOR_HZ = int(25e6)
# The system clock the SoC is designed for (docs/fpga.md, "Run it on a board").
SYSTEM_CLOCK = int(50e6)
# The system clocks a build may be made for instead, whole MHz: the PLL makes each of them
# from the oscillator within LiteX's 1 % margin, and they stay below the 133 MHz of the
# board's SDRAM (MT48LC16M16A2-75) with the single-rate PHY's margin.
CLOCK_RANGE_MHZ = (10, 100)
