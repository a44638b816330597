"""The engine alone (:class:`~matndp.hw.engine.engine.Engine`) running library kernels in
Amaranth's simulator, its memory port served by a Python model of the memory image with
random back-pressure, latency and reordering, the events arriving with random pauses.
Every output tensor must equal the instruction-set simulator's bit for bit, and the engine
must execute exactly the instructions the instruction-set simulator does.

The kernels cover the engine's paths: an element-wise kernel (with one and with two
sub-cores), an initializer loading what every µthread reads, a read-triggered kernel,
ordered scratchpad atomics with an initializer and a finalizer of one µthread per channel
group or row, and division and square root."""

import numpy as np
import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.engine.engine import Engine
from matndp.host.kernels.library import kernel
from matndp.host.kernels.library.iss_runner import prepare_on_iss, run_on_iss
from matndp.host.kernels.image import Section
from matndp.host.kernels.library.inputs import random_inputs

from .engine_runner import EngineEntry, run_engine


# What an engine arranged as `fpga` is takes beyond its divide and FMA units: the stages
# between its shared parts, fewer single-cycle vector units than lanes, write-back without
# spill registers, and two copies of the vector registers.
AS_FPGA = {"pipelined": True, "misc_units": 2, "writeback_spills": False, "vector_read_ports": 2}


def engine_config(scratchpad_bytes=256, sub_cores=1, divide_units=None, fma_units=None,
                  as_fpga=False):
    scratchpad = 256
    while scratchpad < scratchpad_bytes:
        scratchpad *= 2
    return NDPConfig(trigger=TriggerConfig(filter_entries=2),
                     engine=EngineConfig(sub_cores=sub_cores, slots=8, instruction_words=128,
                                         argument_blocks=2, scratchpad_bytes=scratchpad,
                                         divide_units=divide_units, fma_units=fma_units,
                                         **(AS_FPGA if as_fpga else {})))


def run_library_kernel(name, problem, *, seed=1, pause=0.3, sub_cores=1, divide_units=None,
                       fma_units=None, as_fpga=False):
    """``name`` on ``problem`` through the engine and through the instruction-set
    simulator, on the same inputs: ((engine outputs, run), (ISS outputs, ISS result))."""
    launch = kernel(name).launch(problem)
    inputs = random_inputs(launch, seed)
    iss_outputs, iss_result = run_on_iss(launch, inputs)
    placed = prepare_on_iss(launch, inputs)
    image = launch.kernel.image

    def pc(section):
        return image.sections.get(section)

    entry = EngineEntry(words=image.words, main_pc=pc(Section.MAIN), init_pc=pc(Section.INIT),
                        final_pc=pc(Section.FINAL), ordered=launch.ordered,
                        arguments=launch.arguments(placed.addresses),
                        expected=launch.expected_triggers, init_threads=launch.init_threads,
                        final_threads=launch.final_threads)
    config = engine_config(launch.scratchpad_bytes, sub_cores, divide_units, fma_units, as_fpga)
    run = run_engine(config, entry, placed.memory, placed.events,
                     base=placed.addresses[launch.trigger], seed=seed, pause=pause)
    return (placed.outputs(), run), (iss_outputs, iss_result)


def assert_same_bits(got, expected, what):
    assert set(got) == set(expected), what
    for name, values in expected.items():
        a, b = np.asarray(got[name]), np.asarray(values)
        assert a.dtype == b.dtype and a.shape == b.shape, f"{what}: {name}"
        wrong = np.flatnonzero(a.view(np.uint8) != b.view(np.uint8))
        assert wrong.size == 0, f"{what}: {name} differs in {wrong.size} bytes, first at {wrong[0]}"


# (kernel, problem, sub-cores, divide units, FMA units: None is one per lane, as `fpga`:
# AS_FPGA).
# bn_stats at 16 channels ends in two finalizer µthreads, which divide at once: with one
# divider their vectors take eight passes each, and must not mix; with two FMA units and
# the stages between the shared parts (as in `fpga`) its additions, in the FMA lanes and in
# the scratchpad's atomics, take four, its events, scratchpad and memory operations and
# retirements each a cycle more, its single-cycle vector instructions four cycles, its
# units' answers that lose write-back's merge hold them, and its multiply-adds' third
# operand is read a cycle late.
# Each case takes 10-20 s in Amaranth's simulator. In the slow suite: relu_fwd on one
# sub-core, which the two sub-cores' case covers, and the kernels the default suite runs on
# the exported slice (tests/sim/flows/test_kernel_run.py): bias_relu, bn_stats with a
# divider per lane, layernorm_stats and adam.
CASES = [
    pytest.param("relu_fwd", {"elements": 128}, 1, None, None, False, marks=pytest.mark.slow),
    ("relu_fwd", {"elements": 128}, 2, None, None, False),
    pytest.param("bias_relu", {"rows": 4, "channels": 16}, 1, None, None, False,
                 marks=pytest.mark.slow),
    ("softmax_scale", {"rows": 2, "columns": 32}, 1, None, None, False),
    pytest.param("bn_stats", {"rows": 8, "channels": 16}, 1, None, None, False,
                 marks=pytest.mark.slow),
    ("bn_stats", {"rows": 8, "channels": 16}, 1, 1, 2, True),
    pytest.param("layernorm_stats", {"rows": 3, "columns": 32}, 1, None, None, False,
                 marks=pytest.mark.slow),
    pytest.param("adam", {"elements": 32}, 1, None, None, False, marks=pytest.mark.slow),
    pytest.param("adam", {"elements": 32}, 1, 1, 2, True, marks=pytest.mark.slow),
]


def _case_id(case):
    name, _, sub_cores, divide_units, fma_units, as_fpga = (
        case.values if hasattr(case, "values") else case)
    return (f"{name}-{sub_cores}sub" + (f"-{divide_units}div" if divide_units else "")
            + (f"-{fma_units}fma" if fma_units else "") + ("-as-fpga" if as_fpga else ""))


@pytest.mark.parametrize("name, problem, sub_cores, divide_units, fma_units, as_fpga", CASES,
                         ids=[_case_id(case) for case in CASES])
def test_library_kernel_matches_the_iss(name, problem, sub_cores, divide_units, fma_units,
                                        as_fpga):
    (outputs, run), (iss_outputs, iss_result) = run_library_kernel(
        name, problem, seed=len(name), sub_cores=sub_cores, divide_units=divide_units,
        fma_units=fma_units, as_fpga=as_fpga)
    assert run.error is None and not run.stopped, f"{name}: {run.error}"
    assert run.complete and run.completed == kernel(name).launch(problem).expected_triggers
    assert_same_bits(outputs, iss_outputs, name)
    assert run.issued == iss_result.instructions


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None), EngineConfig()])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        Engine(config)


# Random programs: several instructions of one µthread in flight ---------------------------

PROGRAM_EVENTS = 12
REGION = 16 * 32            # bytes of memory each µthread owns
SCRATCH = 8 * 32            # bytes of scratchpad each µthread owns


def random_program(rng, length):
    """A straight-line kernel of ``length`` random instructions over registers x4–x7 and
    v0–v7, with loads and stores to the µthread's own memory region (x1) and scratchpad
    region (x3) and loads of a shared input (x2), every register first set from the
    inputs and finally stored, so any value read too early shows in memory."""
    lines = [".kernel random", ".arg OUT 0", ".arg IN 1", ".main",
             "shl x1, OFFSET, 4", "add x1, x1, OUT", "and x2, OFFSET, 480", "add x2, x2, IN",
             "shl x3, SEQ, 8"]
    lines += [f"vld v{n}, [x2 + {32 * n}]" for n in range(8)]
    lines += [f"add x{n}, SEQ, {n}" for n in range(4, 8)]
    xs = [f"x{n}" for n in range(8)]
    vs = [f"v{n}" for n in range(8)]

    def x_dest():
        return rng.choice(xs[4:])

    def x_src():
        return rng.choice(xs + ["SEQ", str(rng.randrange(-8, 64))])

    def v():
        return rng.choice(vs)

    menu = [
        (6, lambda: f"{rng.choice(['add', 'sub', 'and', 'or', 'xor', 'shl', 'shr', 'sra', 'slt', 'sltu'])} "
                    f"{x_dest()}, {rng.choice(xs)}, {x_src()}"),
        (2, lambda: f"mul {x_dest()}, {rng.choice(xs)}, {rng.choice(xs)}"),
        (6, lambda: f"{rng.choice(['vadd', 'vsub', 'vmul'])} {v()}, {v()}, {v()}"),
        (4, lambda: f"{rng.choice(['vfma', 'vfms', 'vfnma'])} {v()}, {v()}, {v()}, {v()}"),
        (4, lambda: f"{rng.choice(['vmin', 'vmax', 'vcmplt', 'viadd', 'vixor', 'vishr'])} "
                    f"{v()}, {v()}, {v()}"),
        (2, lambda: f"vsel {v()}, {v()}, {v()}, {v()}"),
        (2, lambda: f"vsplat {v()}, {rng.choice(xs)}"),
        (2, lambda: f"vget {x_dest()}, {v()}, {rng.choice(xs)}"),
        (1, lambda: f"{rng.choice(['vdiv'])} {v()}, {v()}, {v()}"),
        (1, lambda: f"vsqrt {v()}, {v()}"),
        (2, lambda: f"vredsum {v()}, {v()}"),
        (1, lambda: f"{rng.choice(['vcvtlo', 'vcvthi'])} {v()}, {v()}"),
        (1, lambda: f"vpackbf {v()}, {v()}, {v()}"),
        (3, lambda: f"vst [x1 + {320 + 32 * rng.randrange(6)}], {v()}"),
        (3, lambda: f"vld {v()}, [x1 + {320 + 32 * rng.randrange(6)}]"),
        (2, lambda: f"vld {v()}, [x2 + {32 * rng.randrange(16)}]"),
        (2, lambda: f"sw [x1 + {320 + 4 * rng.randrange(48)}], {rng.choice(xs)}"),
        (2, lambda: f"lw {x_dest()}, [x1 + {320 + 4 * rng.randrange(48)}]"),
        (2, lambda: f"sst [x3 + {32 * rng.randrange(8)}], {v()}"),
        (2, lambda: f"sld {v()}, [x3 + {32 * rng.randrange(8)}]"),
    ]
    weights = [weight for weight, _ in menu]
    for position in range(length):
        if rng.random() < 0.06:
            # A forward branch over the next instruction: the branch completes at dispatch
            # while instructions before it are in flight.
            lines.append(f"{rng.choice(['beq', 'bne', 'bltu'])} {rng.choice(xs)}, "
                         f"{rng.choice(xs)}, skip{position}")
            lines.append(rng.choices(menu, weights)[0][1]())
            lines.append(f"skip{position}:")
        lines.append(rng.choices(menu, weights)[0][1]())
    lines += [f"vst [x1 + {32 * n}], v{n}" for n in range(8)]
    lines += [f"sw [x1 + {256 + 8 * n}], x{n}" for n in range(4, 7)]
    lines.append("sw.x [x1 + 312], x7")
    return "\n".join(lines) + "\n"


def run_random_program(seed, config, length=40, pause=0.3):
    """A random program on PROGRAM_EVENTS triggering writes (in a random order), through
    the engine and through the instruction-set simulator: (engine run, the engine's
    memory, the instruction-set simulator's memory, its result)."""
    import random
    from matndp.host.kernels.assembler import assemble
    from matndp.host.kernels.iss import (FilterEntry, InstructionSetSimulator, IssConfig,
                                         TriggerEvents)
    from matndp.host.kernels.memory import Memory
    image = assemble(random_program(random.Random(seed), length))
    data = np.random.default_rng(seed)
    shared = (data.standard_normal(32 * 8) * 3).astype(np.float32)
    values = (data.standard_normal(PROGRAM_EVENTS * 8) * 3).astype(np.float32)
    order = data.permutation(PROGRAM_EVENTS)

    def memory_image():
        memory = Memory(shared.nbytes + PROGRAM_EVENTS * (REGION + 32))
        memory.place("IN", shared)
        memory.reserve("OUT", PROGRAM_EVENTS * REGION)
        memory.reserve("TRIGGER", PROGRAM_EVENTS * 32)
        return memory

    iss_memory, engine_memory = memory_image(), memory_image()
    trigger = iss_memory.address("TRIGGER")
    arguments = (iss_memory.address("OUT"), iss_memory.address("IN"))
    events = TriggerEvents.sectors(0, trigger, values, order=order)
    entry = FilterEntry(trigger, PROGRAM_EVENTS * 32, image, arguments, expected=PROGRAM_EVENTS)
    simulator = InstructionSetSimulator(
        iss_memory, [entry], IssConfig(scratchpad_bytes=PROGRAM_EVENTS * SCRATCH, watchdog=1 << 20))
    result = simulator.run(events)
    assert not result.errors, result.errors
    run = run_engine(config, EngineEntry(words=image.words, main_pc=0, arguments=arguments,
                                         expected=PROGRAM_EVENTS),
                     engine_memory, events, base=trigger, seed=seed, pause=pause)
    return run, engine_memory, iss_memory, result


# One program in the default suite, on the default engine's depth of instructions in flight;
# two more in the slow suite, one on a pipelined engine: each takes half a minute in
# Amaranth's simulator.
@pytest.mark.parametrize("seed, in_flight, sub_cores, pipelined", [
    (1, 4, 1, False), pytest.param(3, 2, 2, False, marks=pytest.mark.slow),
    pytest.param(2, 4, 1, True, marks=pytest.mark.slow)])
def test_random_programs_match_the_iss(seed, in_flight, sub_cores, pipelined):
    """With several instructions of a µthread in flight, no instruction may read a register
    before the instruction that writes it has written it, nor write it before an earlier
    writer, and a µthread's memory and scratchpad accesses keep their program order: every
    byte the µthreads leave in memory equals the instruction-set simulator's."""
    from dataclasses import replace
    base = engine_config(PROGRAM_EVENTS * SCRATCH, sub_cores)
    config = replace(base, engine=replace(base.engine, in_flight=in_flight, pipelined=pipelined))
    run, engine_memory, iss_memory, result = run_random_program(seed, config)
    assert run.error is None and run.complete and run.completed == PROGRAM_EVENTS
    wrong = np.flatnonzero(engine_memory.data != iss_memory.data)
    assert wrong.size == 0, f"{wrong.size} bytes differ, the first at {wrong[0]:#x}"
    assert run.issued == result.instructions
