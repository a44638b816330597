"""The progress of a long co-simulation: jobs done of the total, simulated cycles per
second and the time left, a line per job in a log and one line refreshed on a terminal."""

import io

import pytest

from matndp.sim.flows.cosim import run as run_module
from matndp.sim.flows.cosim.iteration import share_blocks
from matndp.sim.flows.cosim.progress import JobProgress

from .test_cosim import mlp
from .test_cosim_slices import SETUP


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _line(block, cycles, key=None, status="ok", **others):
    return {"key": key or block, "block": block, "status": status, "cycles": cycles, "wall_s": 1.0, **others}


def test_a_log_gets_a_line_per_job_with_the_pace_and_the_time_left():
    clock, stream = _Clock(), io.StringIO()
    progress = JobProgress(4, stream=stream, clock=clock)
    clock.now += 10
    progress(_line("a", 2_000_000), 1, 4)
    clock.now += 10
    progress(_line("b", 2_000_000), 2, 4)
    clock.now += 5
    progress(_line("c", 0, status="failed"), 3, 4)
    clock.now += 5
    progress(_line("d", 2_000_000), 4, 4)
    lines = stream.getvalue().splitlines()
    # 2 M cycles in 10 s; then 3 jobs' worth of time left at 10 s a job.
    assert lines[0] == "cosim: 1/4 jobs (a done), 200 k simulated cycles/s, about 30 s left"
    assert lines[1] == "cosim: 2/4 jobs (b done), 200 k simulated cycles/s, about 20 s left"
    assert lines[2].startswith("cosim: 3/4 jobs (c failed), 160 k simulated cycles/s, about 8 s left")
    assert lines[3] == "cosim: 4/4 jobs (d done), 200 k simulated cycles/s, 30 s so far"


def test_the_time_left_follows_the_jobs_weights_and_resumed_jobs_set_no_pace():
    clock, stream = _Clock(), io.StringIO()
    progress = JobProgress(3, weights={"a": 1, "b": 1, "c": 8}, stream=stream, clock=clock)
    progress({**_line("a", 5_000_000), "resumed": True}, 1, 3)
    clock.now += 20
    progress(_line("b", 1_000_000), 2, 3)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "cosim: 1/3 jobs (a done), 0 k simulated cycles/s, 0 s so far; 1 from an earlier run"
    # b (weight 1) took 20 s; c weighs 8.
    assert lines[1] == ("cosim: 2/3 jobs (b done), 50 k simulated cycles/s, about 2 min 40 s left; "
                        "1 from an earlier run")


def test_a_terminal_gets_one_line_refreshed_and_ended_after_the_last_job():
    clock, stream = _Clock(), _Terminal()
    progress = JobProgress(2, stream=stream, clock=clock)
    clock.now += 3
    progress(_line("a_long_block_name", 300_000), 1, 2)
    clock.now += 3
    progress(_line("b", 300_000), 2, 2)
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.count("\n") == 1 and text.endswith("\n")
    first, second = text.split("\r")[1:]
    # The second line blanks what is left of the longer first one.
    assert len(second.rstrip("\n")) >= len(first)
    assert second.startswith("cosim: 2/2 jobs (b done), 100 k simulated cycles/s, 6 s so far")


def test_a_job_on_another_slice_than_slice_0_is_named_with_its_slice():
    clock, stream = _Clock(), io.StringIO()
    progress = JobProgress(2, stream=stream, clock=clock)
    clock.now += 10
    progress(_line("fc1", 1_000_000, key="0", slice=0), 1, 2)
    progress(_line("fc1", 1_000_000, key="40", slice=40), 2, 2)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("cosim: 1/2 jobs (fc1 done), ")
    assert lines[1].startswith("cosim: 2/2 jobs (fc1 on slice 40 done), ")


def test_a_run_s_progress_goes_to_its_status_stream(tmp_path, monkeypatch):
    """A command sends standard error to its log; the jobs' progress goes to the stream its
    own lines go to (the terminal)."""
    class Stopped(Exception):
        pass

    def run_block_jobs(jobs, progress, **options):
        progress(_line(jobs[0].block, 1000, key=jobs[0].key, slice=0), 1, len(jobs))
        raise Stopped

    monkeypatch.setattr(run_module, "run_block_jobs", run_block_jobs)
    status = _Terminal()
    with pytest.raises(Stopped):
        run_module.run_cosim_iteration(tmp_path / "cosim", shares=share_blocks(SETUP, mlp(32)),
                                       graph=mlp(32), progress=lambda line: None, status=status)
    assert status.getvalue().startswith("\rcosim: 1/3 jobs (fc1 done), ")
