"""Run a :class:`~matndp.sim.batch.job.BatchJob`: in batch mode through the harness (:func:`run_batch`), or
cycle by cycle with the Python drivers (:func:`replay_batch`), and read what it left
(:class:`BatchResult`: the logs as numpy columns, the phases, the runtime's answers, the
memory dumps).
"""

import functools
import pathlib
import pickle
import re
import tempfile

import numpy as np

from matndp.sim.harnesses import harness_file
from matndp.sim.designs import evaluate_at_time_zero, ndp_slice_verilog
from matndp.sim.runner import build_root, prepare_build, run_cocotb, write_if_changed
from matndp.sim.batch.job import RESULTS_FILE, BatchJob
from matndp.sim.batch.parameters import ICARUS_IMAGE_SECTORS, LOGS, harness_parameters
from matndp.sim.batch.records import HexFormatError, RecordFormat, fixed_width_lines


__all__ = ["run_batch", "prepare_batch", "replay_batch", "BatchResult", "MemoryContents", "HARNESS_SOURCE",
           "MEMORY_SOURCE",
           "harness_ports", "harness_sources", "read_log"]


HARNESS_SOURCE = harness_file("slice_harness.v")
# The harness's memory under Verilator (DPI), allocated by each image load.
MEMORY_SOURCE = harness_file("slice_harness_memory.cpp")
HARNESS_TOP = "slice_harness"
_CYCLE = RecordFormat([("cycle", 0, 64)])


@functools.cache
def harness_ports():
    """The harness module's port names, from its Verilog: the only signals its build
    exposes."""
    text = HARNESS_SOURCE.read_text()
    header = text[text.index(f"module {HARNESS_TOP}"):text.index(");", text.index(") ("))]
    return tuple(re.findall(r"(?:input|output)\s+(?:wire|reg)\s*(?:\[[^\]]*\])?\s*([A-Za-z_]\w*)",
                            header))


def _icarus_slice(config):
    path = ndp_slice_verilog(config)
    return write_if_changed(path.with_name(path.stem + "-icarus.v"),
                            evaluate_at_time_zero(path.read_text()))


def harness_sources(config, simulator):
    """The files of a harness build: the slice of ``config`` and the harness (in Verilog),
    and under Verilator the memory's C++."""
    if simulator == "icarus":
        return [_icarus_slice(config), HARNESS_SOURCE]
    return [ndp_slice_verilog(config), HARNESS_SOURCE, MEMORY_SOURCE]


def _directory(directory, prefix):
    """The run's folder, made, as an absolute path: the testbench runs in the build's
    own folder."""
    if directory is None:
        root = build_root() / "batch_runs"
        root.mkdir(parents=True, exist_ok=True)
        return pathlib.Path(tempfile.mkdtemp(prefix=prefix, dir=root)).resolve()
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    return directory.resolve()


# What a traced build of the harness records unless told: the harness's and the slice's
# own signals (tracing every signal of the engine makes the build half again as long).
TRACE_SCOPES = (HARNESS_TOP, f"{HARNESS_TOP}.dut")


def _harness_build(config, shape, simulator, traceable, trace_scopes):
    return dict(sources=harness_sources(config, simulator), toplevel=HARNESS_TOP,
                simulator=simulator, fast=True, public=harness_ports(),
                parameters=harness_parameters(config, shape, simulator), build_name="slice-harness",
                traceable=traceable, trace_scopes=trace_scopes or TRACE_SCOPES)


def run_batch(job, *, simulator="verilator", waves=False, directory=None, traceable=False,
              trace_scopes=None):
    """Carry out ``job`` through the batch harness; returns its :class:`BatchResult`.
    ``waves`` records ``waves.fst`` in the run's directory, from a traced build of the
    harness, which ``traceable`` runs use without waves too (one build for both).
    ``trace_scopes``: the scopes a traced build records (default :data:`TRACE_SCOPES`); a
    payload's fields are a scope of their own below it (``scope.port``)."""
    if not isinstance(job, BatchJob):
        raise TypeError(f"expected a BatchJob, not {job!r}")
    if simulator == "icarus":
        largest = max((len(sectors) for sectors in job.images.values()), default=0)
        if largest > ICARUS_IMAGE_SECTORS:
            raise ValueError(f"an image of {largest} sectors: the harness's memory under Icarus "
                             f"holds {ICARUS_IMAGE_SECTORS} (Verilator sizes it per run)")
    directory = _directory(directory, "harness-")
    job.write(directory)
    run_cocotb(**_harness_build(job.config, job.shape, simulator, traceable, trace_scopes),
               test_module="matndp.sim.tb.slice_harness_tb", waves=waves,
               wave_file=directory / "waves.fst" if waves else None,
               extra_env={"MATNDP_BATCH_JOB": str(directory)},
               log_file=directory / "simulator.log")
    return BatchResult(directory, job)


def prepare_batch(config, shape, *, simulator="verilator"):
    """Export the slice of ``config`` and build the harness of ``shape`` that
    :func:`run_batch` uses, running nothing: worker processes that start afterwards find
    both made."""
    prepare_build(**_harness_build(config, shape, simulator, False, None))


def replay_batch(job, *, simulator="verilator", directory=None):
    """Carry out ``job`` cycle by cycle with the Python drivers on the slice alone
    (``sim/tb/slice_replay_tb.py``); returns its :class:`BatchResult`, with logs in the
    harness's format."""
    if not isinstance(job, BatchJob):
        raise TypeError(f"expected a BatchJob, not {job!r}")
    directory = _directory(directory, "replay-")
    job.write(directory)
    run_cocotb(sources=[ndp_slice_verilog(job.config)], toplevel="ndp_slice",
               test_module="matndp.sim.tb.slice_replay_tb", simulator=simulator,
               extra_env={"MATNDP_BATCH_JOB": str(directory)},
               log_file=directory / "simulator.log")
    return BatchResult(directory, job)


class MemoryContents:
    """A memory image read back: ``sectors`` (``(n, sector)`` bytes) laid out by
    ``layout`` (an :class:`~matndp.sim.batch.stimulus.ImageLayout`)."""

    def __init__(self, layout, sectors):
        self.layout = layout
        self.sectors = sectors

    def read(self, addr, nbytes):
        """``nbytes`` bytes from byte address ``addr`` (sector-aligned), as uint8."""
        sector = self.layout.sector_bytes
        count = -(-nbytes // sector)
        indices = self.layout.image_index(addr + sector * np.arange(count, dtype=np.uint64))
        if np.any(indices < 0):
            raise ValueError(f"[{addr:#x}, {addr + nbytes:#x}) is not all in the memory image")
        return self.sectors[indices].reshape(-1)[:nbytes]


class BatchResult:
    """What a run left in ``directory``: ``results`` (by step key: a runtime call's value,
    a phase's measurements, a load's or a dump's cycle) and the logs."""

    def __init__(self, directory, job):
        self.directory = pathlib.Path(directory)
        self.job = job
        self.formats = job.formats
        self.results = pickle.loads((self.directory / RESULTS_FILE).read_bytes())
        self._logs = {}

    def __getitem__(self, key):
        return self.results[key]

    def phases(self):
        """The phases' measurements, in order."""
        return [self.results[step["key"]] for step in self.job.steps if step["kind"] == "run"]

    def time_ps(self, cycle):
        """When cycle ``cycle`` of the logs begins in the run's waveform (ps): the rising
        edge after which the harness's cycle counter reads ``cycle``."""
        clock = self.results.get("clock")
        if clock is None:
            raise KeyError("the run recorded no clock (an older harness testbench)")
        return clock["time_ps"] + (cycle - clock["cycle"]) * clock["period_ps"]

    @property
    def cycles(self):
        """Cycles the phases ran."""
        return sum(phase["cycles"] for phase in self.phases())

    @property
    def phase_wall_s(self):
        """Wall time of the phases (the simulation, without loads and register access)."""
        return sum(phase["wall_s"] for phase in self.phases())

    def log(self, name):
        """Log ``name`` (of :data:`~matndp.sim.batch.parameters.LOGS`) as numpy columns: ``cycle`` and the
        payload's fields."""
        if name not in LOGS:
            raise KeyError(f"no log {name!r}; the harness writes {', '.join(LOGS)}")
        if name not in self.job.logs:
            raise KeyError(f"the job did not keep the {name} log")
        if name not in self._logs:
            self._logs[name] = read_log(self.directory / f"{name}.log", self.formats.logs[name])
        return self._logs[name]

    def image(self, key=None):
        """The memory dumped by dump step ``key`` (default: the last)."""
        dumps = [step for step in self.job.steps if step["kind"] == "dump"]
        if not dumps:
            raise KeyError("the job has no dump step")
        chosen = [step for step in dumps if key is None or step["key"] == key]
        if not chosen:
            raise KeyError(f"no dump step {key!r}; the job's dumps: "
                           f"{', '.join(step['key'] for step in dumps)}")
        step = chosen[-1]
        layout = self.job.layouts[step["layout"]]
        file = self.directory / self.results[step["key"]]["file"]
        sectors = self.formats.sector.unpack(file.read_bytes(), str(file))["data"]
        if len(sectors) != layout.image_sectors:
            raise HexFormatError(f"{file}: {len(sectors)} sectors, the image has {layout.image_sectors}")
        return MemoryContents(layout, sectors)


def read_log(path, payload):
    """A harness log (``<cycle> <payload>`` per line, in hex) as columns."""
    path = pathlib.Path(path)
    text = path.read_bytes()
    rows = fixed_width_lines(text, 17 + payload.digits, str(path))
    if len(rows) and np.any(rows[:, 16] != ord(" ")):
        raise HexFormatError(f"{path}: a line is not '<16 hex digits> <payload>'")
    cycles = _CYCLE.unpack_digits(np.ascontiguousarray(rows[:, :16]), str(path))["cycle"]
    columns = payload.unpack_digits(np.ascontiguousarray(rows[:, 17:]), str(path))
    columns["cycle"] = cycles
    return columns
