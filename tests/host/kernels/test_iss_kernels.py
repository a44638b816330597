"""Whole kernels on the simulator: results against numpy written from the kernels'
definitions, the trigger-order model (init, main, final, atomics), faults and draining,
and race reports."""

import numpy as np
import pytest

from matndp.hw.config import NDPConfig
from matndp.hw.engine.isa import ErrorCause, Instruction, Opcode
from matndp.host.kernels.assembler import assemble
from matndp.host.kernels.bench import BENCH_KERNELS
from matndp.host.kernels.image import KernelImage, Section
from matndp.host.kernels.iss import (FilterEntry, InstructionSetSimulator, IssConfig, RaceError,
                                     TriggerEvent, TriggerEvents)
from matndp.host.kernels.memory import Memory, MemoryImageError
from matndp.sim.golden.fp import reference


RELU = BENCH_KERNELS["relu"]

STATS = """.kernel stats            ; per-lane sum and sum of squares, reduced at the end
.arg OUT 0
.init
    sst    [0], v0
    sst.x  [32], v0
.main
    samoadd     [0], DATA
    samofma.r.x [32], DATA, DATA
.final
    sld    v1, [0]
    sld    v2, [32]
    vredsum v1, v1
    vredsum v2, v2
    vst    [OUT], v1
    vst.x  [OUT + 32], v2
"""


def _ieee_max_zero(x):
    bits = x.view(np.uint32)
    out = np.where((bits >> 31) == 1, 0, bits).astype(np.uint32)   # every negative (and −0) → +0
    nan = np.isnan(x)
    out[nan] = 0x7FC00000
    return out


def _tree_sum(lanes):
    lanes = lanes.astype(np.float32)
    while len(lanes) > 1:
        lanes = (lanes[0::2] + lanes[1::2]).astype(np.float32)
    return lanes[0]


@pytest.mark.parametrize("batch", [16384, 5])
def test_relu_over_a_tensor_triggered_by_writes(batch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(4096).astype(np.float32)
    x[:4] = [-0.0, np.nan, -np.inf, 1e-45]
    memory = Memory(2 * x.nbytes)
    source, out = memory.reserve("x", x.nbytes), memory.reserve("y", x.nbytes, dtype=np.float32)
    simulator = InstructionSetSimulator(memory, [FilterEntry(source, x.nbytes, assemble(RELU), (out,),
                                                             expected=len(x) // 8)],
                                        IssConfig(batch=batch))
    order = rng.permutation(len(x) // 8)
    result = simulator.run(TriggerEvents.sectors(0, source, x, order=order))
    assert (memory.tensor("y").view(np.uint32) == _ieee_max_zero(x)).all()
    assert (memory.read(source, np.float32, len(x)).view(np.uint32) == x.view(np.uint32)).all()
    status = result.entries[0]
    assert (status.triggers, status.completed, status.drained, status.finalized) == (512, 512, 0, True)
    assert result.instructions == 2 * 512


@pytest.mark.parametrize("batch", [16384, 3])
def test_scratchpad_reduction_with_init_and_final(batch):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(8 * 3000) * 10.0 ** rng.integers(-3, 4, 8 * 3000)).astype(np.float32)
    memory = Memory(x.nbytes + 64)
    source, out = memory.reserve("x", x.nbytes), memory.reserve("out", 64, dtype=np.float32)
    simulator = InstructionSetSimulator(memory, [FilterEntry(source, x.nbytes, assemble(STATS), (out,),
                                                             expected=3000)], IssConfig(batch=batch))
    order = rng.permutation(3000)
    result = simulator.run(TriggerEvents.sectors(0, source, x, order=order))
    rows = x.reshape(-1, 8)[order]
    sums, squares = np.zeros(8, np.float32), np.zeros(8, np.float32)
    for row in rows:                        # trigger order, one rounding per step
        sums = (sums + row).astype(np.float32)
        squares = reference("fma", row.view(np.uint32), row.view(np.uint32),
                            squares.view(np.uint32)).view(np.float32)
    got = memory.tensor("out")
    assert got[0] == _tree_sum(sums) and (got[:8] == got[0]).all()
    assert got[8] == _tree_sum(squares)
    assert result.entries[0].finalized and result.sequential_batches == 0


def test_branch_loop_in_a_finalizer():
    source = """.kernel histogram_sum
.arg OUT 0
.arg COUNT 1
.init
    add x1, x0, 0
clear:
    sst [x1], v0
    add x1, x1, 32
    bltu x1, COUNT, clear
    exit
.main
    and x1, SEQ, 3               ; four accumulators, chosen by trigger number
    shl x1, x1, 5
    samoadd.r.x [x1], DATA
.final
    add x1, x0, 0
    add x2, x0, 0
loop:                            ; v1 = sum of the accumulators, in order
    sld v2, [x1]
    vadd v1, v1, v2
    add x1, x1, 32
    bltu x1, COUNT, loop
    vst.x [OUT], v1
"""
    rng = np.random.default_rng(2)
    x = rng.standard_normal(8 * 101).astype(np.float32)
    memory = Memory(x.nbytes + 32)
    base, out = memory.reserve("x", x.nbytes), memory.reserve("out", 32, dtype=np.float32)
    simulator = InstructionSetSimulator(memory, [FilterEntry(base, x.nbytes, assemble(source),
                                                             (out, 4 * 32), expected=101)])
    simulator.run(TriggerEvents.sectors(0, base, x))
    accumulators = np.zeros((4, 8), np.float32)
    for seq, row in enumerate(x.reshape(-1, 8)):
        accumulators[seq % 4] = (accumulators[seq % 4] + row).astype(np.float32)
    total = np.zeros(8, np.float32)
    for row in accumulators:
        total = (total + row).astype(np.float32)
    assert (memory.tensor("out").view(np.uint32) == total.view(np.uint32)).all()


def test_specials_and_masked_stores():
    source = """.kernel specials
.arg OUT 0
.main
    shl x1, SEQ, 6
    add x1, x1, OUT
    vsplat v1, OFFSET
    vsel v7, LANE, v1, LANEMASK
    vst [x1], v7
    vstm.x [x1 + 32], DATA
"""
    memory = Memory(64 * 4 + 128)
    trigger, out = memory.reserve("t", 128), memory.reserve("out", 64 * 4, dtype=np.uint32)
    memory.write(out, np.full(64 * 4 // 4, 0xEEEEEEEE, np.uint32))
    entries = {3: FilterEntry(trigger, 128, assemble(source), (out,))}
    simulator = InstructionSetSimulator(memory, entries)
    data = [bytes(range(i * 32, i * 32 + 32)) for i in range(4)]
    masks = [0xFFFFFFFF, 0x0000FFFF, 0xF0F0F0F0, 0]
    events = TriggerEvents.of([TriggerEvent(3, trigger + 32 * i, data[i], masks[i], write=i % 2 == 0)
                               for i in range(4)])
    simulator.run(events)
    got = memory.tensor("out").reshape(4, 16)
    lanes = np.arange(8)
    assert got[0, :8].tolist() == lanes.tolist()            # every lane enabled: LANE
    assert got[1, :8].tolist() == [0, 1, 2, 3, 32, 32, 32, 32]
    assert got[2, :8].tolist() == [64, 1, 64, 3, 64, 5, 64, 7]
    assert got[3, :8].tolist() == [96] * 8                  # none enabled: OFFSET
    # The masked store wrote only the enabled bytes of DATA.
    written = got[:, 8:].view(np.uint8).reshape(4, 32)
    for i in range(4):
        enabled = [(masks[i] >> b) & 1 for b in range(32)]
        expected = [data[i][b] if enabled[b] else 0xEE for b in range(32)]
        assert written[i].tolist() == expected
    # GPU writes reached memory; reads did not change it.
    assert memory.read(trigger, np.uint8, 32).tolist() == list(data[0])
    assert memory.read(trigger + 32, np.uint8, 32).tolist() == [0] * 32


def test_each_special_value():
    names = ["OFFSET", "ADDR", "ENTRY", "SEQ", "MASK", "WRITE", "COMPLETED"]
    body = "\n".join(f"    sw [x1 + {4 * i}], {name}" for i, name in enumerate(names))
    source = f""".kernel each
.arg OUT 0
.main
    shl x1, SEQ, 5
    add x1, x1, OUT
{body}
    exit
"""
    memory = Memory(4096)
    trigger, out = memory.reserve("t", 256), memory.reserve("out", 32 * 3, dtype=np.uint32)
    simulator = InstructionSetSimulator(memory, {2: FilterEntry(trigger, 256, assemble(source), (out,))})
    events = TriggerEvents.of([TriggerEvent(2, trigger + 64, bytes(32), 0x0F, True),
                               TriggerEvent(2, trigger + 32, bytes(32), None, False),
                               TriggerEvent(2, trigger + 224, bytes(32), 0x80000001, True)])
    simulator.run(events)
    got = memory.tensor("out").reshape(3, 8)[:, :7]
    assert got.tolist() == [[64, trigger + 64, 2, 0, 0x0F, 1, 0],
                            [32, trigger + 32, 2, 1, 0xFFFFFFFF, 0, 1],
                            [224, trigger + 224, 2, 2, 0x80000001, 1, 2]]


def _word(mnemonic, **fields):
    return Instruction(Opcode[mnemonic.upper()], **fields).encode()


def _fault_setup(main, config=IssConfig(), extra_entry=True, expected=4):
    memory = Memory(4096)
    trigger = memory.reserve("t", 4 * 32)
    other = memory.reserve("o", 4 * 32)
    out = memory.reserve("out", 4 * 32, dtype=np.uint32)
    entries = {0: FilterEntry(trigger, 128, main if isinstance(main, KernelImage) else assemble(main),
                              (out,), expected=expected)}
    if extra_entry:
        entries[1] = FilterEntry(other, 128, assemble(RELU), (out + 64,), expected=2)
    simulator = InstructionSetSimulator(memory, entries, config)
    events = TriggerEvents.concatenate([
        TriggerEvents.sectors(0, trigger, np.arange(32, dtype=np.float32)),
        TriggerEvents.sectors(1, other, -np.arange(16, dtype=np.float32))])
    order = np.array([0, 4, 1, 2, 5, 3])
    return simulator, events.take(order), memory, out


_SCRATCHPAD = IssConfig().scratchpad_bytes

FAULTS = [
    ("vld v1, [OFFSET + 4]", ErrorCause.MISALIGNED, 1),
    ("lw x1, [OFFSET + 2]", ErrorCause.MISALIGNED, 1),
    ("vld v1, [OFFSET + 0x100000]", ErrorCause.OUT_OF_WINDOW, 1),
    (f"sld v1, [OFFSET + {_SCRATCHPAD:#x}]", ErrorCause.SCRATCHPAD_RANGE, 1),
    # The faulting trigger's OFFSET is 64: the first sector past the scratchpad.
    (f"sld v1, [OFFSET + {_SCRATCHPAD - 64:#x}]", ErrorCause.SCRATCHPAD_RANGE, 1),
    ("sst [OFFSET + 8], v1", ErrorCause.MISALIGNED, 1),
]


_FAULTY = """.kernel faulty
.arg OUT 0
.main
    add x9, x0, 2
    beq SEQ, x9, bad              ; the third trigger faults
    vst.x [OFFSET + OUT], DATA
bad:
    {instruction}
    exit
.final
    vst.x [OUT + 96], DATA
"""


@pytest.mark.parametrize("instruction, cause, pc", FAULTS)
def test_a_fault_stops_its_entry_and_drains_its_later_triggers(instruction, cause, pc):
    simulator, events, memory, out = _fault_setup(_FAULTY.format(instruction=instruction))
    result = simulator.run(events)
    status = result.entries[0]
    assert status.error.cause is cause and status.error.seq == 2 and status.error.pc == pc + 2
    assert status.error.section is Section.MAIN and str(status.error).startswith("entry 0:")
    assert (status.completed, status.drained, status.finalized) == (2, 1, False)
    got = memory.read(out, np.float32, 32)
    assert (got[:16] == np.arange(16)).all() and (got[16:24] == 0).all()
    assert result.entries[1].completed == 2 and result.entries[1].error is None
    # Entry 1 (relu of -0, -1, …) went on: every output +0.
    assert memory.read(out + 64, np.uint32, 16).tolist() == [0] * 16


def test_illegal_words_pc_outside_and_watchdog():
    exit_word = _word("exit")
    illegal = KernelImage("illegal", (_word("nop"), 0x03, exit_word), {Section.MAIN: 0})
    simulator = _fault_setup(illegal, extra_entry=False)[0]
    result = simulator.run(TriggerEvents.sectors(0, 0, np.zeros(8, np.float32)))
    fault = result.entries[0].error
    assert fault.cause is ErrorCause.ILLEGAL_INSTRUCTION and fault.pc == 1 and "0x03" in fault.detail
    assert result.entries[0].drained == 0
    far = KernelImage("far", (_word("jump", imm=7), exit_word), {Section.MAIN: 0})
    simulator = _fault_setup(far, extra_entry=False)[0]
    fault = simulator.run(TriggerEvents.sectors(0, 0, np.zeros(16, np.float32))).entries[0]
    assert fault.error.cause is ErrorCause.ILLEGAL_INSTRUCTION and fault.error.pc == 7
    assert fault.drained == 1
    spin = ".kernel spin\n.main\nloop: jump loop\n"
    simulator = _fault_setup(spin, IssConfig(watchdog=50), extra_entry=False)[0]
    result = simulator.run(TriggerEvents.sectors(0, 0, np.zeros(24, np.float32)))
    assert result.entries[0].error.cause is ErrorCause.WATCHDOG
    assert "more than 50 instructions" in result.entries[0].error.detail
    assert result.entries[0].drained == 2 and result.instructions == 50


def test_a_failing_initializer_drains_every_trigger():
    source = ".kernel k\n.init\n    vld.x v1, [4]\n.main\n    exit\n.final\n    exit\n"
    simulator, events, _, _ = _fault_setup(source)
    result = simulator.run(events)
    status = result.entries[0]
    assert status.error.section is Section.INIT and status.error.seq is None
    assert (status.completed, status.drained, status.finalized) == (0, 4, False)
    assert result.entries[1].completed == 2


def test_two_atomics_of_one_thread_on_one_sector_run_in_trigger_order():
    source = """.kernel twice
.main
    samoadd [0], DATA
    vmul v1, DATA, 3.0
    samoadd.r.x [0], v1
"""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(8 * 50) * 10.0 ** rng.integers(-4, 5, 8 * 50)).astype(np.float32)
    memory = Memory(x.nbytes)
    simulator = InstructionSetSimulator(memory, [FilterEntry(0, x.nbytes, assemble(source))])
    result = simulator.run(TriggerEvents.sectors(0, 0, x))
    assert result.sequential_batches == 1
    accumulator = np.zeros(8, np.float32)
    for row in x.reshape(-1, 8):
        accumulator = (accumulator + row).astype(np.float32)
        accumulator = (accumulator + (row * np.float32(3)).astype(np.float32)).astype(np.float32)
    assert (simulator.scratchpad_words[:8] == accumulator.view(np.uint32)).all()
    # The count is per run: a second run that falls back once reports one fallback.
    assert simulator.run(TriggerEvents.sectors(0, 0, x)).sequential_batches == 1


def test_stores_of_two_threads_to_one_sector_are_reported():
    source = ".kernel clash\n.arg OUT 0\n.main\n    vst.x [OUT], DATA\n"
    memory = Memory(4096)
    out = memory.reserve("out", 32)
    simulator = InstructionSetSimulator(memory, [FilterEntry(64, 64, assemble(source), (out,))])
    events = TriggerEvents.sectors(0, 64, np.zeros(16, np.float32))
    with pytest.raises(RaceError, match=r"memory sector 0x0: store by entry 0 µthread 0, "
                                        r"store by entry 0 µthread 1 \(pc 0\)"):
        simulator.run(events)
    simulator = InstructionSetSimulator(memory, [FilterEntry(64, 64, assemble(source), (out,))])
    result = simulator.run(events, allow_races=True)
    assert result.race_count == 1 and result.races[0].kind == "store/store"


def test_atomics_of_two_entries_on_one_sector_are_reported_at_that_sector():
    # Entry 0's four µthreads add to scratchpad sectors 0, 32, 64 and 96; entry 1's one to
    # sector 0, in the same batch: only sector 0 is shared.
    source = ".kernel tally\n.main\n    samoadd.x [OFFSET], DATA\n"
    memory = Memory(4096)
    image = assemble(source)
    simulator = InstructionSetSimulator(memory, [FilterEntry(0, 128, image),
                                                 FilterEntry(256, 32, image)])
    events = TriggerEvents.concatenate([TriggerEvents.sectors(0, 0, np.ones(32, np.float32)),
                                        TriggerEvents.sectors(1, 256, np.ones(8, np.float32))])
    result = simulator.run(events, allow_races=True)
    assert [(race.space, race.address, race.kind) for race in result.races] == \
        [("scratchpad", 0, "atomics of two entries")]


def test_loading_what_another_thread_stores_and_gpu_overwrites_are_reported():
    source = """.kernel neighbours
.main
    vld v1, [ADDR + 32]          ; the next sector, which the next trigger's GPU write changes
    vst.x [ADDR], v1
"""
    memory = Memory(4096)
    simulator = InstructionSetSimulator(memory, [FilterEntry(0, 128, assemble(source))])
    result = simulator.run(TriggerEvents.sectors(0, 0, np.zeros(16, np.float32)), allow_races=True)
    kinds = {race.kind for race in result.races}
    assert "load/GPU write" in kinds and "load/store" in kinds


def test_an_atomic_on_a_sector_another_thread_loaded_is_reported():
    source = ".kernel peek\n.main\n    beq SEQ, x0, add\n    sld v1, [0]\n    exit\nadd:\n" \
             "    samoadd.x [0], DATA\n"
    simulator = InstructionSetSimulator(Memory(4096), [FilterEntry(0, 64, assemble(source))])
    result = simulator.run(TriggerEvents.sectors(0, 0, np.ones(16, np.float32)), allow_races=True)
    assert [(race.space, race.address, race.kind) for race in result.races] == \
        [("scratchpad", 0, "load/atomic")]


def test_the_simulated_engine_is_the_default_slices_unless_told_otherwise():
    slice_ = NDPConfig()
    config = IssConfig()
    assert (config.sector_bytes, config.addr_width) == (slice_.sector_bytes, slice_.addr_width)
    assert (config.scratchpad_bytes, config.slots) == (slice_.engine.scratchpad_bytes,
                                                       slice_.engine.slots)
    assert Memory(1024).sector_bytes == slice_.sector_bytes


def test_bad_inputs_are_refused():
    memory = Memory(1024)
    image = assemble(RELU)
    with pytest.raises(ValueError, match="not inside the memory image"):
        InstructionSetSimulator(memory, [FilterEntry(0, 64, image)], IssConfig(window=(512, 1024)))
    with pytest.raises(ValueError, match="argument block has 16 words"):
        FilterEntry(0, 64, image, tuple(range(17)))
    with pytest.raises(ValueError, match="not a 64-bit integer"):
        FilterEntry(0, 64, image, (1 << 64,))
    for name in ("init_threads", "final_threads"):
        for count in (-1, 1.5, True):
            with pytest.raises(ValueError, match=f"{name} must be a count of µthreads"):
                FilterEntry(0, 64, image, **{name: count})
    with pytest.raises(ValueError, match="sector_bytes"):
        IssConfig(sector_bytes=12)
    beyond = InstructionSetSimulator(memory, [FilterEntry(1024, 64, image)])
    with pytest.raises(ValueError, match="^a triggering GPU write lies outside the memory image$"):
        beyond.run(TriggerEvents.sectors(0, 1024, np.zeros(8, np.float32)))
    simulator = InstructionSetSimulator(memory, [FilterEntry(0, 64, image)])
    with pytest.raises(ValueError, match="outside entry 0's range"):
        simulator.run(TriggerEvents.sectors(0, 64, np.zeros(8, np.float32)))
    with pytest.raises(ValueError, match=r"entries \[5\]"):
        simulator.run(TriggerEvents.sectors(5, 0, np.zeros(8, np.float32)))
    with pytest.raises(MemoryImageError, match="outside the memory image"):
        memory.read(1020, np.uint32, 2)
    with pytest.raises(MemoryImageError, match="does not fit"):
        memory.reserve("big", 2048)


def test_memory_regions():
    memory = Memory(1024, base=0x1000)
    a = memory.place("a", np.arange(5, dtype=np.float32))
    b = memory.place("b", np.ones((2, 3), dtype=np.int16))
    assert a == 0x1000 and b == 0x1020 and memory.address("b") == b
    assert (memory.tensor("b") == 1).all() and memory.tensor("b").shape == (2, 3)
    with pytest.raises(MemoryImageError, match="already placed"):
        memory.place("a", np.zeros(1))
    with pytest.raises(MemoryImageError, match="no region 'c'"):
        memory.tensor("c")


def test_the_window_and_the_address_width_bound_memory_accesses():
    source = ".kernel reach\n.arg AT 0\n.main\n    vld.x v1, [AT]\n"
    for config, address in ((IssConfig(window=(0, 256)), 256), (IssConfig(window=(256, 256)), 0),
                            (IssConfig(addr_width=9), 512), (IssConfig(), 1 << 63)):
        memory = Memory(4096)
        simulator = InstructionSetSimulator(memory, [FilterEntry(0, 32, assemble(source), (address,))], config)
        fault = simulator.run(TriggerEvents.sectors(0, 0, np.zeros(8, np.float32))).entries[0].error
        assert fault is not None and fault.cause is ErrorCause.OUT_OF_WINDOW, (config, address)
    inside = InstructionSetSimulator(Memory(4096), [FilterEntry(0, 32, assemble(source), (224,))],
                                     IssConfig(window=(0, 256)))
    assert inside.run(TriggerEvents.sectors(0, 0, np.zeros(8, np.float32))).entries[0].error is None


def test_maximum_reduction_in_the_scratchpad():
    source = """.kernel running_max
.arg OUT 0
.init
    vneg v1, inf
    sst.x [64], v1
.main
    samomax.r.x [64], DATA
.final
    sld v1, [64]
    vredmax v1, v1
    vst.x [OUT], v1
"""
    rng = np.random.default_rng(8)
    x = rng.standard_normal(8 * 500).astype(np.float32)
    x[17] = -0.0
    memory = Memory(x.nbytes + 32)
    base, out = memory.reserve("x", x.nbytes), memory.reserve("out", 32, dtype=np.float32)
    simulator = InstructionSetSimulator(memory, [FilterEntry(base, x.nbytes, assemble(source), (out,), 500)])
    simulator.run(TriggerEvents.sectors(0, base, x))
    assert (memory.tensor("out") == x.max()).all()


@pytest.mark.parametrize("final_threads, runs", [(0, 1), (1, 1), (5, 5)])
def test_a_finalizer_runs_as_its_entry_s_final_threads(final_threads, runs):
    """µthread i of the finalizer has SEQ i (the initializer 0): each writes its own sector."""
    source = """.kernel spread
.arg OUT 0
.init
    sw.x [OUT + 252], SEQ
.main
    exit
.final
    shl x1, SEQ, 5
    sw [x1 + OUT], SEQ
    sw.x [x1 + OUT + 4], COMPLETED
"""
    memory = Memory(4096)
    trigger, out = memory.reserve("t", 64), memory.reserve("out", 256, dtype=np.uint32)
    memory.write(out, np.full(64, 0xAAAAAAAA, np.uint32))
    simulator = InstructionSetSimulator(memory, [FilterEntry(trigger, 64, assemble(source), (out,), 2,
                                                             final_threads=final_threads)])
    result = simulator.run(TriggerEvents.sectors(0, trigger, np.ones(16, np.float32)))
    assert result.entries[0].finalized
    got = memory.tensor("out").reshape(8, 8)
    for index in range(runs):
        assert got[index, :2].tolist() == [index, 2]
    assert (got[runs:7, :2] == 0xAAAAAAAA).all() and got[7, 7] == 0
    assert result.instructions == 1 + 2 + 3 * runs


def test_initializer_and_finalizer_see_no_trigger():
    source = """.kernel edges
.arg OUT 0
.init
    sw [OUT], COMPLETED
    sw.x [OUT + 4], OFFSET
.main
    exit
.final
    sw [OUT + 8], COMPLETED
    sw [OUT + 12], SEQ
    sw [OUT + 16], ENTRY
    sw [OUT + 20], MASK
    vst.x [OUT + 32], DATA
"""
    memory = Memory(4096)
    trigger, out = memory.reserve("t", 96), memory.reserve("out", 64, dtype=np.uint32)
    memory.write(out, np.full(16, 0xAAAAAAAA, np.uint32))
    simulator = InstructionSetSimulator(memory, {1: FilterEntry(trigger, 96, assemble(source), (out,), 3)})
    result = simulator.run(TriggerEvents.sectors(1, trigger, np.ones(24, np.float32)))
    assert result.entries[1].finalized
    got = memory.tensor("out")
    assert got[:6].tolist() == [0, 0, 3, 0, 1, 0] and (got[8:] == 0).all()


def test_an_entry_stopped_by_a_fault_drains_the_triggers_of_every_later_run():
    """The first trigger faults (a jump outside the image); the entry stays stopped, so
    its second trigger and all three of a later run are counted as drained, never run."""
    far = KernelImage("far", (_word("jump", imm=7), _word("exit")), {Section.MAIN: 0})
    simulator = _fault_setup(far, extra_entry=False)[0]
    first = simulator.run(TriggerEvents.sectors(0, 0, np.zeros(16, np.float32))).entries[0]
    assert (first.triggers, first.completed, first.drained) == (2, 0, 1)
    later = simulator.run(TriggerEvents.sectors(0, 0, np.zeros(24, np.float32))).entries[0]
    assert (later.triggers, later.completed, later.drained) == (5, 0, 4)
    assert later.error.seq == 0 and not later.finalized


@pytest.mark.parametrize("init_threads, runs", [(0, 1), (1, 1), (5, 5)])
def test_an_initializer_runs_as_its_entry_s_init_threads(init_threads, runs):
    """µthread i of the initializer has SEQ i, and every one has ended before the first
    main µthread starts: each clears its own scratchpad sector, which the main µthreads
    then read back."""
    source = """.kernel cleared
.arg OUT 0
.init
    shl x1, SEQ, 5
    vsplat v1, SEQ
    sst.x [x1], v1
.main
    shl x1, SEQ, 5
    sld v1, [x1]
    vst.x [x1 + OUT], v1
"""
    memory = Memory(4096)
    trigger, out = memory.reserve("t", 256), memory.reserve("out", 256, dtype=np.uint32)
    memory.write(out, np.full(64, 0xAAAAAAAA, np.uint32))
    simulator = InstructionSetSimulator(memory, [FilterEntry(trigger, 256, assemble(source), (out,), 8,
                                                             init_threads=init_threads)],
                                        IssConfig(scratchpad_bytes=256))
    simulator.scratchpad[:] = 0xEE
    result = simulator.run(TriggerEvents.sectors(0, trigger, np.ones(64, np.float32)))
    got = memory.tensor("out").reshape(8, 8)
    assert got[:runs].tolist() == [[index] * 8 for index in range(runs)]
    assert (got[runs:] == 0xEEEEEEEE).all()
    assert result.instructions == 3 * runs + 3 * 8


def test_gpu_writes_to_one_sector_in_one_batch_land_in_trigger_order_byte_by_byte():
    """Two masked writes to sector 0 and a full one to sector 1; a GPU read of sector 0
    changes nothing. Bytes 0-7 and 16-23 are the second write's, 8-15 the first's, 24-31
    keep what memory held."""
    memory = Memory(4096)
    memory.data[:64] = 0xEE
    simulator = InstructionSetSimulator(memory, [FilterEntry(0, 64, assemble(".kernel k\n.main\n    exit\n"))])
    simulator.run(TriggerEvents.of([
        TriggerEvent(0, 0, bytes(range(32)), mask=0x0000_FFFF),
        TriggerEvent(0, 32, bytes([7] * 32)),
        TriggerEvent(0, 0, bytes(range(100, 132)), mask=0x00FF_00FF),
        TriggerEvent(0, 0, bytes([1] * 32), write=False)]), allow_races=True)
    assert memory.data[:32].tolist() == [*range(100, 108), *range(8, 16), *range(116, 124),
                                         *[0xEE] * 8]
    assert memory.data[32:64].tolist() == [7] * 32


_ORDERED_THEN_FAULT = """.kernel ordered
.main
    samoadd   [0], DATA
    samoadd.r [0], DATA
    add x9, x0, 1
    beq SEQ, x9, bad            ; the second trigger faults after its atomics
    exit
bad:
    sst [OFFSET + 8], v1
    exit
"""


def test_an_entry_stopped_one_thread_at_a_time_leaves_the_other_entries_to_run():
    """Two atomics of one µthread on one sector force the batch to run one µthread at a
    time. Entry 0's second µthread faults: its third is drained, and entry 1's two µthreads,
    later in the batch, still run."""
    memory = Memory(4096)
    ordered = memory.reserve("a", 96)
    other = memory.reserve("b", 64)
    out = memory.reserve("out", 64)
    simulator = InstructionSetSimulator(memory, {
        0: FilterEntry(ordered, 96, assemble(_ORDERED_THEN_FAULT)),
        1: FilterEntry(other, 64, assemble(RELU), (out,))})
    x = np.arange(24, dtype=np.float32) + 1
    y = np.arange(16, dtype=np.float32) - 8
    result = simulator.run(TriggerEvents.concatenate([TriggerEvents.sectors(0, ordered, x),
                                                      TriggerEvents.sectors(1, other, y)]))
    assert result.sequential_batches == 1
    stopped = result.entries[0]
    assert (stopped.completed, stopped.drained, stopped.error.seq, stopped.error.pc) == (1, 1, 1, 5)
    assert stopped.error.cause is ErrorCause.MISALIGNED
    assert (result.entries[1].completed, result.entries[1].drained) == (2, 0)
    assert (memory.read(out, np.float32, 16) == np.maximum(y, 0)).all()
    rows = x.reshape(3, 8)
    expected = np.zeros(8, np.float32)
    for row in rows[:2]:                   # the faulting µthread's atomics ran before it faulted
        expected = (expected + row + row).astype(np.float32)
    assert (simulator.scratchpad_words[:8] == expected.view(np.uint32)).all()


_FAULT_AT_SEQ_1 = """.kernel second_faults
.arg OUT 0
.main
    add x9, x0, 1
    beq SEQ, x9, bad
    vst.x [OFFSET + OUT], DATA
bad:
    sst [OFFSET + 8], v1
    exit
"""


def test_a_batch_rerun_stops_every_faulting_entry_at_its_fault_and_runs_no_stopped_entry():
    """Entries 0 and 1 each fault at their second µthread, with a third in the same batch:
    the batch runs again up to each entry's fault, so the third is drained. Entry 2 stopped
    in an earlier run: none of its µthreads run again, even in the rerun."""
    memory = Memory(4096)
    bases = [memory.reserve(f"t{k}", 96) for k in range(3)]
    outs = [memory.reserve(f"out{k}", 128, dtype=np.uint32) for k in range(3)]
    image = assemble(_FAULT_AT_SEQ_1)
    simulator = InstructionSetSimulator(memory, [FilterEntry(base, 96, image, (out,))
                                                 for base, out in zip(bases, outs)])
    values = np.arange(24, dtype=np.float32) + 1
    first = simulator.run(TriggerEvents.sectors(2, bases[2], values[:16]))
    assert (first.entries[2].completed, first.entries[2].error.seq) == (1, 1)
    result = simulator.run(TriggerEvents.concatenate(
        [TriggerEvents.sectors(k, bases[k], values[:24 if k < 2 else 16]) for k in range(3)]))
    for k in (0, 1):
        status = result.entries[k]
        assert (status.completed, status.drained, status.error.seq) == (1, 1, 1)
        assert memory.read(outs[k], np.float32, 32).tolist() == [*values[:8], *[0] * 24]
    assert (result.entries[2].completed, result.entries[2].drained) == (1, 2)
    assert memory.read(outs[2], np.float32, 32).tolist() == [*values[:8], *[0] * 24]


@pytest.mark.parametrize("fields, message", [
    *[({name: value}, f"IssConfig.{name} must be a positive int, not {value!r}")
      for name in ("sector_bytes", "addr_width", "scratchpad_bytes", "watchdog", "slots", "batch")
      for value in (0, -32, 32.0, True, "32")],
    ({"sector_bytes": 2, "scratchpad_bytes": 64}, "IssConfig.sector_bytes must be a power of two of "
                                                  "at least 4, not 2"),
    ({"sector_bytes": 48, "scratchpad_bytes": 96}, "IssConfig.sector_bytes must be a power of two of "
                                                   "at least 4, not 48"),
    ({"sector_bytes": 32, "scratchpad_bytes": 80}, "IssConfig.scratchpad_bytes (80) must be a "
                                                   "multiple of the sector (32)"),
    ({"addr_width": 65}, "IssConfig.addr_width must be in 1 … 64, not 65"),
    ({"window": (0, 64, 64)}, "IssConfig.window must be (base, size), not (0, 64, 64)"),
    ({"window": (64,)}, "IssConfig.window must be (base, size), not (64,)"),
    ({"window": (-32, 64)}, "IssConfig.window must be (base, size), not (-32, 64)"),
    ({"window": (0, -1)}, "IssConfig.window must be (base, size), not (0, -1)"),
])
def test_an_engine_configuration_out_of_bounds_is_refused_by_name(fields, message):
    with pytest.raises(ValueError) as caught:
        IssConfig(**fields)
    assert str(caught.value) == message


def test_the_bounds_of_an_engine_configuration_are_accepted():
    for fields in ({"sector_bytes": 4, "scratchpad_bytes": 4}, {"sector_bytes": 64, "scratchpad_bytes": 64},
                   {"addr_width": 1}, {"addr_width": 64}, {"window": (0, 0)},
                   {"watchdog": 1, "slots": 1, "batch": 1}):
        config = IssConfig(**fields)
        assert all(getattr(config, name) == value for name, value in fields.items())
    assert IssConfig(sector_bytes=64, scratchpad_bytes=128).lanes == 16


@pytest.mark.parametrize("batch", [16384, 2, 1])
def test_gpu_writes_land_byte_by_byte_in_trigger_order(batch):
    # Four sectors filled with 0xEE; the kernel does nothing, so memory afterwards is what
    # the GPU writes left: enabled bytes only, a later write of a sector over an earlier one.
    memory = Memory(128)
    memory.write(0, np.full(128, 0xEE, np.uint8))
    image = assemble(".kernel idle\n.main\n    exit\n")
    simulator = InstructionSetSimulator(memory, [FilterEntry(0, 128, image)], IssConfig(batch=batch))

    def enables(low, high):
        return sum(1 << bit for bit in range(low, high))
    simulator.run(TriggerEvents.of([
        TriggerEvent(0, 32, bytes([0x11] * 32), enables(0, 16)),
        TriggerEvent(0, 64, bytes([0x33] * 32)),
        TriggerEvent(0, 32, bytes([0x22] * 32), enables(8, 24)),
        TriggerEvent(0, 0, bytes([0x44] * 32), write=False),
        TriggerEvent(0, 96, bytes(range(32)), enables(30, 32)),
    ]))
    expected = np.full((4, 32), 0xEE, np.uint8)
    expected[1, 0:8], expected[1, 8:24] = 0x11, 0x22
    expected[2] = 0x33
    expected[3, 30:32] = [30, 31]
    assert np.array_equal(memory.read(0, np.uint8, 128).reshape(4, 32), expected)


@pytest.mark.parametrize("batch", [1, 2, 3, 16384])
def test_a_fault_drains_the_later_triggers_of_its_entry_whatever_the_batch(batch):
    # The third trigger's misaligned load faults; batches of 1, 2 or 3 µthreads put it and
    # the trigger after it in one batch or in different ones.
    simulator, events, memory, out = _fault_setup(_FAULTY.format(instruction="vld v1, [OFFSET + 4]"),
                                                  IssConfig(batch=batch))
    result = simulator.run(events)
    status = result.entries[0]
    assert (status.error.cause, status.error.seq, status.error.pc) == (ErrorCause.MISALIGNED, 2, 3)
    assert (status.completed, status.drained, status.finalized) == (2, 1, False)
    got = memory.read(out, np.float32, 32)
    assert (got[:16] == np.arange(16)).all() and (got[16:] == 0).all()
    assert (result.entries[1].completed, result.entries[1].drained) == (2, 0)
    assert result.entries[1].error is None
    # entry 0: three per µthread, the faulting load included; entry 1: relu, two per µthread
    assert result.instructions == 2 * 3 + 3 + 2 * 2


RACY = """.kernel racy
.arg CELL 0
.main
    add   x9, x0, 3
    bne   SEQ, x9, look
    add   x1, x0, 4
    sw    [CELL], x1             ; the fourth trigger stores an offset off the sector
look:
    lw    x2, [CELL]
    add   x2, x2, CELL
    vld.x v1, [x2 + 32]
"""


def _racy_run(batch):
    memory = Memory(512)
    cell = memory.reserve("cell", 64)
    trigger = memory.reserve("t", 4 * 32)
    simulator = InstructionSetSimulator(memory, [FilterEntry(trigger, 128, assemble(RACY), (cell,))],
                                        IssConfig(batch=batch))
    return simulator.run(TriggerEvents.sectors(0, trigger, np.zeros(32, np.float32)), allow_races=True)


def test_a_fault_that_goes_away_when_run_again_is_a_race_between_uthreads():
    """Run together, the lowest pc first, the fourth µthread stores before any loads: all
    four load the bad offset and fault. Run again up to the first of them, the fault is
    gone: the kernel's µthreads race. One at a time, only the fourth faults."""
    with pytest.raises(RuntimeError) as caught:
        _racy_run(16384)
    assert str(caught.value) == ("entry 0: a µthread that faulted did not fault when run again: "
                                 "the kernel's µthreads race with each other")
    status = _racy_run(1).entries[0]
    assert (status.error.cause, status.error.seq, status.error.pc) == (ErrorCause.MISALIGNED, 3, 6)
    assert (status.completed, status.drained) == (3, 0)
