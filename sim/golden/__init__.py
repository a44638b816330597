"""Reference models the RTL is checked against, independent of the RTL."""
