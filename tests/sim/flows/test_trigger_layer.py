"""`make sim`'s run, shortened: it writes a waveform, a grouped GTKWave save file and a
report whose numbers agree with the traffic it generated."""

import json
import re

import pytest

from matndp.hw.config import NDPConfig
from matndp.sim.flows.trigger_layer import run_trigger_layer
from matndp.sim.flows.trigger_traffic import build_scenario, golden_replay

from .documented_files import documented_files, written


@pytest.mark.xdist_group("trigger_layer")
def test_trigger_layer_writes_waveform_save_file_and_report(trigger_layer_run):
    folder, report = trigger_layer_run("icarus")
    wave = folder / "ndp_slice.fst"
    assert wave.stat().st_size > 10_000
    save = (folder / "ndp_slice.gtkw").read_text()
    for group in ("-gpu", "-mem", "-trigger", "-csr"):
        assert group in save
    assert "ndp_slice.events__valid" in save and "ndp_slice.gpu__req__payload[" in save

    config = NDPConfig(engine=None)
    scenario = build_scenario(config, tiles=1, seed=trigger_layer_run.seed)
    golden = golden_replay(scenario)
    expected_events = len(golden.write_events) + len(golden.read_events)
    assert report["rtl"]["requests"] == len(scenario.requests)
    assert report["rtl"]["trigger_events"] == expected_events
    assert report["host"]["gpu_reread_bytes_avoided"] == len(golden.write_events) * config.sector_bytes
    assert json.loads((folder / "report.json").read_text()) == report
    assert "trigger events" in (folder / "report.md").read_text()
    # What docs/waveforms.md lists is what the run wrote, no more and no less.
    assert written(folder) == documented_files("waveforms.md", "Reading the waveform of `make sim`")


def test_the_run_logs_a_readable_line_and_the_compilers_output(tmp_path, monkeypatch):
    """Run as `make sim` runs it, under a command's log: the testbench's line says what ran
    (its every-event measurements go to the report's JSON), and the simulator's build and
    run output are in the log."""
    from matndp.sim.cli.output import tool_output
    monkeypatch.setenv("MATNDP_BUILD", str(tmp_path / "build"))
    with tool_output("sim") as tools:
        run_trigger_layer(tmp_path / "sim", simulator="icarus", tiles=1, seed=3, progress=tools.step)
    [log] = (tmp_path / "build" / "logs").glob("sim-*.log")
    text = log.read_text()
    assert max(len(line) for line in text.splitlines()) < 500
    assert re.search(r"dnn_stream: \d+ requests \(\d+ reads\) in \d+ cycles, \d+ trigger events", text)
    assert "--- the build of ndp_slice under Icarus Verilog" in text
    # The steps, the build's among them, stamped with the time.
    assert re.search(r"^\[[\d:]+\] sim: building and running the trigger part", text, re.M)
    assert re.search(r"^\[[\d:]+\]   ndp_slice: building it under Icarus Verilog, the first build", text, re.M)
