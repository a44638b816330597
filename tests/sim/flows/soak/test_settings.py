"""The soak's parameters refuse what they cannot mean."""

import pytest

from matndp.sim.flows.soak import SoakSettings


@pytest.mark.parametrize("values, error, message", [
    (dict(stages_per_round=0), ValueError, r"stages_per_round must be in 1\.\.65536, not 0"),
    (dict(launches=1.5), TypeError, "launches must be an int, not 1.5"),
    (dict(watchdog=True), TypeError, "watchdog must be an int, not True"),
    (dict(fault_probability=1.5), ValueError, r"fault_probability must be in \[0, 1.0\], not 1.5"),
    (dict(max_pause=0.99), ValueError, r"max_pause must be in \[0, 0.95\], not 0.99"),
    (dict(error_share="0.1"), TypeError, "error_share must be a number"),
])
def test_bad_settings_are_refused(values, error, message):
    with pytest.raises(error, match=message):
        SoakSettings(**values)


def test_the_defaults_are_taken():
    assert SoakSettings().stages_per_round >= 1
