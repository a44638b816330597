"""RTL configurations: each built once under a hash of its configuration; the rtl-bench
point function runs a library kernel through the RTL and checks it against the ISS."""

import json

import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.sim.designs import config_from_json, ndp_slice_verilog
from matndp.sim.designs import files as designs_files
from matndp.sim.sweep import LocalPool, ResultFile, parse_spec, run_sweep
from matndp.sim.sweep.rtl_build import rtl_build, rtl_build_key
from matndp.sim.sweep.rtl_points import ndp_config


# Exporting a slice with its engine takes tens of seconds; the cache does not care.
SMALL = NDPConfig(trigger=TriggerConfig(filter_entries=2), engine=None)


@pytest.fixture
def build_root(tmp_path, monkeypatch):
    monkeypatch.setenv("MATNDP_BUILD", str(tmp_path))
    return tmp_path


def test_a_configuration_is_exported_once_under_the_hash_of_its_parameters(build_root):
    verilog, built = rtl_build(SMALL)
    entry = build_root / "sweep" / "rtl" / rtl_build_key(SMALL)
    assert built and (entry / "verilog.txt").read_text() == f"{verilog}\n"
    assert config_from_json((entry / "config.json").read_text()) == SMALL
    # the very file the tests and commands simulate, so the compiled model is shared
    assert verilog == ndp_slice_verilog(SMALL).resolve()
    assert "module ndp_slice" in verilog.read_text()
    stamp = verilog.stat().st_mtime_ns
    again, built_again = rtl_build(SMALL)
    assert again == verilog and not built_again and verilog.stat().st_mtime_ns == stamp
    verilog.unlink()            # a build tree cleaned under it: exported again
    third, built_third = rtl_build(SMALL)
    assert built_third and third.exists()


def test_a_file_made_from_other_rtl_is_exported_again(build_root):
    """The entry names a file; whether that file is current is the design cache's key, so
    a change of the RTL after the entry was made is not simulated stale."""
    verilog, _ = rtl_build(SMALL)
    key_file = verilog.with_name(verilog.name + ".key")
    key_file.write_text("a key of other RTL")
    verilog.write_text("// exported from other RTL\n")
    designs_files._exported.cache_clear()      # as a new process would see it
    again, built = rtl_build(SMALL)
    assert again == verilog and built
    assert "module ndp_slice" in verilog.read_text()
    assert key_file.read_text() != "a key of other RTL"


def test_distinct_configurations_have_distinct_builds():
    other = NDPConfig(trigger=TriggerConfig(filter_entries=2, event_queue_depth=4),
                      engine=None)
    assert rtl_build_key(other) != rtl_build_key(SMALL)
    assert rtl_build_key(NDPConfig(**{**SMALL.__dict__})) == rtl_build_key(SMALL)


def test_point_parameters_make_the_slice_configuration():
    spec = parse_spec({"point": "rtl-bench", "fixed": {"slots": 8, "event_queue_depth": 4},
                       "axes": {"sub_cores": [1, 2]}})
    configs = [ndp_config(point.config) for point in spec.points()]
    assert [c.engine.sub_cores for c in configs] == [1, 2]
    assert all(c.engine.slots == 8 and c.trigger.event_queue_depth == 4 and c.lanes == 8
               for c in configs)
    assert configs[0].engine.scratchpad_bytes == EngineConfig().scratchpad_bytes


@pytest.mark.slow
def test_rtl_bench_runs_a_kernel_through_the_rtl_and_agrees_with_the_iss(tmp_path):
    # The default slice, under Verilator, with and without back-pressure: one build.
    spec = parse_spec({"point": "rtl-bench", "fixed": {"kernel": "relu_fwd",
                                                      "problem": {"elements": 256}},
                       "axes": {"pressure": [0.0, 0.3]}, "seeds": [5]})
    summary = run_sweep(spec, tmp_path / "rtl.jsonl", LocalPool(2), progress=False)
    assert (summary.run, summary.failed) == (2, 0)
    lines = ResultFile(tmp_path / "rtl.jsonl").load()
    for line in lines:
        results = line["results"]
        assert results["complete"] and results["error"] is None
        assert results["matches_iss"] and results["mismatched_outputs"] == []
        assert results["triggers"] == 256 // 8 and results["cycles"] > results["triggers"]
        assert results["stream_rule_violations"] == 0
        assert results["rtl_build"] == rtl_build_key(NDPConfig())
    json.dumps(lines)
