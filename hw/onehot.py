"""One-hot vectors: finding the first set bit, its index, and selecting by it.

Kept as AND-OR logic a few levels deep rather than chains of 2:1 multiplexers, one per
candidate: the filter matcher's priority and the stream merge's grant both sit on paths
that set the clock.
"""

from amaranth.hdl import Cat, C, Value


__all__ = ["first_one", "one_hot_index", "one_hot_select"]


def first_one(bits):
    """``bits`` with every set bit but the lowest cleared (0 when none is set)."""
    bits = Value.cast(bits)
    return Cat(bits[index] & ~bits[:index].any() if index else bits[0]
               for index in range(len(bits)))


def one_hot_index(one_hot):
    """The index of the set bit of ``one_hot`` (0 when none is set), in
    ``max(1, ceil(log2(len)))`` bits."""
    one_hot = Value.cast(one_hot)
    count = len(one_hot)
    bits = []
    for bit in range(max(1, (count - 1).bit_length())):
        ones = [one_hot[index] for index in range(count) if (index >> bit) & 1]
        bits.append(Cat(*ones).any() if ones else C(0, 1))
    return Cat(*bits)


def one_hot_select(one_hot, values):
    """The element of ``values`` that ``one_hot`` picks (0 when none is set), as wide as
    the widest element."""
    one_hot = Value.cast(one_hot)
    if len(one_hot) != len(values):
        raise ValueError(f"a {len(one_hot)}-bit one-hot vector cannot select among "
                         f"{len(values)} values")
    result = C(0, 1)
    for index, value in enumerate(values):
        value = Value.cast(value)
        result = result | (value & one_hot[index].replicate(len(value)))
    return result
