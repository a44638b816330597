"""Control of a fully pipelined FP unit: one valid bit per stage and one enable shared by
all stages, so the whole pipeline advances or holds together.

The pipeline holds while its last stage has a result the consumer does not take, so
``operands.ready`` is one signal for every stage and no record is dropped or duplicated.
Bubbles are not squeezed out under back-pressure; that keeps the control to one gate.
"""

from amaranth.hdl import Cat, Signal, Value
from amaranth.lib import data


__all__ = ["Pipeline"]


class Pipeline:
    """Drive ``operands.ready`` and ``result.valid`` of a unit whose data path has
    ``latency`` register stages built with :meth:`register`."""

    def __init__(self, m, operands, result, latency):
        assert latency >= 1
        self.m = m
        self.latency = latency
        self.enable = Signal()
        valid = Signal(latency, name="stage_valid")
        m.d.comb += [
            self.enable.eq(~result.valid | result.ready),
            operands.ready.eq(self.enable),
            result.valid.eq(valid[-1]),
        ]
        with m.If(self.enable):
            m.d.sync += valid.eq(Cat(operands.valid, valid[:-1]))

    def register(self, value, name=None):
        """A pipeline register loaded with ``value`` whenever the pipeline advances."""
        if isinstance(value, data.View):
            stage = Signal(data.Layout.cast(value.shape()), name=name)
        else:
            value = Value.cast(value)
            stage = Signal(value.shape(), name=name)
        with self.m.If(self.enable):
            self.m.d.sync += stage.eq(value)
        return stage
