"""DECODE: the instruction word becomes its control (:class:`~..decoder.Decoder`), and the
reads of each source operand start: the slot's scalar and vector registers, the entry's
argument word, the triggering access's sector and scalars. Their data arrives in
OPERANDS."""

from amaranth.hdl import Cat, Module, unsigned
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from ..component import EngineComponent
from ..decoder import Decoder
from .layouts import (OPERAND_NAMES, argument_block_bits, decode_layout, operands_layout,
                      register_bits, stage_signature)


__all__ = ["Decode"]


class Decode(EngineComponent):
    """Ports:

    i:              DECODE's record (from FETCH).
    arg_block:      per slot, its entry's argument block.
    register_read:  per source operand, the register files' read address (slot, index).
    argument_read:  per source operand, the argument memory's read address (block, word).
    thread_read:    the slot whose triggering access is read.
    o:              OPERANDS's record, registered.
    """

    def __init__(self, config):
        self.config = config
        engine = config.engine
        operands = len(OPERAND_NAMES)
        super().__init__({
            "i":             In(stage_signature(decode_layout(config))),
            "arg_block":     In(data.ArrayLayout(unsigned(argument_block_bits(config)),
                                                 engine.slots)),
            "register_read": Out(data.ArrayLayout(unsigned(engine.slot_bits + register_bits()),
                                                  operands)),
            "argument_read": Out(data.ArrayLayout(unsigned(register_bits() +
                                                           argument_block_bits(config)),
                                                  operands)),
            "thread_read":   Out(engine.slot_bits),
            "o":             Out(stage_signature(operands_layout(config))),
        })

    def elaborate(self, platform):
        m = Module()
        record = self.i.payload
        m.submodules.decoder = decoder = Decoder()
        m.d.comb += decoder.instruction.eq(record.word)
        control = decoder.control
        for position, name in enumerate(OPERAND_NAMES):
            operand = getattr(control, name)
            m.d.comb += [
                self.register_read[position].eq(Cat(operand.index, record.slot)),
                self.argument_read[position].eq(Cat(operand.index,
                                                    self.arg_block[record.slot])),
            ]
        m.d.comb += self.thread_read.eq(record.slot)
        m.d.sync += [
            self.o.valid.eq(self.i.valid),
            self.o.payload.slot.eq(record.slot),
            self.o.payload.pc.eq(record.pc),
            self.o.payload.control.eq(control),
        ]
        return m
