"""The scalar ALU in Amaranth's simulator against the ISA's 64-bit integer semantics
(docs/isa.md) written here in plain Python, on edge and random operands, with random
back-pressure on both sides."""

import random

import pytest

from matndp.hw.config import NDPConfig
from matndp.hw.engine.alu import ALU
from matndp.hw.engine.isa import Opcode

from ..streams import receive, send, simulate


CONFIG = NDPConfig()
MASK = (1 << 64) - 1


def _signed(value):
    return value - (1 << 64) if value >> 63 else value


SEMANTICS = {
    Opcode.ADD:  lambda a, b: (a + b) & MASK,
    Opcode.SUB:  lambda a, b: (a - b) & MASK,
    Opcode.AND:  lambda a, b: a & b,
    Opcode.OR:   lambda a, b: a | b,
    Opcode.XOR:  lambda a, b: a ^ b,
    Opcode.SHL:  lambda a, b: (a << (b & 63)) & MASK,
    Opcode.SHR:  lambda a, b: a >> (b & 63),
    Opcode.SRA:  lambda a, b: (_signed(a) >> (b & 63)) & MASK,
    Opcode.SLT:  lambda a, b: int(_signed(a) < _signed(b)),
    Opcode.SLTU: lambda a, b: int(a < b),
}
EDGES = [0, 1, 2, 63, 64, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, MASK, MASK - 1]


@pytest.mark.parametrize("pressure", [0.0, 0.4])
def test_every_operation_against_its_definition(pressure):
    rng = random.Random(17)
    operands = [(a, b) for a in EDGES for b in EDGES] + \
               [(rng.getrandbits(64), rng.choice([rng.getrandbits(64), rng.randrange(64)]))
                for _ in range(100)]
    requests, expected = [], []
    slots = 1 << CONFIG.engine.slot_bits
    for index, (a, b) in enumerate(operands):
        for opcode, definition in SEMANTICS.items():
            slot = (index + len(requests)) % slots
            requests.append({"slot": slot, "opcode": opcode, "a": a, "b": b})
            expected.append((slot, definition(a, b), opcode.name, a, b))
    dut = ALU(CONFIG)
    results = []

    async def source(ctx):
        await send(ctx, dut.request, requests, seed=3, idle=pressure)

    async def sink(ctx):
        await receive(ctx, dut.result, len(requests), seed=4, stall=pressure, into=results)

    simulate(dut, source, sink, cycles=4 * len(requests) + 100)
    wrong = [f"{name} {a:#x}, {b:#x}: {int(got.value):#x}, expected {value:#x}"
             for got, (slot, value, name, a, b) in zip(results, expected)
             if (int(got.slot), int(got.value)) != (slot, value)]
    assert len(results) == len(requests) and not wrong, "\n".join(wrong[:10])
