"""The Makefile's build folders: `make verilog` writes the deliverables, and `make lint` lints
them as they are unless what they are made of changed (make's own dry run says what it
would do)."""

import os
import subprocess

from tests.paths import REPOSITORY


DELIVERABLES = ("ndp_slice.v", "ndp_slice_axi.v", "expander_axi.v")


def _dry_run(target, folder):
    done = subprocess.run(["make", "-n", target, f"VERILOG_DIR={folder}"], cwd=REPOSITORY,
                          capture_output=True, text=True, check=True)
    return done.stdout


def test_lint_reuses_a_current_export(tmp_path):
    for name in DELIVERABLES:
        (tmp_path / name).write_text("module x; endmodule\n")
    commands = _dry_run("lint", tmp_path)
    assert " export " not in commands
    for name in DELIVERABLES:
        assert f"lint {tmp_path / name}" in commands


def test_an_export_older_than_the_rtl_is_made_again(tmp_path):
    for name in DELIVERABLES:
        (tmp_path / name).write_text("module x; endmodule\n")
        os.utime(tmp_path / name, (0, 0))
    commands = _dry_run("lint", tmp_path)
    assert commands.count(" export ") == 3
    assert commands.index(" export ") < commands.index(" lint ")


def test_the_simulations_exports_are_not_among_the_deliverables():
    from matndp.sim.designs.files import design_file
    from matndp.sim.runner import build_root
    path = design_file(lambda width: _Tiny(width), "tiny", 4)
    assert path.parent == build_root() / "designs"
    assert path.parent != REPOSITORY / "build" / "verilog"


def _Tiny(width):
    from amaranth.hdl import Signal
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In, Out

    class Tiny(wiring.Component):
        def __init__(self):
            super().__init__({"a": In(width), "y": Out(width)})

        def elaborate(self, platform):
            from amaranth.hdl import Module
            m = Module()
            m.d.comb += self.y.eq(self.a)
            return m
    return Tiny()
