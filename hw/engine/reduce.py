"""Horizontal reductions, ``vredsum`` and ``vredmax``, in the ISA's pairwise tree order.

Level 0 combines lanes (0, 1), (2, 3), …; each later level combines the previous level's
results the same way, until one value is left, which every lane of the result receives.
The tree is built as it is specified: a level of adders (and one of maximum units) per
level of the tree, lanes / 2 in the first, one in the last, each fully pipelined, so an
instruction enters every cycle. A finalizer's µthreads reduce their rows at once, and one
unit that took an instruction at a time (``lanes`` − 1 additions one after the other, each
level waiting for the one before) held each of them about 30 cycles.

The units of one level are driven alike (the same ``valid``, the same ``ready``), so they
advance together and the first one's handshake stands for the level's. The slot of each
instruction waits in a queue, in instruction order, with the tree it is in; a result is
taken from the tree the queue's head names, so results leave in instruction order (a
result of the shallower maximum tree waits there). An instruction also enters only while
the other tree is empty.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib.fifo import SyncFIFO

from ..fp.addsub import FPAddSub
from ..fp.minmax import FPMinMax
from ..fp.opcodes import AddSubOp, MinMaxOp
from .isa import Opcode
from .layouts import VectorUnit
from .serial_reduce import SerialReduce


__all__ = ["VectorReduce", "reduce_unit"]


def reduce_unit(config):
    """The reduce unit of ``config``'s engine: the tree, or with ``reduce_tree`` False
    :class:`~.serial_reduce.SerialReduce`."""
    return (VectorReduce if config.engine.reduce_tree else SerialReduce)(config)


class VectorReduce(VectorUnit):
    @property
    def levels(self):
        """Levels of the tree: log2(lanes)."""
        return (self.config.lanes - 1).bit_length()

    def cycles_per_instruction(self, opcode):
        """Cycles from taking an instruction to offering its result, results taken at once."""
        latency = FPAddSub.LATENCY if opcode == Opcode.VREDSUM else FPMinMax.LATENCY
        return self.levels * latency

    def elaborate(self, platform):
        m = Module()
        lanes = self.config.lanes
        request = self.request.payload
        summing = request.opcode == Opcode.VREDSUM

        # The slots in flight, in instruction order, and which tree they are in.
        depth = self.levels * FPAddSub.LATENCY
        m.submodules.slots = slots = SyncFIFO(width=len(request.slot) + 1, depth=depth)
        in_sum_tree = Signal()
        kind_ok = (slots.level == 0) | (in_sum_tree == summing)

        heads, lasts = {}, {}
        for name, unit_class, code, mine in (("sum", FPAddSub, AddSubOp.ADD, summing),
                                             ("max", FPMinMax, MinMaxOp.MAX, ~summing)):
            inputs = [request.a[lane] for lane in range(lanes)]
            previous = None
            for level in range(self.levels):
                units = [unit_class() for _ in range(len(inputs) // 2)]
                for index, unit in enumerate(units):
                    m.submodules[f"{name}{level}_{index}"] = unit
                    m.d.comb += [unit.operands.payload.a.eq(inputs[2 * index]),
                                 unit.operands.payload.b.eq(inputs[2 * index + 1]),
                                 unit.operands.payload.op.eq(code)]
                if previous is None:
                    heads[name] = units[0]
                    valid = self.request.valid & mine & slots.w_rdy & kind_ok
                else:
                    valid = previous[0].result.valid
                    for unit in previous:
                        m.d.comb += unit.result.ready.eq(units[0].operands.ready)
                for unit in units:
                    m.d.comb += unit.operands.valid.eq(valid)
                inputs = [unit.result.payload for unit in units]
                previous = units
            lasts[name] = previous[0]

        head_summing = slots.r_data[-1]
        last_valid = Mux(head_summing, lasts["sum"].result.valid, lasts["max"].result.valid)
        value = Mux(head_summing, lasts["sum"].result.payload, lasts["max"].result.payload)
        taken = self.result.valid & self.result.ready
        m.d.comb += [
            self.request.ready.eq(slots.w_rdy & kind_ok &
                                  Mux(summing, heads["sum"].operands.ready,
                                      heads["max"].operands.ready)),
            slots.w_data.eq(Cat(request.slot, summing)),
            slots.w_en.eq(self.request.valid & self.request.ready),
            self.result.valid.eq(slots.r_rdy & last_valid),
            self.result.payload.slot.eq(slots.r_data[:-1]),
            self.result.payload.value.eq(Cat(*(value for _ in range(lanes)))),
            lasts["sum"].result.ready.eq(self.result.ready & head_summing),
            lasts["max"].result.ready.eq(self.result.ready & ~head_summing),
            slots.r_en.eq(taken),
        ]
        with m.If(slots.w_en):
            m.d.sync += in_sum_tree.eq(summing)
        return m
