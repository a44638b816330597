"""The expander bench's calibration file is one the host model reads."""

import json

from matndp.host.calibration import load_expander_calibration
from matndp.sim.bench.expander import _port_use, calibration_document


def test_the_bench_document_loads(tmp_path):
    runs = [{"optimizer": "adam", "ports": port, "cycles_per_reduced_sector": cycles,
             "memory_accesses_per_reduced_sector": 2 * port + 5.0,
             "minimum_accesses_per_reduced_sector": 2 * port + 5.0}
            for port, cycles in ((2, 110.5), (4, 183.25))]
    path = tmp_path / "e.json"
    path.write_text(json.dumps(calibration_document(runs)))
    loaded = load_expander_calibration(path)
    assert loaded.cycles_per_reduced_sector("adam", 4) == (183.25, "measured at K = 4")
    assert loaded.points["adam"][2] == (110.5, 9.0)
    assert loaded.ndp_config["trigger"]["filter_entries"] == 4


def test_port_use_counts_each_windows_accesses_by_source():
    # First write at 10, last at 19, ready at 29: ten cycles in each window.
    requests = [[9, 1], [10, 0], [11, 0], [12, 1], [19, 0], [20, 1], [25, 1], [29, 1], [30, 1]]
    use = _port_use(requests, 10, 19, 29)
    assert use["while_the_gpus_write"] == {"cycles": 10, "gpu_accesses": 3, "engine_accesses": 1,
                                           "busy_share": 0.4}
    assert use["tail"] == {"cycles": 10, "gpu_accesses": 0, "engine_accesses": 3, "busy_share": 0.3}
