"""Stream-timing checks shared by the FP unit tests, in Amaranth's simulator: a pipelined
unit at full rate.

Operands are given by record field (``a``, ``b``, ``c``, ``op``), each a sequence with one
entry per record; a field left out is 0 in every record."""

import numpy as np
from amaranth.sim import Simulator

from matndp.hw.fp.units import operations_of


__all__ = ["interleaved", "results_at_full_rate"]


def interleaved(unit, expected):
    """The codes of ``unit``'s operations taken in turn, one per record, and each
    record's expected result: ``expected`` maps each operation's name to the results of
    every record under that operation."""
    operations = operations_of(unit)
    count = len(next(iter(expected.values())))
    chosen = [operations[index % len(operations)] for index in range(count)]
    return ([operation.code for operation in chosen],
            [int(np.asarray(expected[operation.name])[index])
             for index, operation in enumerate(chosen)])


def _records(fields):
    # Operand words as integers; the op field as given (a member of the unit's enum).
    count = len(fields["a"])
    return [{"a": int(fields["a"][index]),
             **{name: int(fields[name][index]) if name in fields else 0 for name in "bc"},
             "op": fields["op"][index] if "op" in fields else 0}
            for index in range(count)]


def _simulate(unit, bench):
    simulator = Simulator(unit)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()


def results_at_full_rate(unit, **fields):
    """The results of pipelined ``unit`` with a record offered every cycle and the result
    always taken, after asserting that the unit never stalls and that each result appears
    ``LATENCY`` cycles after its record."""
    records = _records(fields)
    offered = []

    async def bench(ctx):
        ctx.set(unit.result.ready, 1)
        for cycle in range(len(records) + unit.LATENCY + 2):
            feeding = cycle < len(records)
            ctx.set(unit.operands.valid, feeding)
            if feeding:
                ctx.set(unit.operands.payload, records[cycle])
            _, _, ready, valid, payload = await ctx.tick().sample(
                unit.operands.ready, unit.result.valid, unit.result.payload)
            assert ready, f"stalled in cycle {cycle} with the result taken"
            if valid:
                offered.append((cycle, payload))

    _simulate(unit, bench)
    assert [cycle for cycle, _ in offered] == \
        [index + unit.LATENCY for index in range(len(records))]
    return [payload for _, payload in offered]
