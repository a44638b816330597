"""NDP hardware and kernel costs: documented defaults, the calibration file, and the
packet size and lanes of the RTL configuration."""

import json
import re

import pytest

from matndp.host.calibration import DEFAULT_KERNELS, NDPHardware, SCHEMA, load_calibration
from matndp.host.graph import IterationGraph, Op, Tensor
from matndp.host.offload import PlannerConfig, plan_offload
from matndp.hw.config import SLICE_VARIABLE, NDPConfig, named_config, slice_config

from .offload.graphs import GPU, N, calibration_of


def test_calibration_defaults_when_the_file_is_missing(calibration):
    assert calibration.source == "defaults" and calibration.measured_kernels == ()
    assert calibration.describe()["default_kernels"] == sorted(DEFAULT_KERNELS)


def test_calibration_file_replaces_measured_kernels_and_names_the_rest(tmp_path):
    path = tmp_path / "ndp_kernels.json"
    path.write_text(json.dumps({"schema": SCHEMA, "clock_hz": 2e9, "kernels": {
        "relu_fwd": {"cycles_per_packet": 4.0, "fixed_cycles": 30},
        "layernorm_fwd": {"cycles_per_packet": 50},
        "mystery": {"cycles_per_packet": 1}}}))
    calibration = load_calibration(path)
    assert calibration.cost("relu_fwd").cycles_per_packet == 4.0
    assert calibration.cost("relu_fwd").fixed_cycles == 30
    assert calibration.cost("layernorm_fwd").cycles_per_packet == pytest.approx(50)
    assert calibration.cost("layernorm_fwd").two_phase
    # the default split, statistics 14 and apply 11 of 25, scaled to the measured 50
    assert calibration.cost("layernorm_fwd").stream_cycles == pytest.approx(28)
    assert calibration.cost("layernorm_fwd").after_cycles == pytest.approx(22)
    assert calibration.hardware.clock_hz == 2e9
    described = calibration.describe()
    assert described["source"] == str(path)
    assert described["measured_kernels"] == ["layernorm_fwd", "relu_fwd"]
    assert described["ignored_unknown_kernels"] == ["mystery"]
    assert "relu_fwd" not in described["default_kernels"]


def test_a_measured_split_between_streaming_and_after_phases_is_kept(tmp_path):
    path = tmp_path / "ndp_kernels.json"
    path.write_text(json.dumps({"schema": SCHEMA, "kernels": {
        "batchnorm_fwd": {"cycles_per_packet": 9.5, "after_cycles_per_packet": 2.0,
                          "phases": ["bn_stats", "bn_apply"]}}}))
    cost = load_calibration(path).cost("batchnorm_fwd")
    assert (cost.stream_cycles, cost.after_cycles) == (7.5, 2.0) and cost.measured


@pytest.mark.parametrize("document, message", [
    ("{not json", "not valid JSON"),
    (json.dumps({"schema": SCHEMA, "kernels": {"adam": {"cycles_per_packet": 3,
                                                        "after_cycles_per_packet": 3}}}),
     r"after_cycles_per_packet \(3\) must be less than cycles_per_packet \(3\)"),
    (json.dumps({"kernels": {}}), "schema"),
    (json.dumps({"schema": SCHEMA, "kernels": []}), "kernels"),
    (json.dumps({"schema": SCHEMA, "kernels": {"relu_fwd": {}}}), "relu_fwd.*cycles_per_packet"),
    (json.dumps({"schema": SCHEMA, "kernels": {"relu_fwd": {"cycles_per_packet": -1}}}),
     "cycles_per_packet"),
    (json.dumps({"schema": SCHEMA, "kernels": {"relu_fwd": {"cycles_per_packet": 0}}}),
     r"bad.json: kernels.relu_fwd.cycles_per_packet must be positive"),
    (json.dumps({"schema": SCHEMA, "clock_hz": 0, "kernels": {}}), "clock_hz"),
    (json.dumps({"schema": SCHEMA, "ndp_config": [], "kernels": {}}), "ndp_config.*must be an object"),
])
def test_malformed_calibration_is_an_error(tmp_path, document, message):
    path = tmp_path / "bad.json"
    path.write_text(document)
    with pytest.raises(ValueError, match=message):
        load_calibration(path)


def test_missing_explicit_calibration_file_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_calibration(tmp_path / "absent.json")


def test_packet_and_lanes_come_from_the_slice_configuration():
    # a 32-byte sector by default: eight FP32 lanes; 64-byte sectors carry sixteen
    assert (NDPHardware().packet_bytes, NDPHardware().lanes) == (32, 8)
    wide = NDPHardware(slice=NDPConfig(sector_bytes=64))
    assert (wide.packet_bytes, wide.lanes) == (64, 16)


def test_wider_sectors_halve_the_packets_of_a_kernel():
    """A standalone ReLU over 1 M FP32 elements at 1000 cycles per packet on 16 slices at
    1 GHz: 125 000 packets (8 lanes) take 7.8125 ms, 62 500 (16 lanes) 3.90625 ms; the
    8 MB of traffic would take 89 us."""
    tensors = [Tensor("x", (N,), "fp32", "input"), Tensor("y", (N,), "fp32", "activation")]
    graph = IterationGraph("relu", tensors, [Op("relu", "elementwise", "forward", N, ("x",),
                                                ("y",), (), {"ndp_kernel": "relu_fwd"})],
                           batch=1, dtype="fp32")
    for sector, packets in ((32, 125_000), (64, 62_500)):
        hardware = NDPHardware(slices_per_controller=4, clock_hz=1e9,
                               slice=NDPConfig(sector_bytes=sector))
        plan = plan_offload(graph, GPU, calibration_of({"relu_fwd": (1000,)}, hardware),
                            PlannerConfig("all"))
        assert plan.ndp_cycles == packets * 1000
        assert plan.matndp_s == pytest.approx(packets * 1000 / 16e9)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"slices_per_controller": 0}, ValueError, "bad NDP hardware"),
    ({"slices_per_controller": 2.5}, ValueError, "bad NDP hardware"),
    ({"clock_hz": 0.0}, ValueError, "bad NDP hardware"),
    ({"slice": 32}, TypeError, "slice must be an NDPConfig"),
])
def test_bad_hardware_is_refused(kwargs, error, message):
    with pytest.raises(error, match=message):
        NDPHardware(**kwargs)


def test_costs_measured_on_another_slice_are_refused_naming_the_difference(tmp_path):
    from dataclasses import replace
    from matndp.host.calibration import configuration_record
    path = tmp_path / "other.json"
    here = slice_config()
    other = replace(here, engine=replace(here.engine, slots=4), sector_bytes=64)
    path.write_text(json.dumps({"schema": SCHEMA, "ndp_config": configuration_record(other),
                                "kernels": {"relu_fwd": {"cycles_per_packet": 3}}}))
    with pytest.raises(ValueError, match=r"measured on another slice configuration: "
                                         r"engine.slots 4 \(here 32\), sector_bytes 64 \(here 32\)$"):
        load_calibration(path)
    same = tmp_path / "same.json"
    same.write_text(json.dumps({"schema": SCHEMA, "ndp_config": configuration_record(here),
                                "kernels": {"relu_fwd": {"cycles_per_packet": 3}}}))
    assert load_calibration(same).cost("relu_fwd").cycles_per_packet == 3


def test_the_slice_named_by_the_environment_is_the_one_costs_must_be_measured_on(tmp_path, monkeypatch):
    from matndp.host.calibration import configuration_record
    path = tmp_path / "default.json"
    path.write_text(json.dumps({"schema": SCHEMA, "ndp_config": configuration_record(named_config("default")),
                                "kernels": {"relu_fwd": {"cycles_per_packet": 3}}}))
    monkeypatch.setenv(SLICE_VARIABLE, "channel")
    assert NDPHardware().slice is named_config("channel")
    with pytest.raises(ValueError, match=r"measured on another slice configuration: "
                                         r"engine.divide_units None \(here 2\), engine.slots 32 \(here 16\), "
                                         r"engine.sub_cores 1 \(here 4\), "
                                         r"trigger.event_queue_depth 32 \(here 128\)$"):
        load_calibration(path)
    monkeypatch.setenv(SLICE_VARIABLE, "default")
    assert load_calibration(path).cost("relu_fwd").cycles_per_packet == 3


def test_the_instructions_a_packet_are_the_cycles_unless_the_file_counts_them(tmp_path):
    path = tmp_path / "costs.json"
    path.write_text(json.dumps(_kernels(add={"cycles_per_packet": 3.75, "instructions_per_packet": 3},
                                        relu_fwd={"cycles_per_packet": 2.1})))
    calibration = load_calibration(path)
    assert calibration.cost("add").instructions_per_packet == 3
    assert calibration.cost("relu_fwd").instructions_per_packet == 2.1
    # a default is an M2NDP kernel body size: an instruction count
    assert calibration.cost("adam").instructions_per_packet == DEFAULT_KERNELS["adam"].cycles_per_packet


def _kernels(**entries):
    return {"schema": SCHEMA, "kernels": entries}


@pytest.mark.parametrize("document, message", [
    ([1], f'expected a JSON object with "schema": "{SCHEMA}"'),
    ({"kernels": {}}, f'expected a JSON object with "schema": "{SCHEMA}"'),
    ({"schema": SCHEMA}, '"kernels" must be an object of kernel name -> costs'),
    ({"schema": SCHEMA, "ndp_config": 3, "kernels": {}},
     "\"ndp_config\" must be an object (the slice's configuration)"),
    ({"schema": SCHEMA, "clock_hz": 0, "kernels": {}}, "clock_hz must be positive"),
    ({"schema": SCHEMA, "clock_hz": "fast", "kernels": {}},
     "clock_hz: expected a finite, non-negative number, got 'fast'"),
    (_kernels(relu_fwd=3), 'kernels.relu_fwd: needs "cycles_per_packet"'),
    (_kernels(relu_fwd={"fixed_cycles": 3}), 'kernels.relu_fwd: needs "cycles_per_packet"'),
    (_kernels(relu_fwd={"cycles_per_packet": -1}),
     "kernels.relu_fwd.cycles_per_packet: expected a finite, non-negative number, got -1"),
    (_kernels(relu_fwd={"cycles_per_packet": True}),
     "kernels.relu_fwd.cycles_per_packet: expected a finite, non-negative number, got True"),
    (_kernels(relu_fwd={"cycles_per_packet": 0}), "kernels.relu_fwd.cycles_per_packet must be positive"),
    (_kernels(relu_fwd={"cycles_per_packet": 3, "fixed_cycles": -2}),
     "kernels.relu_fwd.fixed_cycles: expected a finite, non-negative number, got -2"),
    (_kernels(adam={"cycles_per_packet": 3, "after_cycles_per_packet": "1"}),
     "kernels.adam.after_cycles_per_packet: expected a finite, non-negative number, got '1'"),
    (_kernels(adam={"cycles_per_packet": 3, "after_cycles_per_packet": 4.5}),
     "kernels.adam.after_cycles_per_packet (4.5) must be less than cycles_per_packet (3)"),
    (_kernels(add={"cycles_per_packet": 3, "instructions_per_packet": 0}),
     "kernels.add.instructions_per_packet must be positive"),
    (_kernels(add={"cycles_per_packet": 3, "instructions_per_packet": "3"}),
     "kernels.add.instructions_per_packet: expected a finite, non-negative number, got '3'"),
])
def test_each_calibration_refusal_names_the_file_and_the_field(tmp_path, document, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match=f"^{re.escape(f'{path}: {message}')}$"):
        load_calibration(path)


def test_a_file_that_is_not_text_is_named(tmp_path):
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}: not a UTF-8 text file$"):
        load_calibration(path)


def test_hardware_and_kernel_refusals_are_whole_messages(calibration):
    with pytest.raises(ValueError, match=r"^bad NDP hardware configuration NDPHardware\("
                                         r"slices_per_controller=0, clock_hz=1200000000\.0, slice=NDPConfig\("):
        NDPHardware(slices_per_controller=0)
    with pytest.raises(TypeError, match="^NDPHardware.slice must be an NDPConfig, not 32$"):
        NDPHardware(slice=32)
    with pytest.raises(KeyError, match="no NDP kernel 'softmax_9' in the calibration"):
        calibration.cost("softmax_9")


def test_many_differences_of_configuration_are_counted_beyond_the_first_four(tmp_path):
    from matndp.host.calibration import configuration_record
    record = configuration_record(named_config("default"))
    record.update(sector_bytes=64, extra_a=1, extra_b=2, extra_c=3, extra_d=4)
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"schema": SCHEMA, "ndp_config": record, "kernels": {}}))
    with pytest.raises(ValueError, match=r": measured on another slice configuration: extra_a 1 "
                                         r"\(here None\), extra_b 2 \(here None\), extra_c 3 "
                                         r"\(here None\), extra_d 4 \(here None\) and 1 more$"):
        load_calibration(path)


def test_the_description_names_the_hardware_of_the_file(tmp_path):
    path = tmp_path / "ndp_kernels.json"
    path.write_text(json.dumps({"schema": SCHEMA, "clock_hz": 2e9, "kernels": {}}))
    described = load_calibration(path, NDPHardware(slices_per_controller=4)).describe()
    assert (described["slices_per_controller"], described["clock_hz"]) == (4, 2e9)
    assert described["measured_kernels"] == [] and described["ignored_unknown_kernels"] == []


def test_an_integer_past_the_largest_float_is_refused_not_overflowed(tmp_path):
    path = tmp_path / "huge.json"
    path.write_text('{"schema": "%s", "kernels": {"relu_fwd": {"cycles_per_packet": 1%s}}}'
                    % (SCHEMA, "0" * 400))
    with pytest.raises(ValueError, match=re.escape(
            f"{path}: kernels.relu_fwd.cycles_per_packet: expected a finite, non-negative number, "
            f"got 1{'0' * 400}")):
        load_calibration(path)
