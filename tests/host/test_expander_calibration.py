"""The expander slice's measured reduction cost, as the NDPXNet host model reads it: the
calibration file, its errors, and the cost at a port count the file did not measure."""

import json
import re

import pytest

from matndp.host.calibration import (EXPANDER_SCHEMA, expander_calibration_document,
                                     load_calibration, load_expander_calibration)
from matndp.host.ndpxnet import expander_cost
from matndp.host.report import RunConfig, run_gpu


def _write(path, reduction, **extra):
    path.write_text(json.dumps({"schema": EXPANDER_SCHEMA, "reduction": reduction, **extra}))
    return path


def _point(cycles, accesses=13):
    return {"cycles_per_reduced_sector": cycles, "memory_accesses_per_reduced_sector": accesses}


def test_a_written_document_reads_back(tmp_path):
    document = expander_calibration_document({"sgd_momentum": {4: (188.5, 11.0), 2: (93.0, 7.0)}},
                                             source="a run", ndp_config={"addr_width": 40},
                                             elements=2048)
    assert document["schema"] == EXPANDER_SCHEMA and document["elements"] == 2048
    path = tmp_path / "e.json"
    path.write_text(json.dumps(document))
    loaded = load_expander_calibration(path)
    assert loaded.points == {"sgd_momentum": {2: (93.0, 7.0), 4: (188.5, 11.0)}}
    assert loaded.ndp_config == {"addr_width": 40}
    assert loaded.describe()["measured"] == document["reduction"]


def test_a_measured_port_count_is_taken_as_measured(tmp_path):
    path = _write(tmp_path / "e.json", {"adam": {"2": _point(110), "4": _point(183)}})
    measured = load_expander_calibration(path)
    cost = expander_cost("adam", 4, load_calibration(None), measured)
    assert (cost.cycles_per_reduced_sector, cost.source, cost.basis) == (183, str(path), "measured at K = 4")
    assert measured.describe()["measured"]["adam"]["2"] == {
        "cycles_per_reduced_sector": 110, "memory_accesses_per_reduced_sector": 13}


def test_other_port_counts_follow_the_line_through_the_measurements(tmp_path):
    measured = load_expander_calibration(_write(tmp_path / "e.json",
                                                {"adam": {"2": _point(110), "4": _point(180)}}))
    # 110 at K = 2 and 180 at K = 4: 35 cycles per further GPU, so 320 at K = 8 and 75 at K = 1.
    assert measured.cycles_per_reduced_sector("adam", 8) == (320, "line through K = 2, 4")
    one = load_expander_calibration(_write(tmp_path / "one.json", {"adam": {"4": _point(180)}}))
    assert one.cycles_per_reduced_sector("adam", 8) == (360, "scaled from K = 4 in proportion to K")


def test_an_unmeasured_kernel_keeps_the_assumption_and_says_so(tmp_path, calibration):
    measured = load_expander_calibration(_write(tmp_path / "e.json", {"adam": {"4": _point(180)}}))
    cost = expander_cost("sgd_momentum", 4, calibration, measured)
    assert cost.source == "assumption"
    assert cost.cycles_per_reduced_sector == pytest.approx(
        calibration.cost("sgd_momentum").cycles_per_packet + 3 * calibration.cost("add").cycles_per_packet)
    assert expander_cost("adam", 4, calibration, None).source == "assumption"


def test_the_data_parallel_report_prices_the_expander_from_the_file(tmp_path):
    # ResNet-50 trains with SGD and momentum (the zoo's optimizer for it): its host kernel
    # is sgd_momentum, priced per FP32 sector of parameters.
    path = _write(tmp_path / "e.json", {"sgd_momentum": {"2": _point(100), "4": _point(200)}})
    ndpxnet = run_gpu(RunConfig("resnet50", "a100", 16, "fp32", gpus=4,
                                expander_calibration_path=str(path)))["ndpxnet"]
    assert ndpxnet["expander_cost"]["cycles_per_reduced_sector"] == 200
    assert ndpxnet["expander_cost"]["source"] == str(path)
    doubled = _write(tmp_path / "e2.json", {"sgd_momentum": {"2": _point(200), "4": _point(400)}})
    again = run_gpu(RunConfig("resnet50", "a100", 16, "fp32", gpus=4,
                              expander_calibration_path=str(doubled)))["ndpxnet"]
    assert again["expander_optimizer_compute_s"] == pytest.approx(2 * ndpxnet["expander_optimizer_compute_s"])


@pytest.mark.parametrize("document, message", [
    ("{", "not valid JSON"),
    ({"schema": "other"}, "schema"),
    ({"schema": EXPANDER_SCHEMA}, '"reduction" must be an object'),
    ({"schema": EXPANDER_SCHEMA, "reduction": {"nonsense": {"4": _point(1)}}}, "not an NDP kernel"),
    ({"schema": EXPANDER_SCHEMA, "reduction": {"adam": {"one": _point(1)}}}, "port count must be an integer"),
    ({"schema": EXPANDER_SCHEMA, "reduction": {"adam": {"1": _point(1)}}}, "at least 2"),
    ({"schema": EXPANDER_SCHEMA, "reduction": {"adam": {"4": {"cycles_per_reduced_sector": 3}}}},
     'needs "memory_accesses_per_reduced_sector"'),
    ({"schema": EXPANDER_SCHEMA, "reduction": {"adam": {"4": _point(-1)}}}, "non-negative number"),
    ({"schema": EXPANDER_SCHEMA, "reduction": {"adam": {"4": _point(0)}}}, "must be positive"),
    ({"schema": EXPANDER_SCHEMA, "reduction": {"adam": {"4": _point(3)}}, "ndp_config": 3}, "ndp_config"),
])
def test_a_malformed_file_is_an_error(tmp_path, document, message):
    path = tmp_path / "bad.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    with pytest.raises(ValueError, match=message):
        load_expander_calibration(path)


def test_a_missing_explicit_file_is_an_error_and_a_missing_default_is_none(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_expander_calibration(tmp_path / "absent.json")
    monkeypatch.chdir(tmp_path)
    assert load_expander_calibration() is None


@pytest.mark.parametrize("reduction, message", [
    ({}, '"reduction" must be an object of optimizer kernel -> port count -> costs'),
    ({"nonsense": {"4": _point(1)}}, "reduction.nonsense: not an NDP kernel of the host model (known: "),
    ({"adam": {}}, "reduction.adam must be an object of port count -> costs"),
    ({"adam": [1]}, "reduction.adam must be an object of port count -> costs"),
    ({"adam": {"x2": _point(1)}}, "reduction.adam.x2: the port count must be an integer of at least 2"),
    ({"adam": {"4": 3}}, 'reduction.adam.4: expected an object with "cycles_per_reduced_sector"'),
    ({"adam": {"4": {"memory_accesses_per_reduced_sector": 3}}},
     'reduction.adam.4: needs "cycles_per_reduced_sector"'),
    ({"adam": {"4": _point(-1)}},
     "reduction.adam.4.cycles_per_reduced_sector: expected a finite, non-negative number, got -1"),
    ({"adam": {"4": _point(1, accesses="x")}},
     "reduction.adam.4.memory_accesses_per_reduced_sector: expected a finite, non-negative "
     "number, got 'x'"),
    ({"adam": {"4": _point(5, accesses=0)}}, "reduction.adam.4: costs must be positive"),
])
def test_each_refusal_names_the_file_and_the_entry(tmp_path, reduction, message):
    path = _write(tmp_path / "bad.json", reduction)
    with pytest.raises(ValueError, match="^" + re.escape(f"{path}: {message}")):
        load_expander_calibration(path)


def test_a_non_object_configuration_is_refused_by_name(tmp_path):
    path = _write(tmp_path / "bad.json", {"adam": {"4": _point(3)}}, ndp_config=[1])
    with pytest.raises(ValueError, match="^" + re.escape(
            f"{path}: \"ndp_config\" must be an object (the slice's configuration)") + "$"):
        load_expander_calibration(path)


def test_a_line_that_falls_to_zero_is_refused_and_says_where(tmp_path):
    """Measured at K = 2 and 4: 100 and 50 cycles, a line falling 25 per port: zero at 6."""
    calibration = load_expander_calibration(_write(tmp_path / "e.json", {
        "adam": {"2": _point(100), "4": _point(50)}}))
    assert calibration.cycles_per_reduced_sector("adam", 5) == (pytest.approx(25),
                                                                "line through K = 2, 4")
    with pytest.raises(ValueError, match=r"e\.json: the line through K = \[2, 4\] gives no positive "
                                         r"cost at K = 6$"):
        calibration.cycles_per_reduced_sector("adam", 6)
    assert calibration.cycles_per_reduced_sector("sgd", 4) is None
