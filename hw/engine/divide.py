"""Vector divide, square root and reciprocal square root on pipelined units.

``divide_units`` dividers and as many square-root units serve the lanes, each set as one
:class:`~..fp.lanes.FPLanes`: a vector passes through in ``lanes / divide_units`` groups
of lanes, one group a cycle, and the next instruction's groups follow at once, so
instructions stream through both pipelines. An instruction is taken whole with its first
group and its other groups are issued from a copy: DISPATCH offers an instruction for one
cycle and replays its µthread if it is not taken, so the next offer may be another
µthread's. ``vrsqrt`` is ``1 ÷ √a`` with both steps
correctly rounded: its groups pass the square-root units, then the dividers, as
``1.0 ÷`` the root.

Results leave in the order the instructions came in. A queue of tags (slot, and whether
the result comes from the square-root units) in instruction order tells the collector
which pipeline gives the next group; groups leaving the square-root units carry a flag
(a queue beside that pipeline) that sends a ``vrsqrt``'s groups on to the dividers. The
dividers then take groups from two places, and must take them in instruction order: a
``vdiv`` waits at issue while a ``vrsqrt``'s groups are still in the square-root units.
A pipeline whose next group the collector cannot take yet (another instruction's group
is due first) holds, which the other never waits for, so nothing deadlocks; so a ``vsqrt``
behind a ``vrsqrt`` enters at once but waits in the square-root units until the
``vrsqrt`` has left the dividers.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib.fifo import SyncFIFO

from ..fp.divide import FPDivide
from ..fp.lanes import FPLanes, LanesConfig
from ..fp.sqrt import FPSqrt
from .isa import Opcode
from .lane_groups import GroupCollect, GroupIssue
from .layouts import VectorUnit


__all__ = ["VectorDivide"]


_ONE = 0x3F80_0000


class VectorDivide(VectorUnit):
    @property
    def passes(self):
        """Groups of lanes a vector passes the units in: the cycles between instructions
        that stream through."""
        return self.config.lanes // self.config.divide_units

    def cycles_per_instruction(self, opcode):
        """Cycles from taking an instruction to offering its result, with results taken at
        once and the units free (for the engine's bounds). The instruction is taken as its
        first group enters the units, its last :attr:`passes` − 1 cycles later;
        instructions streaming through are taken :attr:`passes` cycles apart."""
        divide, root = FPDivide.LATENCY, FPSqrt.LATENCY
        return {Opcode.VDIV: divide, Opcode.VSQRT: root,
                Opcode.VRSQRT: root + divide}[opcode] + self.passes

    def elaborate(self, platform):
        m = Module()
        config = self.config
        units = config.divide_units
        passes = self.passes
        request, result = self.request, self.result

        m.submodules.dividers = dividers = FPLanes(LanesConfig(FPDivide, units))
        m.submodules.roots = roots = FPLanes(LanesConfig(FPSqrt, units))
        # Every instruction in flight has a tag: one per `passes` groups the pipelines
        # hold, one more being collected or offered, and one more because a full queue
        # takes no tag in the cycle it gives one. Likewise the flags: the square-root
        # pipeline holds at most LATENCY groups.
        in_flight = -(-(FPDivide.LATENCY + FPSqrt.LATENCY) // passes) + 2
        m.submodules.tags = tags = SyncFIFO(width=len(request.payload.slot) + 1, depth=in_flight)
        # Whether each group in the square-root units belongs to a vrsqrt.
        m.submodules.reciprocal_flags = flags = SyncFIFO(width=1, depth=FPSqrt.LATENCY + 1)

        # Issue: the groups of the instruction, one a cycle.
        issue = GroupIssue(m, request, passes, start_room=tags.w_rdy)
        current = issue.current
        opcode = current.opcode
        dividing = opcode == Opcode.VDIV
        reciprocal = opcode == Opcode.VRSQRT
        # vrsqrt groups in the square-root units, which a vdiv must not overtake.
        reciprocals_in_roots = Signal(range(FPSqrt.LATENCY + 1))
        no_reciprocals = reciprocals_in_roots == 0
        offer_divide = issue.offered & dividing & no_reciprocals
        offer_root = issue.offered & ~dividing & flags.w_rdy
        divide_room = no_reciprocals & dividers.operands.ready
        root_room = flags.w_rdy & roots.operands.ready
        issued = issue.issue(Mux(dividing, divide_room, root_room))
        m.d.comb += [
            tags.w_en.eq(issued & issue.first),
            tags.w_data.eq(Cat(current.slot, ~dividing & ~reciprocal)),
            roots.operands.valid.eq(offer_root),
            roots.operands.payload.a.as_value().eq(issue.lanes("a", units)),
            flags.w_en.eq(offer_root & roots.operands.ready),
            flags.w_data.eq(reciprocal),
        ]

        # Groups leaving the square-root units: a vrsqrt's on to the dividers as 1 ÷ root.
        forward = roots.result.valid & flags.r_data
        m.d.comb += [
            dividers.operands.valid.eq(forward | offer_divide),
            dividers.operands.payload.a.as_value().eq(Mux(
                forward, Cat(Const(_ONE, 32) for _ in range(units)),
                issue.lanes("a", units))),
            dividers.operands.payload.b.as_value().eq(Mux(
                forward, roots.result.payload,
                issue.lanes("b", units))),
        ]
        entering = offer_root & roots.operands.ready & reciprocal
        leaving = forward & dividers.operands.ready
        m.d.sync += reciprocals_in_roots.eq(reciprocals_in_roots + entering - leaving)

        # Collect: the groups of the oldest instruction, from the pipeline its tag names.
        collect = GroupCollect(m, result, config, passes, units)
        head_slot, head_from_roots = tags.r_data[:-1], tags.r_data[-1]
        from_roots = tags.r_rdy & head_from_roots & roots.result.valid & ~flags.r_data
        from_dividers = tags.r_rdy & ~head_from_roots & dividers.result.valid
        take = collect.room & (from_roots | from_dividers)
        m.d.comb += [
            roots.result.ready.eq(Mux(flags.r_data, dividers.operands.ready,
                                      collect.room & from_roots)),
            flags.r_en.eq(roots.result.valid & roots.result.ready),
            dividers.result.ready.eq(collect.room & from_dividers),
            tags.r_en.eq(take & collect.finished),
        ]
        collect.collect(take, Mux(head_from_roots, roots.result.payload, dividers.result.payload),
                        head_slot)
        return m
