"""The batch harness of the slice with its engine (``sim/harnesses/slice_harness.v``,
``matndp.sim.batch``): its file formats and checks in Python alone, then runs through the
RTL. The RTL tests share one Verilator build of the harness: one scenario run both ways
(the per-cycle testbench and the harness, the same stimulus and memory timing) gives the
same logs (slow: the testbench needs a build of its own); kernels are bit-exact under random back-pressure on every stream; a stream runs
chunk by chunk without a reset; the checks notice a corrupted log.
"""

import pathlib
import shutil

import numpy as np
import pytest

from matndp.hw.layouts import ResponseStatus
from matndp.sim.batch import (BatchJob, BatchResult, BatchTiming, CheckFailed, HarnessShape,
                              HexFormatError, JobError, MemoryImage, RequestStream,
                              StimulusError, check_gpu_path, run_batch)
from matndp.sim.batch.check import matching_entries, replay_memory
from matndp.sim.flows.kernel_batch import KernelBatch
from matndp.sim.batch.records import RecordFormat
from matndp.sim.designs import KERNEL_CONFIG
from matndp.sim.flows.kernel_run import Launch
from matndp.host.runtime import FilterRange


# The RTL tests share one build of the harness; the two-way test's replay runs on the build
# of the slice with its engine that the engine's tests make (tests/sim/flows/test_kernel_run.py).
# One worker takes them all, so that it builds each once, exports the slice once, and no
# other worker waits on a build.
pytestmark = pytest.mark.xdist_group("engine_slice")

CONFIG = KERNEL_CONFIG
SECTOR = CONFIG.sector_bytes


# --- records ----------------------------------------------------------------------------------
def test_records_pack_as_worked_out_by_hand():
    # a = 0xA in bits 0..3, b = 1 in bit 4, c = 0x123 in bits 5..16: 0x247A in 17 bits.
    form = RecordFormat([("a", 0, 4), ("b", 4, 1), ("c", 5, 12)])
    assert form.pack({"a": [0xA, 0], "b": [1, 0], "c": [0x123, 0xFFF]}) == b"0247a\n1ffe0\n"
    back = form.unpack(b"0247a\n1ffe0\n")
    assert back["a"].tolist() == [0xA, 0] and back["b"].tolist() == [1, 0]
    assert back["c"].tolist() == [0x123, 0xFFF]


def test_wide_fields_are_little_endian_bytes():
    form = RecordFormat([("low", 0, 4), ("wide", 4, 72)])
    wide = np.arange(1, 10, dtype=np.uint8)[None, :]            # 0x090807060504030201
    text = form.pack({"low": [5], "wide": wide})
    assert text == b"0908070605040302015\n"
    assert np.array_equal(form.unpack(text)["wide"], wide)


def test_records_agree_with_integer_arithmetic_at_any_alignment():
    widths = [3, 13, 70, 1, 64, 9, 17]
    form = RecordFormat([(f"f{k}", sum(widths[:k]), w) for k, w in enumerate(widths)])
    rng = np.random.default_rng(8)
    count = 50
    columns, numbers = {}, []
    for k, width in enumerate(widths):
        values = [int(rng.integers(0, 1 << min(width, 62))) << max(0, width - 62) for _ in range(count)]
        numbers.append(values)
        if width <= 64:
            columns[f"f{k}"] = np.array(values, dtype=np.uint64)
        else:
            columns[f"f{k}"] = np.array([list(v.to_bytes(9, "little")) for v in values], dtype=np.uint8)
    expected = b""
    for row in range(count):
        word = sum(numbers[k][row] << sum(widths[:k]) for k in range(len(widths)))
        expected += f"{word:0{form.digits}x}\n".encode()
    assert form.pack(columns) == expected
    back = form.unpack(expected)
    for name, values in columns.items():
        assert np.array_equal(back[name], values), name


def test_records_refuse_what_does_not_fit():
    form = RecordFormat([("a", 0, 4)])
    with pytest.raises(ValueError, match="does not fit 4 bits"):
        form.pack({"a": [16]})
    with pytest.raises(KeyError, match="no field"):
        form.pack({"b": [1]})
    with pytest.raises(HexFormatError, match="not hex"):
        form.unpack(b"g\n")
    with pytest.raises(HexFormatError, match="lines of 1 hex digits"):
        form.unpack(b"12\n")
    with pytest.raises(ValueError, match="contiguous"):
        RecordFormat([("a", 1, 4)])


def test_a_request_stream_survives_the_stimulus_format():
    rng = np.random.default_rng(3)
    count = 300
    stream = RequestStream(CONFIG, addr=SECTOR * rng.integers(0, 1 << 30, count),
                           write=rng.random(count) < 0.5,
                           data=rng.integers(0, 256, (count, SECTOR), dtype=np.uint8),
                           mask=rng.integers(0, 1 << 32, count, dtype=np.uint64),
                           id=rng.integers(0, 256, count), gap=rng.integers(0, 1 << 16, count))
    job = BatchJob(CONFIG)
    back = job.formats.stimulus.unpack(job.formats.stimulus.pack(stream.columns()))
    for name, values in stream.columns().items():
        assert np.array_equal(back[name], values), name


# --- stimulus and job errors ------------------------------------------------------------------
def _stream(count, **fields):
    columns = dict(addr=np.full(count, 0x10_0000), write=np.zeros(count, dtype=bool),
                   id=np.arange(count) % 256)
    columns.update(fields)
    return RequestStream(CONFIG, **columns)


def test_bad_streams_are_refused():
    with pytest.raises(StimulusError, match="not aligned"):
        _stream(2, addr=[0x100, 0x101])
    with pytest.raises(StimulusError, match=r"id: 0x100 does not fit 8 bits"):
        _stream(1, id=[256])
    with pytest.raises(StimulusError, match="gap: 0x10000 does not fit 16 bits"):
        _stream(1, gap=[1 << 16])
    with pytest.raises(StimulusError, match="addr: 0x10000000000 does not fit 40 bits"):
        _stream(1, addr=[1 << 40])
    with pytest.raises(StimulusError, match=r"expected a \(1, 32\) uint8 array"):
        _stream(1, data=np.zeros((1, 16), dtype=np.uint8))
    with pytest.raises(StimulusError, match="negative"):
        _stream(1, id=[-1])


def test_a_chunk_longer_than_the_harness_is_refused():
    job = BatchJob(CONFIG, shape=HarnessShape(depth=64))
    with pytest.raises(StimulusError, match=r"65 requests does not fit the harness \(HarnessShape.depth = 64\)"):
        job.load(requests=_stream(65))
    keys = job.stream(_stream(130))
    assert len(keys) == 3


def test_bad_images_are_refused(monkeypatch):
    image = MemoryImage(SECTOR).add(0x1000, np.zeros(64, dtype=np.uint8))
    with pytest.raises(StimulusError, match="overlaps"):
        image.add(0x1020, np.zeros(8, dtype=np.uint8))
    with pytest.raises(StimulusError, match="not aligned"):
        image.add(0x2004, b"x")
    with pytest.raises(StimulusError, match="empty region"):
        image.add(0x3000, b"")
    with pytest.raises(StimulusError, match="overlaps the region at 0x1000"):
        image.fail(0x1020, 8)
    with pytest.raises(StimulusError, match="not aligned"):
        image.fail(0x2004, 8)
    with pytest.raises(StimulusError, match="empty failing region"):
        image.fail(0x2000, 0)
    for index in range(3):
        image.add(0x10_0000 * (index + 1), b"y")
    with pytest.raises(StimulusError, match=r"4 separate regions; the harness's region map holds 3"):
        image.layout(HarnessShape(regions=3))
    from matndp.sim.batch import stimulus
    monkeypatch.setattr(stimulus, "IMAGE_SECTORS_LIMIT", 4)
    with pytest.raises(StimulusError, match=r"needs 5 sectors; the harness's image index reaches 4"):
        image.layout(HarnessShape())
    monkeypatch.undo()
    # Touching regions merge into one, whatever their sizes; a failing region takes an
    # entry of the map and no image sectors.
    merged = MemoryImage(SECTOR).add(0, b"a").add(SECTOR, np.zeros(3 * SECTOR, dtype=np.uint8)) \
        .add(4 * SECTOR, b"c")
    layout, sectors = merged.layout(HarnessShape(regions=1))
    assert layout.base.tolist() == [0] and len(sectors) == 5
    layout, sectors = merged.fail(8 * SECTOR, SECTOR).layout(HarnessShape(regions=2))
    assert layout.base.tolist() == [0, 8] and layout.failing.tolist() == [False, True]
    assert len(sectors) == layout.image_sectors == 5
    assert layout.image_index([8 * SECTOR, 4 * SECTOR]).tolist() == [-1, 4]
    assert layout.failing_at([8 * SECTOR, 4 * SECTOR, 9 * SECTOR]).tolist() == [True, False, False]


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="BatchTiming.latency must be in 1..65535, not 0"):
        BatchTiming(latency=0)
    with pytest.raises(ValueError, match=r"memory_request_pause must be in \[0, 1\), not 1.0"):
        BatchTiming(memory_request_pause=1.0)
    with pytest.raises(TypeError, match="interval must be an int"):
        BatchTiming(interval=1.5)
    with pytest.raises(ValueError, match="power of two"):
        HarnessShape(in_flight=48)
    with pytest.raises(ValueError, match=r"reorder \(16\) exceeds the harness's reorder pool"):
        BatchJob(CONFIG, timing=BatchTiming(reorder=16))
    with pytest.raises(ValueError, match="has none"):
        BatchJob(CONFIG.__class__(engine=None))
    job = BatchJob(CONFIG)
    with pytest.raises(JobError, match="unknown phase condition"):
        job.run(until=("forever",))
    with pytest.raises(JobError, match="before any were loaded"):
        job.run()
    with pytest.raises(JobError, match="responses=N exactly"):
        job.run(until=("responses",))
    with pytest.raises(JobError, match="needs a budget"):
        job.run(until=())
    with pytest.raises(JobError, match="nothing to dump"):
        job.dump()
    with pytest.raises(JobError, match="timing must be a BatchTiming"):
        job.retime({"latency": 3})
    with pytest.raises(ValueError, match=r"reorder \(16\) exceeds"):
        job.retime(BatchTiming(reorder=16))
    job.retime(BatchTiming(latency=40, gpu_request_pause=0.5))
    assert job.steps[-1]["ports"]["latency"] == 40 and "seed" not in job.steps[-1]["ports"]
    with pytest.raises(JobError, match="cannot switch from reorder 1 to 4 within a run"):
        job.retime(BatchTiming(reorder=4))
    with pytest.raises(JobError, match="picklable"):
        job.runtime(lambda runtime: None)
    with pytest.raises(JobError, match="unknown log"):
        BatchJob(CONFIG, logs=("trace",))
    with pytest.raises(ValueError, match="chunk must be"):
        KernelBatch([Launch("relu_fwd", {"elements": 16})], chunk=0)


# --- the models the checks use ----------------------------------------------------------------
def _loop_memory(image, base, addr, write, data, mask, failing=()):
    """Request by request over a dict: the specification, written plainly. ``failing``:
    the sector addresses of a failing region."""
    memory = {base + SECTOR * k: image[k].copy() for k in range(len(image))}
    read = []
    for a, w, d, m in zip(addr, write, data, mask):
        sector = memory.get(int(a))
        if int(a) in failing:
            read.append((np.zeros(SECTOR, dtype=np.uint8), ResponseStatus.SLAVE_ERROR.value))
            continue
        if sector is None:
            read.append((np.zeros(SECTOR, dtype=np.uint8), ResponseStatus.DECODE_ERROR.value))
            continue
        read.append((sector.copy(), ResponseStatus.OKAY.value))
        if w:
            enabled = [(int(m) >> b) & 1 == 1 for b in range(SECTOR)]
            sector[enabled] = d[enabled]
    final = np.array([memory[base + SECTOR * k] for k in range(len(image))])
    return read, final


def test_the_memory_model_matches_a_plain_replay():
    rng = np.random.default_rng(5)
    base, sectors, count = 0x4000, 16, 2000
    image = rng.integers(0, 256, (sectors, SECTOR), dtype=np.uint8)
    failing = base + SECTOR * sectors + SECTOR      # one sector past an unmapped one
    layout, _ = MemoryImage(SECTOR).add(base, image).fail(failing, SECTOR).layout(HarnessShape())
    addr = (base + SECTOR * rng.integers(-2, sectors + 3, count)).astype(np.uint64)
    write = rng.random(count) < 0.6
    data = rng.integers(0, 256, (count, SECTOR), dtype=np.uint8)
    mask = rng.integers(0, 1 << 32, count, dtype=np.uint64)
    mask[rng.random(count) < 0.3] = (1 << 32) - 1
    got, status, final = replay_memory(layout, image, addr, write, data, mask)
    expected, expected_final = _loop_memory(image, base, addr, write, data, mask, {failing})
    for row in np.flatnonzero(~write):
        assert np.array_equal(got[row], expected[row][0]) and status[row] == expected[row][1], row
    assert np.array_equal(final, expected_final)
    assert (status == ResponseStatus.DECODE_ERROR.value).any()
    assert (status == ResponseStatus.SLAVE_ERROR.value).any()


def test_matching_follows_the_lowest_entry():
    entries = {0: FilterRange(0x100, 0x40, on_write=True), 1: FilterRange(0x80, 0x100, on_read=True,
                                                                          on_write=True)}
    addr = np.array([0x80, 0x100, 0x13f, 0x140, 0x180], dtype=np.uint64)
    assert matching_entries(entries, addr, [1, 1, 0, 1, 0]).tolist() == [1, 0, 1, 1, -1]


# --- through the RTL --------------------------------------------------------------------------
def _kernel_launches():
    problem = {"rows": 8, "channels": 16}
    return [Launch("bias_relu", problem), Launch("bn_stats", problem)]


# The per-cycle testbench needs a Verilator build of the engine slice of its own (a minute
# and more) that no other test of the default suite uses; the kernels' bits through the
# harness, under back-pressure, are checked by default below.
@pytest.mark.slow
def test_one_scenario_run_both_ways_gives_the_same_logs(tmp_path):
    """The per-cycle testbench (Python drivers on the slice) and the batch harness, the same
    stimulus and the same memory timing (fixed latency, in order, no pauses): every log is
    the same line for line, cycles counted from the first GPU request; so are the outputs.
    The initializers' memory requests, made while the runtime programs the slice, come in
    the same order; their cycles follow the register bus, which the harness registers; so
    do the falls of irq as the runtime acknowledges a completion (its rise is compared)."""
    batch = KernelBatch(_kernel_launches(), seed=3, unrelated_per_access=1, max_gap=2,
                        timing=BatchTiming(latency=12), settle=2000)
    harness = batch.run(directory=tmp_path / "harness")
    replay = batch.run(directory=tmp_path / "replay", replay=True)
    for run in (harness, replay):
        run.check()
    origins = [run.result.log("gpu_requests")["cycle"][0] for run in (harness, replay)]
    for name in ("gpu_requests", "mem_requests", "gpu_responses", "events", "irq"):
        ours, theirs = harness.result.log(name), replay.result.log(name)
        assert len(ours["cycle"]) == len(theirs["cycle"]) > 0, name
        for field, values in ours.items():
            if field != "cycle":
                assert np.array_equal(values, theirs[field]), f"{name}.{field}"
        if name == "irq":
            timed = (ours["cycle"][:1], theirs["cycle"][:1])
        else:
            after = ours["cycle"] >= origins[0]
            assert np.array_equal(after, theirs["cycle"] >= origins[1]), name
            timed = (ours["cycle"][after], theirs["cycle"][theirs["cycle"] >= origins[1]])
        assert np.array_equal(timed[0] - origins[0], timed[1] - origins[1]), name
    engine = harness.result.log("mem_requests")["id"] >> np.uint64(CONFIG.mem_id_width - 1)
    after = harness.result.log("mem_requests")["cycle"] >= origins[0]
    assert engine[after].sum() > 0, "the engine made no memory request in the stream: a weak comparison"
    assert len(harness.result.log("gpu_responses")["cycle"]) > 0
    for ours, theirs in zip(harness.outputs, replay.outputs):
        for name in ours:
            assert np.array_equal(ours[name].view(np.uint8), theirs[name].view(np.uint8)), name


def test_kernels_are_bit_exact_under_back_pressure_on_every_stream(tmp_path):
    """bias_relu and bn_stats at once, written by the GPU with unrelated traffic and idle
    gaps, in chunks of 24 requests; every stream paused at random, memory reordering."""
    timing = BatchTiming.pressure(0.3, latency=17, reorder=4, seed=11)
    batch = KernelBatch(_kernel_launches(), seed=5, timing=timing, unrelated_per_access=1,
                        max_gap=3, chunk=24)
    run = batch.run(directory=tmp_path)
    summary = run.check()
    assert len(summary["phases"]) > 2 and summary["engine_requests"] > 0
    assert summary["write_events"] == sum(plan.launch.expected_triggers for plan in batch.plans)
    assert run.result.phases()[0]["gated_cycles"] >= 0


def _gpu_job(rng, shape, timing):
    """A GPU-only job over two images and three chunks, an unmapped read and write and a
    read and write of a failing region in the second chunk, register accesses between
    phases."""
    base, sectors = 0x20_0000, 64
    job = BatchJob(CONFIG, shape=shape, timing=timing)

    def image():
        return MemoryImage(SECTOR).add(base, rng.integers(0, 256, sectors * SECTOR, dtype=np.uint8)) \
            .fail(0x90_1000, 2 * SECTOR)

    def chunk(count):
        return RequestStream(CONFIG, addr=base + SECTOR * rng.integers(0, sectors, count),
                             write=rng.random(count) < 0.5,
                             data=rng.integers(0, 256, (count, SECTOR), dtype=np.uint8),
                             mask=rng.integers(0, 1 << 32, count, dtype=np.uint64),
                             id=np.arange(count) % 256, gap=rng.integers(0, 4, count))
    job.load(image=image())
    job.runtime("probe")
    job.load(requests=chunk(200))
    job.run(until=("responses",), responses=20)
    job.run()                                           # the rest of the chunk
    second = chunk(150)
    second.addr[10] = 0x90_0000                         # unmapped: a read and a write
    second.write[10] = False
    second.addr[11] = 0x90_0020
    second.write[11] = True
    second.addr[12:14] = 0x90_1020                      # failing: a read and a write
    second.write[12:14] = [False, True]
    job.load(requests=second)
    job.run()
    errors = [job.runtime("read_fields", name) for name in ("mem_read_errors", "mem_write_errors")]
    job.dump()
    job.load(requests=chunk(120), image=image())
    job.run(until=("sent",), budget=40)                 # ends on its budget
    job.run()
    job.dump()
    return job, errors


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory):
    timing = BatchTiming.pressure(0.25, latency=9, interval=2, reorder=8, seed=5)
    job, errors = _gpu_job(np.random.default_rng(2), HarnessShape(), timing)
    result = run_batch(job, directory=tmp_path_factory.mktemp("gpu"))
    result.error_keys = errors
    return result


def test_a_stream_runs_chunk_by_chunk_without_a_reset(gpu_run):
    phases = gpu_run.phases()
    assert [phase["reason"] for phase in phases] == ["until", "until", "until", "budget", "until"]
    assert phases[3]["cycles"] == 40
    starts = [phase["start_cycle"] for phase in phases]
    ends = [phase["end_cycle"] for phase in phases]
    assert all(end < start for end, start in zip(ends, starts[1:])), (starts, ends)
    assert phases[-1]["gpu_requests"] == 200 + 150 + 120      # counted across the chunks
    summary = check_gpu_path(gpu_run)
    assert summary["dumps_checked"] == 2 and summary["engine_requests"] == 0
    responses = gpu_run.log("gpu_responses")
    assert (responses["status"] == ResponseStatus.DECODE_ERROR.value).sum() == 1
    assert (responses["status"] == ResponseStatus.SLAVE_ERROR.value).sum() == 1
    errors = [gpu_run[key] for key in gpu_run.error_keys]
    assert errors == [{"count": 2}, {"count": 2}], "MEM_READ_ERRORS, MEM_WRITE_ERRORS"
    assert phases[2]["unmapped"] == 2


def _tampered(result, tmp_path, name, change):
    copy = tmp_path / "tampered"
    shutil.copytree(result.directory, copy)
    path = copy / f"{name}.log"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(change(lines)))
    return BatchResult(copy, result.job)


def _flip_last_digit(line):
    digit = "0" if line[-2] != "0" else "1"
    return line[:-2] + digit + "\n"


@pytest.mark.parametrize("name, change, message", [
    ("gpu_responses", lambda lines: [_flip_last_digit(lines[0])] + lines[1:], "data differs"),
    ("gpu_responses", lambda lines: lines[:-1], "GPU responses for"),
    ("gpu_responses", lambda lines: lines + lines[-1:], "GPU responses for"),
    ("mem_requests", lambda lines: lines[:5] + lines[6:], "memory saw"),
    ("mem_requests", lambda lines: lines[:5] + [lines[6], lines[5]] + lines[7:], "differs"),
    ("gpu_requests", lambda lines: lines[:3] + [_flip_last_digit(lines[3])] + lines[4:], "addr differs"),
])
def test_the_checks_notice_a_corrupted_log(gpu_run, tmp_path, name, change, message):
    with pytest.raises(CheckFailed, match=message):
        check_gpu_path(_tampered(gpu_run, tmp_path, name, change))


def _memory_job(sectors, seed):
    """GPU reads and writes spread over an image of ``sectors`` sectors, its last sector
    among them, under back-pressure on every stream; then a dump."""
    rng = np.random.default_rng(seed)
    base, count = 0x100_0000, 400
    job = BatchJob(CONFIG, timing=BatchTiming.pressure(0.2, latency=7, reorder=4, seed=seed))
    job.load(image=MemoryImage(SECTOR).add(base, rng.integers(0, 256, sectors * SECTOR, dtype=np.uint8)))
    index = rng.integers(0, sectors, count)
    index[:2] = sectors - 1
    job.load(requests=RequestStream(CONFIG, addr=base + SECTOR * index, write=rng.random(count) < 0.5,
                                    data=rng.integers(0, 256, (count, SECTOR), dtype=np.uint8),
                                    id=np.arange(count) % 256, gap=rng.integers(0, 3, count)))
    job.run()
    job.dump()
    return job


def test_a_larger_memory_runs_on_the_same_build(tmp_path, monkeypatch):
    """The memory is allocated by each image load: a job whose image is 40 times another's
    (and larger than the 2 MiB a build used to hold) runs on the same build, which is not
    made again; both read and write their last sectors."""
    from matndp.sim import runner
    from matndp.sim.batch.parameters import ICARUS_IMAGE_SECTORS
    builds = []
    build = runner._build

    def recording(**options):
        made = build(**options)
        executable = made[1] / options["toplevel"]
        builds.append((made[1], executable.stat().st_mtime_ns))
        return made
    monkeypatch.setattr(runner, "_build", recording)
    small, large = _memory_job(2048, 1), _memory_job(40 * 2048, 2)
    assert len(large.images["0-load"]) > ICARUS_IMAGE_SECTORS
    for name, job in (("small", small), ("large", large)):
        summary = check_gpu_path(run_batch(job, directory=tmp_path / name))
        assert summary["dumps_checked"] == 1
    assert len(builds) == 2 and builds[0] == builds[1], builds


def test_an_image_larger_than_icarus_s_memory_is_refused_before_a_build():
    from matndp.sim.batch.parameters import ICARUS_IMAGE_SECTORS
    job = _memory_job(ICARUS_IMAGE_SECTORS + 1, 3)
    with pytest.raises(ValueError, match=rf"an image of {ICARUS_IMAGE_SECTORS + 1} sectors: the "
                                         rf"harness's memory under Icarus holds {ICARUS_IMAGE_SECTORS}"):
        run_batch(job, simulator="icarus")


@pytest.mark.slow
def test_the_stand_alone_driver_replays_a_run_to_the_same_memory(tmp_path):
    """The plain C++ loop links the same memory (its C++ beside the harness): it replays a
    run of an image larger than a build used to hold and dumps the same image."""
    from matndp.sim.batch.standalone import run_standalone
    result = run_batch(_memory_job(40 * 2048, 2), directory=tmp_path / "run")
    measured = run_standalone(result)
    assert measured["phases"] == len(result.phases())
    ours = sorted(result.directory.glob("image_out-*.hex"))
    theirs = sorted(pathlib.Path(measured["directory"]).glob("image_out-*.hex"))
    assert [path.name for path in ours] == [path.name for path in theirs] != []
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(ours, theirs))


@pytest.mark.slow
def test_a_short_run_under_icarus(tmp_path):
    batch = KernelBatch([Launch("relu_fwd", {"elements": 64})], seed=2, unrelated_per_access=1,
                        timing=BatchTiming.pressure(0.2, latency=6, reorder=2))
    batch.run(simulator="icarus", directory=tmp_path).check()


@pytest.mark.slow
def test_a_dnn_stream_in_chunks(tmp_path):
    """The benchmark's stream, smaller: real layer outputs through bias_relu and bn_stats,
    as many unrelated requests, random back-pressure, four chunks."""
    from matndp.sim.bench.batch import dnn_batch
    batch = dnn_batch(64, chunk=2048)
    summary = batch.run(directory=tmp_path).check()
    assert len(summary["phases"]) >= 4 and summary["gpu_requests"] == 8192


@pytest.mark.slow
def test_the_waves_option_records_the_run(tmp_path):
    batch = KernelBatch([Launch("relu_fwd", {"elements": 64})], seed=4, unrelated_per_access=1,
                        timing=BatchTiming.pressure(0.2, latency=6))
    batch.run(directory=tmp_path, waves=True).check()
    assert (tmp_path / "waves.fst").stat().st_size > 1000


def test_a_run_folder_given_relative_is_made_and_passed_on_absolute(tmp_path, monkeypatch):
    from matndp.sim.batch.run import _directory
    monkeypatch.chdir(tmp_path)
    folder = _directory("runs/one", "harness-")
    assert folder.is_absolute() and folder == tmp_path / "runs" / "one" and folder.is_dir()
