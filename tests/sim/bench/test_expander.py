"""The expander bench's calibration file is one the host model reads."""

import json

from matndp.host.calibration import load_expander_calibration
from matndp.sim.bench.expander import calibration_document


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
