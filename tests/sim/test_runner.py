"""The simulator runner's checks and its build-cache helper."""

import os

import pytest

from matndp.sim.runner import SIMULATORS, check_simulator, write_if_changed


def test_unknown_simulator_is_named():
    with pytest.raises(ValueError, match="unknown simulator 'modelsim'; choose one of verilator, icarus"):
        check_simulator("modelsim")


@pytest.mark.parametrize("simulator", SIMULATORS)
def test_known_simulators_are_installed(simulator):
    check_simulator(simulator)


def test_write_if_changed_leaves_an_unchanged_file_alone(tmp_path):
    path = write_if_changed(tmp_path / "deep" / "design.v", "module a; endmodule\n")
    os.utime(path, (1_000_000, 1_000_000))
    assert write_if_changed(path, "module a; endmodule\n") == path
    assert path.stat().st_mtime == 1_000_000
    write_if_changed(path, "module b; endmodule\n")
    assert path.read_text() == "module b; endmodule\n" and path.stat().st_mtime != 1_000_000
    assert sorted(p.name for p in path.parent.iterdir()) == ["design.v"]
