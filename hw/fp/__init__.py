"""IEEE-754 binary32 arithmetic units of the NDP datapath (ARCHITECTURE §4.4)."""
