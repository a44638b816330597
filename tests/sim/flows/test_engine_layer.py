"""The engine part of `make sim`: two launches on real ResNet-50 conv outputs through the
slice with its engine, checked bit for bit against the instruction-set simulator and the
goldens.

`make sim` names its output folder relative to the working folder, while the testbench
runs in the simulator's own folder; the default run here does the same. The traced run,
which `make sim` makes, needs a build of the engine slice with FST tracing of its own
(about 13 minutes on two cores, beside the untraced build the default suite shares), so
it is `-m slow`: it checks that the traced build gives the untraced build's outputs and
cycle counts exactly, and that the waveform holds the save file's engine groups with the
run's traffic on them. The FST is read independently of the testbench (pywellen)."""

import re

import numpy as np
import pytest
import pywellen

from matndp.sim.flows.engine_layer import run_engine_layer


pytestmark = pytest.mark.xdist_group("engine_slice")

CYCLE_PS = 10_000


def _passed(report):
    for entry in report["entries"]:
        assert entry["complete"] and entry["error"] is None, entry
        assert entry["completed_uthreads"] == entry["triggers"], entry
        assert entry["bit_exact"], entry
    assert report["passed"]


def test_the_engine_part_runs_in_a_folder_named_relative_to_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = run_engine_layer("sim", rows=2, waves=False)
    _passed(report)
    assert [entry["kernel"] for entry in report["entries"]] == ["bias_relu", "bn_stats"]
    assert report["files"] == {}
    assert (tmp_path / "sim" / "engine_report.md").read_text().count("| yes |") == 2


def _outputs(folder):
    return {path.name: np.load(path) for path in sorted((folder / "engine_run").glob("out*.npy"))}


def _transfers(dump, variables, names):
    """The cycles in which every signal of ``names`` is 1 (each sampled mid-cycle), up to
    their last change in the dump."""
    chosen = [variables[name] for name in names]
    changes = []
    dump.stream_changes(lambda time, signal, value: changes.append(time), chosen)
    signals = [variable.signal for variable in chosen]
    return sum(1 for time in range(CYCLE_PS // 2, max(changes) + CYCLE_PS, CYCLE_PS)
               if all(signal.value_at(time) == 1 for signal in signals))


@pytest.mark.slow
def test_the_traced_run_equals_the_untraced_run_and_its_waveform_shows_the_engine(tmp_path):
    untraced = run_engine_layer(tmp_path / "untraced", waves=False)
    traced = run_engine_layer(tmp_path / "traced")
    _passed(untraced)
    _passed(traced)
    assert traced["entries"] == untraced["entries"]
    for key in ("gpu_requests", "ndp_memory_requests", "instructions", "gpu_stall_cycles"):
        assert traced[key] == untraced[key], key
    expected = _outputs(tmp_path / "untraced")
    got = _outputs(tmp_path / "traced")
    assert list(got) == list(expected) and expected
    for name, values in expected.items():
        assert np.array_equal(got[name], values), name

    folder = tmp_path / "traced"
    assert traced["files"] == {"waveform": str(folder / "engine.fst"),
                               "gtkwave": str(folder / "engine.gtkw")}
    save = (folder / "engine.gtkw").read_text()
    assert re.search(r'^\[dumpfile\] "engine\.fst"$', save, re.M)
    titles = re.findall(r"^@800200\n-(.*)$", save, re.M)
    assert {"trigger events into the engine", "engine memory requests"} <= set(titles)
    dump = pywellen.Waveform(str(folder / "engine.fst"))
    variables = {variable.full_name: variable for variable in dump.all_vars()}
    traces = [re.sub(r"\[\d+:\d+\]$", "", line) for line in save.splitlines()
              if line.startswith("ndp_slice.")]
    assert [trace for trace in traces if trace not in variables] == []
    assert "ndp_slice.engine.events__valid" in traces and "ndp_slice.arbiter.ndp__req__valid" in traces

    # Every trigger event the engine took, and every memory request it made, is in the dump.
    events = _transfers(dump, variables, ["ndp_slice.engine.events__valid",
                                          "ndp_slice.engine.events__ready"])
    assert events == sum(entry["triggers"] for entry in traced["entries"])
    requests = _transfers(dump, variables, ["ndp_slice.arbiter.ndp__req__valid",
                                            "ndp_slice.arbiter.ndp__req__ready"])
    assert requests == traced["ndp_memory_requests"]
