"""Field behaviours: what stands behind one field of a register file.

Each behaviour is a component with a ``port`` (:class:`FieldPort`) facing the register file
and ports of its own facing the hardware, which attaches it to a field it owns
(:meth:`~.register_file.RegisterFile.attach`). ``RW`` and ``CONST`` fields need none: the
register file stores the one and reads the other's value from the map.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .map import Access


__all__ = ["FieldPort", "FieldAction", "Status", "Counter", "StickyFlag", "ClearableStatus"]


class FieldPort(wiring.PureInterface):
    """The connection between a register file and one field, as the register file sees it.

    ``r_data`` is what the bus reads, every cycle. For fields a bus write reaches,
    ``w_stb`` pulses for one cycle with ``w_data`` the field's bits of the written word.
    """

    class Signature(wiring.Signature):
        def __init__(self, width, access):
            if not isinstance(access, Access):
                raise TypeError(f"access must be an Access, not {access!r}")
            self.width = width
            self.access = access
            members = {"r_data": In(width)}
            if access.writable:
                members.update(w_stb=Out(1), w_data=Out(width))
            super().__init__(members)

        def __eq__(self, other):
            return (isinstance(other, FieldPort.Signature) and
                    (other.width, other.access) == (self.width, self.access))

        def __repr__(self):
            return f"FieldPort.Signature({self.width}, {self.access})"

        def create(self, *, path=None, src_loc_at=0):
            return FieldPort(self, path=path, src_loc_at=1 + src_loc_at)


def _check_width(kind, width):
    if not isinstance(width, int) or isinstance(width, bool) or width < 1:
        raise ValueError(f"{kind}: width must be a positive int, not {width!r}")


class FieldAction(wiring.Component):
    """A behaviour for a ``width``-bit field of kind ``access``; ``members`` are its
    hardware-facing ports."""

    def __init__(self, width, access, members=()):
        _check_width(type(self).__name__, width)
        super().__init__({"port": In(FieldPort.Signature(width, access)), **dict(members)})

    @property
    def width(self):
        return self.port.signature.width

    @property
    def access(self):
        return self.port.signature.access


class Status(FieldAction):
    """An ``RO`` field: reads ``status``, which hardware drives."""

    def __init__(self, width):
        _check_width("Status", width)
        super().__init__(width, Access.RO, {"status": In(width)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.port.r_data.eq(self.status)
        return m


class Counter(FieldAction):
    """A wrap-around event counter that the bus can load (a ``LOAD`` field).

    ``increment`` (``increment_width`` bits) is added to ``count`` every cycle, through a
    register stage: an increment presented in cycle *t* reaches ``count`` at the end of cycle
    *t + 1*, and the adder sees a flop instead of the logic that produced the increment.

    A bus write in cycle *t* loads the written value; the increment pending in the stage
    (that of cycle *t - 1*) is dropped, the one of cycle *t* is added afterwards. So after a
    load the count is the written value plus the increments of the load's cycle and later:
    the load replaces exactly what happened before it.
    """

    def __init__(self, width, *, increment_width=1):
        _check_width("Counter", width)
        if not isinstance(increment_width, int) or not 1 <= increment_width <= width:
            raise ValueError(f"Counter: increment_width must be in 1..{width}, "
                             f"not {increment_width!r}")
        super().__init__(width, Access.LOAD, {"increment": In(increment_width), "count": Out(width)})

    def elaborate(self, platform):
        m = Module()
        pending = Signal.like(self.increment)
        m.d.sync += pending.eq(self.increment)
        with m.If(self.port.w_stb):
            m.d.sync += self.count.eq(self.port.w_data)
        with m.Else():
            m.d.sync += self.count.eq(self.count + pending)
        m.d.comb += self.port.r_data.eq(self.count)
        return m


class StickyFlag(FieldAction):
    """Sticky flags (a ``W1C`` field): a bit of ``set`` sets its flag from the next cycle on;
    a bus write clears the flags written as 1. Setting wins over clearing in the same
    cycle, so an event in the cycle of the clearing write is not lost."""

    def __init__(self, width=1):
        _check_width("StickyFlag", width)
        super().__init__(width, Access.W1C, {"set": In(width), "flags": Out(width)})

    def elaborate(self, platform):
        m = Module()
        cleared = Mux(self.port.w_stb, self.port.w_data, 0)
        m.d.sync += self.flags.eq((self.flags & ~cleared) | self.set)
        m.d.comb += self.port.r_data.eq(self.flags)
        return m


class ClearableStatus(FieldAction):
    """A ``W1C`` field whose flags hardware keeps: reads ``status``; a bus write pulses
    ``clear`` with the bits written as 1, for the hardware to clear them (a latched error,
    for one, that records nothing new until it is cleared)."""

    def __init__(self, width=1):
        _check_width("ClearableStatus", width)
        super().__init__(width, Access.W1C, {"status": In(width), "clear": Out(width)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [
            self.port.r_data.eq(self.status),
            self.clear.eq(Mux(self.port.w_stb, self.port.w_data, 0)),
        ]
        return m
