"""IEEE-754 binary32 arithmetic units of the NDP datapath (docs/architecture.md, docs/fp.md)."""
