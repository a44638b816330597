"""The stream rule (:mod:`amaranth.lib.stream`) as a formal property: a transfer once
offered stays offered, unchanged, until it is taken. ``Assert`` it on a stream a design
drives, ``Assume`` it on one its environment drives."""

from amaranth.hdl import Assert, Signal, Value


__all__ = ["stream_rules"]


def stream_rules(m, stream, what, *, rule=Assert, when=1):
    """Add the rule for ``stream`` (its transfers called ``what`` in the message) to ``m``;
    ``when``, a condition on the cycle's offer, limits it to the transfers the design
    promises it for (an ordering station holds its ordered atomics, not every op)."""
    name = what.replace(" ", "_")
    waiting = Signal(name=f"{name}_waiting")
    offered = Signal.like(stream.payload, name=f"{name}_offered")
    m.d.sync += [waiting.eq(stream.valid & ~stream.ready & when), offered.eq(stream.payload)]
    m.d.comb += rule(~waiting | (stream.valid & (Value.cast(stream.payload) == Value.cast(offered))),
                     f"an offered {what} was withdrawn or changed before it was taken")
