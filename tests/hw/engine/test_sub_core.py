"""A sub-core with its execution units, driven directly: programs packed from the ISA's
layout, µthreads spawned by the testbench, memory and scratchpad answered by Python
models with random latency and back-pressure. Results are checked against numpy and the
FP golden model, computed from the kernels' meaning, not from the RTL."""

import dataclasses
import random

import numpy as np
import pytest
from amaranth.hdl import Elaboratable, Module
from amaranth.lib.wiring import connect

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.engine.convert import VectorConvert
from matndp.hw.engine.divide import VectorDivide
from matndp.hw.engine.fma_lanes import FMALanes
from matndp.hw.engine.isa import Opcode
from matndp.hw.engine.layouts import ErrorCause, ThreadKind, order_bits
from matndp.hw.engine.reduce import VectorReduce
from matndp.hw.engine.sub_core import SubCore
from matndp.hw.engine.vector_misc import VectorMisc
from matndp.sim.golden.fp import reference

from .encode import arg, f32, imm, instruction as I, special, v, x
from ..streams import shared, simulate


CONFIG = NDPConfig(engine=EngineConfig(slots=8, instruction_words=256, argument_blocks=4))
LANES = CONFIG.lanes
SECTOR = CONFIG.sector_bytes
BASE = 0x10_0000
OUT = 0x20_0000


class CoreBench(Elaboratable):
    def __init__(self, config):
        self.core = SubCore(config)
        self.units = {"fma": FMALanes(config), "vector": VectorMisc(config),
                      "divide": VectorDivide(config), "reduce": VectorReduce(config),
                      "convert": VectorConvert(config)}

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = self.core
        for name, unit in self.units.items():
            m.submodules[name] = unit
            connect(m, getattr(self.core, name), unit)
        return m


def _vector_bytes(words):
    return np.asarray(words, dtype=np.uint32).tobytes()


class Models:
    """Memory (a byte dict) and scratchpad, answering in random order after random delays."""

    def __init__(self, seed, memory=None):
        self.rng = random.Random(seed)
        self.memory = dict(memory or {})
        self.scratchpad = {}
        self.stores = []
        self.atomics = []

    def read(self, address, length):
        return bytes(self.memory.get(address + i, 0) for i in range(length))

    def write(self, address, data, mask):
        for i, byte in enumerate(data):
            if mask >> i & 1:
                self.memory[address + i] = byte

    def memory_answer(self, op):
        opcode, address = Opcode(op.opcode), int(op.addr)
        sector = address - address % SECTOR
        words = [int(op.data[lane]) for lane in range(LANES)]
        if opcode == Opcode.VLD:
            return np.frombuffer(self.read(sector, SECTOR), dtype=np.uint32).tolist()
        if opcode == Opcode.LW:
            return [int(np.frombuffer(self.read(address, 4), dtype=np.uint32)[0])] + [0] * (LANES - 1)
        if opcode == Opcode.SW:
            self.write(address, _vector_bytes(words)[address % SECTOR:][:4], 0xF)
        else:
            mask = (1 << SECTOR) - 1 if opcode == Opcode.VST else int(op.mask)
            self.write(sector, _vector_bytes(words), mask)
        self.stores.append((opcode, address))
        return [0] * LANES

    def scratchpad_answer(self, op):
        opcode, address = Opcode(op.opcode), int(op.addr)
        old = np.array(self.scratchpad.get(address, [0] * LANES), dtype=np.uint32)
        b = np.array([int(op.b[lane]) for lane in range(LANES)], dtype=np.uint32)
        c = np.array([int(op.c[lane]) for lane in range(LANES)], dtype=np.uint32)
        if opcode == Opcode.SLD:
            return old.tolist()
        new = {Opcode.SST: lambda: c, Opcode.SAMOADD: lambda: reference("add", old, c),
               Opcode.SAMOMAX: lambda: reference("max", old, c),
               Opcode.SAMOFMA: lambda: reference("fma", b, c, old)}[opcode]()
        self.scratchpad[address] = new.tolist()
        if opcode != Opcode.SST:
            self.atomics.append((int(op.entry), int(op.release)))
        return [0] * LANES


class StationModel:
    """The ordering station as the sub-core sees it: an ordered entry's atomics applied
    in sequence order, each µthread's in the order it sent them; a release (an op's, or
    a direct one) hands the turn on."""

    def __init__(self, entries):
        self.turn = [0] * entries
        self.waiting = {}           # (entry, seq) -> ops in arrival order

    def take(self, op):
        """Queue ``op``; return the ops it lets through now, in order."""
        entry = int(op.entry)
        self.waiting.setdefault((entry, int(op.seq)), []).append(op)
        return self._drain(entry)

    def release(self, entry):
        """A direct release; return the ops it lets through."""
        assert not self.waiting.get((entry, self.turn[entry] % (1 << order_bits(CONFIG)))), \
            "a direct release while the µthread still has queued atomics"
        self.turn[entry] += 1
        return self._drain(entry)

    def _drain(self, entry):
        ready = []
        while True:
            key = (entry, self.turn[entry] % (1 << order_bits(CONFIG)))
            queue = self.waiting.get(key, [])
            if not queue:
                return ready
            op = queue.pop(0)
            ready.append(op)
            if op.release:
                self.turn[entry] += 1

    def holding(self, slots):
        bits = 0
        for ops in self.waiting.values():
            for op in ops:
                bits |= 1 << (int(op.thread) % slots)
        return bits


def run_core(program, events, *, args=(), seed=1, memory=None, pressure=0.3, watchdog=1 << 20,
             entry_config=None, cycles=20000, stop_entries=0, config=CONFIG):
    """Run ``events`` (dicts: entry, offset, data, and optionally pc, seq, ordered) through a
    sub-core holding ``program``; return the models, the retires and the errors."""
    bench = shared(CoreBench, config)
    core = bench.core
    models = Models(seed, memory)
    retires, errors = [], []
    state = {"done": False}

    async def loader_and_spawner(ctx):
        for address, word in enumerate(program):
            ctx.set(core.imem_write, {"addr": address, "data": word, "en": 3})
            await ctx.tick()
        for address, word in enumerate(args):
            ctx.set(core.args_write, {"addr": address, "data": word, "en": 3})
            await ctx.tick()
        ctx.set(core.imem_write.en, 0)
        ctx.set(core.args_write.en, 0)
        ctx.set(core.window_base, 0)
        ctx.set(core.window_end, 1 << config.addr_width)
        ctx.set(core.watchdog, watchdog)
        ctx.set(core.stopped, stop_entries)
        rng = random.Random(seed + 10)
        turns = {}
        for number, event in enumerate(events):
            while True:
                free = ctx.get(core.free)
                if free and not (pressure and rng.random() < pressure):
                    break
                await ctx.tick()
            slot = (free & -free).bit_length() - 1
            data = event.get("data", [0] * LANES)
            ctx.set(core.spawn.payload, {
                "slot": slot, "kind": event.get("kind", ThreadKind.MAIN), "pc": event.get("pc", 0),
                "entry": event.get("entry", 0), "arg_block": event.get("arg_block", 0),
                "seq": event.get("seq", number), "ordered": event.get("ordered", 0),
                "offset": event.get("offset", 0), "addr": BASE + event.get("offset", 0),
                "mask": event.get("mask", (1 << SECTOR) - 1), "write": 1,
                "data": [int(w) for w in data]})
            ctx.set(core.spawn.valid, 1)
            await ctx.tick()
            ctx.set(core.spawn.valid, 0)
        while len(retires) < len(events):
            await ctx.tick()
        state["done"] = True

    async def units_and_observers(ctx):
        rng = random.Random(seed + 20)
        pending = {"memory": [], "scratchpad": []}
        station = StationModel(config.trigger.filter_entries)
        through = []
        ctx.set(core.turn, station.turn)

        def answer(name, op, value):
            delay = rng.randrange(1, 30) if pressure else 1
            pending[name].append((cycle + delay, int(op.thread) % config.engine.slots, value))
        cycle = 0
        while not state["done"]:
            cycle += 1
            ops = {"memory": (core.memory_ops, core.memory_done, models.memory_answer),
                   "scratchpad": (core.scratchpad_ops, core.scratchpad_done, models.scratchpad_answer)}
            readies = {}
            offers = {}
            for name, (port, done, _) in ops.items():
                readies[name] = not (pressure and rng.random() < pressure)
                ctx.set(port.ready, readies[name])
                ready_now = [item for item in pending[name] if item[0] <= cycle]
                if ready_now:
                    item = rng.choice(ready_now)
                    offers[name] = item
                    ctx.set(done.payload, {"slot": item[1], "value": item[2], "error": 0})
                    ctx.set(done.valid, 1)
                else:
                    ctx.set(done.valid, 0)
            samples = await ctx.tick().sample(
                core.memory_ops.valid, core.memory_ops.payload, core.memory_done.ready,
                core.scratchpad_ops.valid, core.scratchpad_ops.payload, core.scratchpad_done.ready,
                core.retire_valid, core.retire, core.error_valid, core.error, core.release)
            (_, _, mvalid, mop, mdone_ready, svalid, sop, sdone_ready, retire_valid, retire,
             error_valid, error, release) = samples
            for name, valid, op, done_ready in (("memory", mvalid, mop, mdone_ready),
                                                ("scratchpad", svalid, sop, sdone_ready)):
                if name in offers and done_ready:
                    pending[name].remove(offers[name])
                if valid and readies[name]:
                    if name == "scratchpad" and op.ordered:
                        through.extend(station.take(op))
                    else:
                        assert not (name == "scratchpad" and op.posted), "an unordered op posted"
                        value = ops[name][2](op)
                        if op.posted:       # a store that waits for no answer
                            assert Opcode(op.opcode) in (Opcode.VST, Opcode.VSTM, Opcode.SW)
                        else:
                            answer(name, op, value)
            for entry in range(config.trigger.filter_entries):
                if release >> entry & 1:
                    through.extend(station.release(entry))
            for op in through:
                value = models.scratchpad_answer(op)
                if not op.posted:
                    answer("scratchpad", op, value)
            through.clear()
            ctx.set(core.turn, [turn % (1 << order_bits(config)) for turn in station.turn])
            ctx.set(core.holding, station.holding(config.engine.slots))
            for port in range(2):
                if retire_valid >> port & 1:
                    retires.append((int(retire[port].entry), int(retire[port].error)))
                if error_valid >> port & 1:
                    errors.append((int(error[port].entry), int(error[port].pc),
                                   ErrorCause(error[port].cause)))

    simulate(bench, loader_and_spawner, units_and_observers, cycles=cycles)
    return models, retires, errors


def _random_data(rng, count):
    return (rng.standard_normal((count, LANES)) * 4).astype(np.float32).view(np.uint32)


def _stored_vectors(models, base, count):
    return np.frombuffer(models.read(base, count * SECTOR), dtype=np.uint32).reshape(count, LANES)


RELU = [
    I(Opcode.VMAX, 1, special("DATA"), imm(), immediate=f32(0.0)),
    I(Opcode.ADD, 1, arg(0), special("OFFSET")),
    I(Opcode.VST, 0, x(1), x(0), v(1), exit=True),
]


ANSWERED_STORES = dataclasses.replace(
    CONFIG, engine=dataclasses.replace(CONFIG.engine, posted_stores=False))


@pytest.mark.parametrize("pressure", [pytest.param(0.0, marks=pytest.mark.slow), 0.3])
@pytest.mark.parametrize("config", [CONFIG, ANSWERED_STORES],
                         ids=["posted-stores", "answered-stores"])
def test_relu_on_triggering_data(pressure, config):
    rng = np.random.default_rng(1)
    data = _random_data(rng, 40)
    events = [{"offset": i * SECTOR, "data": data[i]} for i in range(len(data))]
    models, retires, errors = run_core(RELU, events, args=[OUT], pressure=pressure, seed=2,
                                       config=config)
    assert errors == []
    assert retires == [(0, 0)] * len(events)
    expected = reference("max", data.reshape(-1), np.zeros(data.size, dtype=np.uint32))
    assert np.array_equal(_stored_vectors(models, OUT, len(data)).reshape(-1), expected)


def test_axpy_loads_the_other_operand():
    """y = alpha * x + y, triggered by writes of x, y loaded from memory."""
    rng = np.random.default_rng(3)
    xs, ys = _random_data(rng, 24), _random_data(rng, 24)
    memory = {OUT + i: byte for i, byte in enumerate(ys.tobytes())}
    alpha = f32(0.75)
    program = [
        I(Opcode.ADD, 1, arg(0), special("OFFSET")),
        I(Opcode.VLD, 2, x(1), x(0)),
        I(Opcode.VFMA, 3, special("DATA"), arg(1), v(2)),
        I(Opcode.VST, 0, x(1), x(0), v(3), exit=True),
    ]
    events = [{"offset": i * SECTOR, "data": xs[i]} for i in range(len(xs))]
    models, retires, errors = run_core(program, events, args=[OUT, alpha], memory=memory, seed=4)
    assert errors == []
    expected = reference("fma", xs.reshape(-1), np.full(xs.size, alpha, dtype=np.uint32),
                         ys.reshape(-1))
    assert np.array_equal(_stored_vectors(models, OUT, len(xs)).reshape(-1), expected)


TWO_VECTOR_PORTS = dataclasses.replace(
    CONFIG, engine=dataclasses.replace(CONFIG.engine, vector_read_ports=2))


@pytest.mark.parametrize("config", [CONFIG, TWO_VECTOR_PORTS],
                         ids=["three-vector-ports", "two-vector-ports"])
def test_vector_registers_as_third_operands(config):
    """Multiply-adds whose third operand is a vector register, their µthreads interleaved
    with others' instructions that read vector registers as first and second operands:
    with two read ports the third is read a cycle late, through the first port, which the
    instruction picked after it must not find taken."""
    rng = np.random.default_rng(11)
    data = _random_data(rng, 48)
    alpha = f32(1.5)
    program = [
        I(Opcode.ADD, 1, arg(0), special("OFFSET")),
        I(Opcode.VMUL, 2, special("DATA"), special("DATA")),
        I(Opcode.VADD, 3, special("DATA"), arg(1)),
        I(Opcode.VFMA, 4, v(3), v(2), v(3)),
        I(Opcode.VSUB, 5, v(4), v(2)),
        I(Opcode.VFMA, 6, v(5), v(3), v(2)),
        I(Opcode.VST, 0, x(1), x(0), v(6), exit=True),
    ]
    events = [{"offset": i * SECTOR, "data": data[i]} for i in range(len(data))]
    models, retires, errors = run_core(program, events, args=[OUT, alpha], seed=12,
                                       config=config)
    assert errors == []
    d = data.reshape(-1)
    squares = reference("mul", d, d)
    shifted = reference("add", d, np.full(d.size, alpha, dtype=np.uint32))
    fused = reference("fma", shifted, squares, shifted)
    expected = reference("fma", reference("sub", fused, squares), shifted, squares)
    assert np.array_equal(_stored_vectors(models, OUT, len(data)).reshape(-1), expected)


def test_loop_and_scalar_store():
    """A counted loop: x1 counts to the argument, then the count is stored as a word."""
    program = [
        I(Opcode.ADD, 1, x(0), x(0)),
        I(Opcode.ADD, 1, x(1), imm(), immediate=1),                 # 1: loop
        I(Opcode.BNE, 0, x(1), arg(0), immediate=-1),
        I(Opcode.ADD, 2, arg(1), special("OFFSET")),
        I(Opcode.MUL, 3, x(1), special("SEQ")),
        I(Opcode.SW, 0, x(2), x(0), x(3), exit=True),
    ]
    events = [{"offset": 4 * i, "seq": i} for i in range(12)]
    models, retires, errors = run_core(program, events, args=[17, OUT], seed=5)
    assert errors == []
    words = np.frombuffer(models.read(OUT, 4 * 12), dtype=np.uint32)
    assert words.tolist() == [17 * i for i in range(12)]


def test_ordered_atomics_follow_the_sequence():
    """µthreads spawned with sequence numbers; their scratchpad adds must reach the
    scratchpad in sequence order although they run interleaved."""
    rng = np.random.default_rng(7)
    data = _random_data(rng, 30)
    program = [
        I(Opcode.SAMOADD, 0, arg(0), x(0), special("DATA")),
        I(Opcode.VMUL, 1, special("DATA"), special("DATA")),
        I(Opcode.SAMOADD, 0, arg(0), x(0), v(1), immediate=SECTOR, release=True, exit=True),
    ]
    events = [{"offset": i * SECTOR, "data": data[i], "seq": i, "ordered": 1} for i in range(30)]
    models, retires, errors = run_core(program, events, args=[0], seed=8)
    assert errors == []
    total = np.zeros(LANES, dtype=np.uint32)
    squares = np.zeros(LANES, dtype=np.uint32)
    for row in data:
        total = reference("add", total, row)
        squares = reference("add", squares, reference("mul", row, row))
    assert models.scratchpad[0] == total.tolist()
    assert models.scratchpad[SECTOR] == squares.tolist()


def test_an_ordered_thread_ending_without_an_atomic_keeps_its_place():
    """Odd µthreads post one atomic and end with a plain ``exit``: the end waits until the
    posted atomic has gone through and it is the µthread's turn, then hands the turn on."""
    rng = np.random.default_rng(9)
    data = _random_data(rng, 24)
    program = [
        I(Opcode.SAMOADD, 0, arg(0), x(0), special("DATA")),
        I(Opcode.AND, 1, special("SEQ"), imm(), immediate=1),
        I(Opcode.BNE, 0, x(1), x(0), immediate=2),
        I(Opcode.SAMOADD, 0, arg(0), x(0), special("DATA"), immediate=SECTOR, release=True,
          exit=True),
        I(Opcode.EXIT),
    ]
    events = [{"offset": i * SECTOR, "data": data[i], "seq": i, "ordered": 1}
              for i in range(len(data))]
    models, retires, errors = run_core(program, events, args=[0], seed=11)
    assert errors == []
    assert retires == [(0, 0)] * len(events)
    total = np.zeros(LANES, dtype=np.uint32)
    even = np.zeros(LANES, dtype=np.uint32)
    for index, row in enumerate(data):
        total = reference("add", total, row)
        if index % 2 == 0:
            even = reference("add", even, row)
    assert models.scratchpad[0] == total.tolist()
    assert models.scratchpad[SECTOR] == even.tolist()


@pytest.mark.parametrize("program, cause, pc", [
    ([0], ErrorCause.ILLEGAL_INSTRUCTION, 0),
    ([I(Opcode.VLD, 1, arg(0), x(0), immediate=4, exit=True)], ErrorCause.MISALIGNED, 0),
    ([I(Opcode.NOP), I(Opcode.SLD, 1, x(0), x(0), immediate=CONFIG.engine.scratchpad_bytes,
                       exit=True)], ErrorCause.SCRATCHPAD_RANGE, 1),
    ([I(Opcode.JUMP, immediate=0)], ErrorCause.WATCHDOG, 0),
])
def test_errors_end_the_thread_and_name_entry_pc_and_cause(program, cause, pc):
    events = [{"entry": 3, "offset": 0}]
    _, retires, errors = run_core(program, events, args=[OUT], watchdog=200, seed=9)
    assert retires == [(3, 1)]
    assert errors == [(3, pc, cause)]


def test_threads_of_a_stopped_entry_end_without_running():
    events = [{"entry": 2, "offset": i * SECTOR, "data": [0] * LANES} for i in range(3)]
    models, retires, errors = run_core(RELU, events, args=[OUT], stop_entries=1 << 2, seed=10)
    assert retires == [(2, 1)] * 3 and errors == [] and models.stores == []


@pytest.mark.parametrize("config, index, error, message", [
    (None, 0, TypeError, "config must be an NDPConfig with an engine"),
    (NDPConfig(engine=None), 0, TypeError, "config must be an NDPConfig with an engine"),
    (CONFIG, 1, ValueError, "index must be a sub-core of the 1"),
    (CONFIG, True, ValueError, "index must be a sub-core"),
])
def test_constructor_errors(config, index, error, message):
    with pytest.raises(error, match=message):
        SubCore(config, index)
