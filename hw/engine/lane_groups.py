"""A vector instruction passing fewer execution units than lanes, in groups of lanes.

A unit with ``units`` FP units for its lanes passes a vector through them in ``passes =
lanes / units`` groups of lanes, one group a cycle. DISPATCH offers an instruction for one
cycle and replays its µthread if it is not taken, so the next offer may be another
µthread's: :class:`GroupIssue` takes an instruction whole with its first group and issues
its other groups from a copy held meanwhile. :class:`GroupCollect` gathers the groups of
the oldest instruction, in order, into one vector and offers it on the unit's result
stream when its last group is in. The divide unit (:mod:`.divide`) and the FMA lanes
(:mod:`.fma_lanes`) are built from both.
"""

from amaranth.hdl import Mux, Signal

from .layouts import vector_layout


__all__ = ["GroupIssue", "GroupCollect"]


class GroupIssue:
    """The issue side in module ``m`` for the request stream ``request``.

    ``current`` is the instruction whose group ``group`` is issued this cycle (the offered
    one at its first group, the held copy after), for its narrow fields; its vector fields'
    groups come from :meth:`lanes`. ``offered``: there is a group to issue,
    given ``start_room`` (whether a new instruction may start, e.g. its queue of tags has
    room). The unit calls :meth:`issue` once with the condition of its taking the current
    group were it offered."""

    def __init__(self, m, request, passes, *, start_room):
        self.m = m
        self.request = request
        self.passes = passes
        self.group = Signal(range(max(passes, 2)))
        self.holding = Signal()
        self.held = Signal(request.payload.shape())
        self.current = Signal(request.payload.shape())
        m.d.comb += self.current.eq(Mux(self.holding, self.held.as_value(),
                                        request.payload.as_value()))
        self.first = self.group == 0
        self.last = self.group == passes - 1
        self.start_room = start_room
        self.offered = (self.holding | request.valid) & (~self.first | start_room)

    def issue(self, takes):
        """The unit takes the current group when it is offered and ``takes`` (which must not
        depend on the offer); the offered instruction is taken with its first group.
        Returns the condition of the group being taken.

        ``request.ready`` is worked out without ``request.valid``, so a sub-core's decision
        to dispatch does not run through the unit's choice of what to issue."""
        m = self.m
        issued = self.offered & takes
        with m.If(issued):
            m.d.sync += self.group.eq(Mux(self.last, 0, self.group + 1))
            if self.passes > 1:
                with m.If(self.first):
                    m.d.sync += [self.holding.eq(1), self.held.eq(self.request.payload)]
                with m.If(self.last):
                    m.d.sync += self.holding.eq(0)
        m.d.comb += self.request.ready.eq(~self.holding & self.start_room & takes)
        return issued

    def lanes(self, name, units):
        """The current group of the instruction's vector field ``name``: its ``units``
        lanes. The first group is the offered instruction's own, the others the held
        copy's, so no whole vector passes a choice between the two."""
        offered = getattr(self.request.payload, name).as_value()
        if self.passes == 1:
            return offered
        group_bits = 32 * units
        held = getattr(self.held, name).as_value().word_select(self.group, group_bits)
        return Mux(self.first, offered[:group_bits], held)

    def word(self, name, lane_in_group, units):
        """Lane ``lane_in_group`` of the current group of the vector field ``name``, in
        groups of ``units`` lanes."""
        return self.lanes(name, units)[32 * lane_in_group:32 * lane_in_group + 32]


class GroupCollect:
    """The collecting side in module ``m``, offering whole vectors on ``result``.

    ``room``: a group may be taken this cycle; ``finished``: the group taken is its
    instruction's last. The unit calls :meth:`collect` once."""

    def __init__(self, m, result, config, passes, units):
        self.m = m
        self.result = result
        self.units = units
        self.group = Signal(range(max(passes, 2)))
        self.collected = Signal(vector_layout(config))
        self.slot = Signal.like(result.payload.slot)
        self.complete = Signal()
        self.room = ~self.complete | result.ready
        self.finished = self.group == passes - 1
        self.passes = passes
        m.d.comb += [
            result.valid.eq(self.complete),
            result.payload.slot.eq(self.slot),
            result.payload.value.eq(self.collected),
        ]

    def collect(self, take, value, slot):
        """Take the group ``value`` when ``take``; ``slot`` is its instruction's."""
        m = self.m
        group_bits = 32 * self.units
        collected = self.collected.as_value()
        with m.If(self.result.ready):
            m.d.sync += self.complete.eq(0)
        with m.If(take):
            m.d.sync += [
                (collected if self.passes == 1 else
                 collected.word_select(self.group, group_bits)).eq(value),
                self.group.eq(Mux(self.finished, 0, self.group + 1)),
            ]
            with m.If(self.finished):
                m.d.sync += [self.complete.eq(1), self.slot.eq(slot)]
