"""`make sim`'s run, shortened: it writes a waveform, a grouped GTKWave save file and a
report whose numbers agree with the traffic it generated."""

import json

from matndp.hw.config import NDPConfig
from matndp.sim.flows.trigger_layer import run_trigger_layer
from matndp.sim.flows.trigger_traffic import build_scenario, golden_replay


def test_trigger_layer_writes_waveform_save_file_and_report(tmp_path):
    report = run_trigger_layer(tmp_path, simulator="icarus", tiles=1, seed=3)
    wave = tmp_path / "ndp_slice.fst"
    assert wave.stat().st_size > 10_000
    save = (tmp_path / "ndp_slice.gtkw").read_text()
    for group in ("-gpu", "-mem", "-trigger", "-csr"):
        assert group in save
    assert "ndp_slice.events__valid" in save and "ndp_slice.gpu__req__payload[" in save

    config = NDPConfig(engine=None)
    scenario = build_scenario(config, tiles=1, seed=3)
    golden = golden_replay(scenario)
    expected_events = len(golden.write_events) + len(golden.read_events)
    assert report["rtl"]["requests"] == len(scenario.requests)
    assert report["rtl"]["trigger_events"] == expected_events
    assert report["host"]["gpu_reread_bytes_avoided"] == len(golden.write_events) * config.sector_bytes
    assert json.loads((tmp_path / "report.json").read_text()) == report
    assert "trigger events" in (tmp_path / "report.md").read_text()
