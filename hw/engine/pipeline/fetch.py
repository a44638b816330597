"""FETCH: the instruction word, read from the instruction memory at the pc PICK chose,
arrives and is registered with its slot and pc."""

from amaranth.hdl import Module
from amaranth.lib.wiring import In, Out

from ..component import EngineComponent
from ..isa import instruction_layout
from .layouts import decode_layout, fetch_layout, stage_signature


__all__ = ["Fetch"]


class Fetch(EngineComponent):
    """Ports:

    i:     FETCH's record (from PICK).
    word:  the instruction memory's read data.
    o:     DECODE's record, registered.
    """

    def __init__(self, config):
        self.config = config
        super().__init__({
            "i":    In(stage_signature(fetch_layout(config))),
            "word": In(instruction_layout()),
            "o":    Out(stage_signature(decode_layout(config))),
        })

    def elaborate(self, platform):
        m = Module()
        m.d.sync += [
            self.o.valid.eq(self.i.valid),
            self.o.payload.slot.eq(self.i.payload.slot),
            self.o.payload.pc.eq(self.i.payload.pc),
            self.o.payload.word.eq(self.word),
        ]
        return m
