"""The trigger's matching rule (docs/trigger.md), written from the specification for the
tests to compare the RTL with: entry *i* matches when enabled, its direction flag is set
and ``base <= addr < base + size`` (no wrap past the top address); the lowest matching
index wins."""


__all__ = ["entry", "matching_entry"]


def entry(base, size, *, enable=1, on_write=1, on_read=1):
    """One filter entry as the RTL's ``filter_entry_layout`` names its fields."""
    return dict(enable=int(enable), on_write=int(on_write), on_read=int(on_read),
                base=base, size=size)


def matching_entry(table, addr, write):
    """(index, offset) of the entry an access to ``addr`` triggers, or None."""
    for index, fields in enumerate(table):
        direction = fields["on_write"] if write else fields["on_read"]
        if fields["enable"] and direction and fields["base"] <= addr < fields["base"] + fields["size"]:
            return index, addr - fields["base"]
    return None
