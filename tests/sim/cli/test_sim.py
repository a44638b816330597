"""``matndp sim``'s co-simulation options reach the co-simulation as asked: ``--slices``
picks the slices spread over the GPU, for a block and for the whole iteration, on the pool
``--workers`` asks for; ``--no-overlap`` runs the steps one after another (the runs
themselves stood in for: tests/sim/flows runs them)."""

import pathlib

import pytest

from matndp.sim.flows import trigger_layer
from matndp.sim.flows.cosim import iteration, run
from matndp.sim.sweep.runners import LocalPool

from .commands import exit_code


@pytest.fixture
def asked(monkeypatch):
    """What the command asked of the co-simulation; the run stops there (as Ctrl-C would)."""
    calls = {}

    def stand_in(name):
        def record(output, **options):
            calls[name] = options
            raise KeyboardInterrupt
        return record
    monkeypatch.setattr(trigger_layer, "run_trigger_layer", lambda *args, **options: None)
    monkeypatch.setattr(run, "run_cosim", stand_in("block"))
    monkeypatch.setattr(run, "run_cosim_iteration", stand_in("iteration"))
    monkeypatch.setattr(iteration, "share_blocks", lambda setup: ["planned"])
    return calls


def test_slices_spread_over_the_gpu_for_a_block_on_the_pool_asked_for(asked, tmp_path, capfd):
    assert exit_code(["sim", "--output", str(tmp_path), "--slices", "4", "--workers", "2",
                      "--window", "none"]) == 130
    options = asked["block"]
    assert options["slices"] == [0, 40, 80, 120]
    assert isinstance(options["runner"], LocalPool) and options["runner"].jobs == 2
    assert options["share"].setup.slice_index == 0
    # On the terminal, not in the run's log: the jobs kept to resume from, then the
    # interrupt's own line.
    err = capfd.readouterr().err.strip().splitlines()
    assert err[-2].startswith("matndp sim --slices: interrupted; the jobs that finished are kept in")
    assert err[-1] == "matndp sim: interrupted; no output was left half-written"


def test_an_interrupt_in_the_cosimulation_leaves_no_folder_and_says_so_last(monkeypatch, tmp_path, capfd):
    """The trigger part has written its files by then; the folder the run made goes, and
    the command's own line is the last on the terminal."""
    output = tmp_path / "sim"

    def trigger_part(path, **options):
        pathlib.Path(path).mkdir(parents=True)
        (pathlib.Path(path) / "report.md").write_text("the trigger part\n")

    def interrupted(output, **options):
        raise KeyboardInterrupt
    monkeypatch.setattr(trigger_layer, "run_trigger_layer", trigger_part)
    monkeypatch.setattr(run, "run_cosim", interrupted)
    assert exit_code(["sim", "--output", str(output), "--window", "none"]) == 130
    assert capfd.readouterr().err.strip().splitlines()[-1] == \
        "matndp sim: interrupted; no output was left half-written"
    assert list(tmp_path.iterdir()) == []


def test_one_slice_is_the_single_slice_run(asked, tmp_path):
    assert exit_code(["sim", "--output", str(tmp_path), "--window", "none"]) == 130
    assert asked["block"]["slices"] == [0] and asked["block"]["runner"] is None
    assert asked["block"]["share"].setup.overlap


def test_no_overlap_runs_the_steps_one_after_another(asked, tmp_path):
    assert exit_code(["sim", "--output", str(tmp_path), "--window", "none", "--no-overlap"]) == 130
    share = asked["block"]["share"]
    assert not share.setup.overlap and share.overlap["merged"] == []
    assert all(step.concurrent_with is None for step in share.steps)


def test_every_slice_of_the_iteration(asked, tmp_path):
    assert exit_code(["sim", "--output", str(tmp_path), "--full-iteration", "--slices", "all",
                      "--workers", "1"]) == 130
    assert asked["iteration"]["slices"] == list(range(160))
    assert asked["iteration"]["shares"] == ["planned"] and asked["iteration"]["runner"] is None


def test_overlap_without_the_co_simulation_is_refused(asked, tmp_path, capsys):
    assert exit_code(["sim", "--output", str(tmp_path), "--no-cosim", "--no-overlap"]) == 2
    assert "--no-overlap: the co-simulation is off" in capsys.readouterr().err
    assert asked == {}
