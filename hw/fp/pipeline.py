"""Stream control shared by the FP units.

A fully pipelined unit (:class:`PipelinedUnit`) has one valid bit per stage and one enable
shared by all stages, so the whole pipeline advances or holds together. The pipeline
holds while its last stage has a result the consumer does not take, so
``operands.ready`` is one signal for every stage and no record is dropped or duplicated.
Bubbles are not squeezed out under back-pressure; that keeps the control to one gate.
"""

from amaranth.hdl import Cat, Module, Signal, Value
from amaranth.lib import data, wiring

from .interface import FPUnitSignature


__all__ = ["Pipeline", "PipelinedUnit"]


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

    def register_stage(self, prefix, values):
        """:meth:`register` for each entry of the dict ``values``; the registers, by the
        same keys, are named ``prefix`` + key."""
        return {name: self.register(value, prefix + name) for name, value in values.items()}


class PipelinedUnit(wiring.Component):
    """A fully pipelined FP unit: one result per cycle, ``LATENCY`` cycles from operand to
    result. A subclass sets ``OPS`` (its enum of hw/fp/opcodes.py) and ``LATENCY`` and
    builds its data path in :meth:`datapath`."""

    OPS = None
    LATENCY = None
    CYCLES_PER_RESULT = 1

    def __init__(self):
        super().__init__(FPUnitSignature(self.OPS))

    def elaborate(self, platform):
        m = Module()
        pipe = Pipeline(m, self.operands, self.result, self.LATENCY)
        m.d.comb += self.result.payload.eq(self.datapath(m, pipe, self.operands.payload))
        return m

    def datapath(self, m, pipe, record):
        """The register of the last of ``LATENCY`` stages built with ``pipe`` from the
        operand record ``record``."""
        raise NotImplementedError
