"""The board build's report from nextpnr's, its refusals, and (``-m slow``) ``matndp soc
--gateware-only`` writing the SoC's Verilog, constraints and scripts with the firmware in
its ROM, for a system clock other than the design's."""

import json
import subprocess
import sys

import pytest

from matndp.sim.runner import ToolMissing
from matndp.sim.soc import bitstream
from matndp.sim.soc.bitstream import board_report, report_markdown


def _nextpnr_report(constraints=None, **clocks):
    constraints = constraints or {}
    cells = {"TRELLIS_COMB": (52000, 83640), "TRELLIS_FF": (30000, 83640),
             "MULT18X18D": (40, 156), "DP16KD": (60, 208), "TRELLIS_IO": (50, 365)}
    return {"utilization": {cell: {"used": used, "available": available}
                            for cell, (used, available) in cells.items()},
            "fmax": {name: {"achieved": achieved, "constraint": constraints.get(name, 50.0)}
                     for name, achieved in clocks.items()},
            "critical_paths": []}


def test_the_report_takes_the_resources_and_the_system_clock_from_nextpnrs():
    report = board_report(_nextpnr_report(**{"$glbnet$sys_clk": 51.26, "$glbnet$clk25": 180.0}),
                          seed=2, target_mhz=50)
    assert report["resources"] == {"lut": {"used": 52000, "available": 83640},
                                   "ff": {"used": 30000, "available": 83640},
                                   "dsp": {"used": 40, "available": 156},
                                   "bram": {"used": 60, "available": 208}}
    assert (report["system_clock"], report["fmax_mhz"], report["meets_target"]) == \
        ("$glbnet$sys_clk", 51.3, True)
    assert report["seed"] == 2 and report["critical_path"] is None
    text = report_markdown(report, "matndp soc --seed 2")
    assert "| LUT4 (carry cells included) | 52000 | 83640 | 62.2 % |" in text
    assert "51.3 MHz achieved, meets the 50 MHz target" in text


def test_the_system_clock_may_be_named_by_the_plls_output():
    report = board_report(_nextpnr_report(**{
        "$glbnet$generate_gateware_crg_clkout0": 50.5, "$glbnet$clk25": 180.0}),
        seed=1, target_mhz=50)
    assert (report["system_clock"], report["fmax_mhz"]) == \
        ("$glbnet$generate_gateware_crg_clkout0", 50.5)


def test_a_system_clock_named_by_another_net_is_the_one_at_the_target_but_the_drams():
    clocks = {"$glbnet$VexRiscv.IBusSimplePlugin_rspJoin_rspBuffer_c.clk": 48.7,
              "$glbnet$generate_gateware_crg_clkout1": 300.0, "$glbnet$clk25": 180.0}
    report = board_report(_nextpnr_report({"$glbnet$clk25": 25.0}, **clocks), seed=1,
                          target_mhz=50)
    assert (report["system_clock"], report["fmax_mhz"], report["meets_target"]) == \
        ("$glbnet$VexRiscv.IBusSimplePlugin_rspJoin_rspBuffer_c.clk", 48.7, False)


def test_a_slow_system_clock_misses_the_target():
    report = board_report(_nextpnr_report(**{"$glbnet$sys_clk": 43.0}), seed=1, target_mhz=50)
    assert not report["meets_target"]
    assert "misses the 50 MHz target" in report_markdown(report, "matndp soc")


def test_a_build_for_a_slower_clock_is_judged_against_it_and_against_the_target():
    met = board_report(_nextpnr_report(**{"$glbnet$sys_clk": 31.26}), seed=1, target_mhz=50,
                       clock_mhz=30)
    assert (met["clock_mhz"], met["meets_clock"], met["meets_target"]) == (30, True, False)
    assert "31.3 MHz achieved, meets the 30 MHz it was built for, misses the 50 MHz target" in \
        report_markdown(met, "matndp soc --clock-mhz 30")
    missed = board_report(_nextpnr_report(**{"$glbnet$sys_clk": 29.9}), seed=1, target_mhz=50,
                          clock_mhz=30)
    assert (missed["meets_clock"], missed["meets_target"]) == (False, False)
    assert "misses the 30 MHz it was built for, misses the 50 MHz target" in \
        report_markdown(missed, "matndp soc --clock-mhz 30")


def test_a_system_clock_named_by_another_net_is_the_one_at_the_builds_clock():
    clocks = {"$glbnet$VexRiscv.IBusSimplePlugin_rspJoin_rspBuffer_c.clk": 33.0,
              "$glbnet$generate_gateware_crg_clkout1": 300.0, "$glbnet$clk25": 180.0}
    constraints = {"$glbnet$clk25": 25.0,
                   "$glbnet$VexRiscv.IBusSimplePlugin_rspJoin_rspBuffer_c.clk": 30.0,
                   "$glbnet$generate_gateware_crg_clkout1": 30.0}
    report = board_report(_nextpnr_report(constraints, **clocks), seed=1, target_mhz=50,
                          clock_mhz=30)
    assert (report["system_clock"], report["meets_clock"]) == \
        ("$glbnet$VexRiscv.IBusSimplePlugin_rspJoin_rspBuffer_c.clk", True)


@pytest.mark.parametrize("clock_mhz", [9, 101, 30.5, "30"])
def test_a_clock_out_of_range_or_not_whole_is_refused_before_anything_is_written(
        clock_mhz, tmp_path):
    with pytest.raises(ValueError, match=r"whole number of MHz in 10\.\.100, got "):
        bitstream.build_board_soc(tmp_path, clock_mhz=clock_mhz)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("route_timeout_s", [0, -60, True, "3600"])
def test_a_routing_time_limit_not_a_positive_number_is_refused_before_anything_is_written(
        route_timeout_s, tmp_path):
    with pytest.raises(ValueError, match=r"routing time limit must be a positive number of "
                                         r"seconds, got "):
        bitstream.build_board_soc(tmp_path, route_timeout_s=route_timeout_s)
    assert list(tmp_path.iterdir()) == []


# The tails of nextpnr's logs as its routers write them.
_ROUTER2_LOG = """Info: Running main router loop...
Info:     iter=1 wires=1054925 overused=79061 overuse=94866 archfail=NA
Info:     iter=12 wires=1136107 overused=7099 overuse=7183 archfail=NA
"""
_ROUTER1_LOG = """Info: Routing 261614 arcs.
Info:            |   (re-)routed arcs  |   delta    | remaining|       time spent     |
Info:    IterCnt |  w/ripup   wo/ripup |  w/r  wo/r |      arcs| batch(sec) total(sec)|
Info:       1000 |        0       1000 |    0  1000 |    260615|       0.54       0.54|
Info:     430000 |    74796     348939 |  259   741 |     46915|      15.88    2871.49|
"""


@pytest.mark.parametrize("log, progress", [
    (_ROUTER2_LOG, "router2's iteration 12 left 7099 wires overused"),
    (_ROUTER1_LOG, "router1 had 46915 arcs left after 430000 iterations"),
    ("Info: Running placer\n", None),
])
def test_routing_progress_is_read_from_the_routers_last_line(log, progress):
    assert bitstream.routing_progress(log) == progress


def test_a_soc_that_does_not_route_in_time_says_where_its_routing_stood(monkeypatch, tmp_path):
    (tmp_path / "build_matndp_soc.sh").write_text(
        "nextpnr-ecp5 --json matndp_soc.json --85k --package CABGA381 --speed 6\n")

    def routing_forever(command, log_path, cwd, timeout_s=None):
        log_path.write_text(_ROUTER2_LOG)
        raise subprocess.TimeoutExpired(command, timeout_s)

    monkeypatch.setattr(bitstream, "run_tool", routing_forever)
    monkeypatch.setattr(bitstream, "tool_path", lambda name: name)
    with pytest.raises(bitstream.RoutingTimedOut,
                       match=r"did not finish the SoC in 90 s at seed 2: router2's iteration 12 "
                             r"left 7099 wires overused .*; its log .*matndp_soc\.seed2\."
                             r"nextpnr\.log$"):
        bitstream.place_route_pack(tmp_path, 2, route_timeout_s=90)
    assert not (tmp_path / "matndp_soc.bit").exists()


def test_a_report_without_a_single_system_clock_or_a_resource_is_refused():
    with pytest.raises(ValueError, match=r"names 0 system clocks among \['\$glbnet\$clk25'\]"):
        board_report(_nextpnr_report({"$glbnet$clk25": 25.0}, **{"$glbnet$clk25": 180.0}),
                     seed=1, target_mhz=50)
    with pytest.raises(ValueError, match=r"names 2 system clocks"):
        board_report(_nextpnr_report(**{"$glbnet$a.clk": 60.0, "$glbnet$b.clk": 70.0}),
                     seed=1, target_mhz=50)
    broken = _nextpnr_report(**{"$glbnet$sys_clk": 51.0})
    del broken["utilization"]["DP16KD"]
    with pytest.raises(ValueError, match="no utilization of DP16KD"):
        board_report(broken, seed=1, target_mhz=50)


def test_a_build_without_its_tools_names_them(monkeypatch, tmp_path):
    monkeypatch.setattr(bitstream, "missing_firmware_tools", lambda: ["litex (make soc-setup)"])
    monkeypatch.setattr(bitstream, "tool_path", lambda name: (_ for _ in ()).throw(
        ToolMissing(name)) if name == "yowasp-ecppack" else name)
    with pytest.raises(ToolMissing, match=r"needs: litex \(make soc-setup\), yowasp-ecppack "
                                          r"\(make setup\)$"):
        bitstream.build_board_soc(tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.skipif(bool(bitstream.missing_board_tools()), reason="make soc-setup has not run")
def test_the_gateware_alone_is_written_with_the_firmware_in_rom(tmp_path):
    # As `make soc` runs it, in a process of its own; the slice's export is the simulation's.
    done = subprocess.run([sys.executable, "-m", "matndp.sim.cli", "soc", "--gateware-only",
                           "--clock-mhz", "30", "--build", str(tmp_path), "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["report"] is None
    files = {role: tmp_path / "gateware" / name for role, name in (
        ("verilog", "matndp_soc.v"), ("constraints", "matndp_soc.lpf"),
        ("yosys_script", "matndp_soc.ys"))}
    assert {role: result["files"][role] for role in files} == \
        {role: str(path) for role, path in files.items()}
    assert "ndp_slice_axi ndp_slice_axi(" in files["verilog"].read_text()
    assert 'LOCATE COMP "clk25" SITE "G2";' in files["constraints"].read_text()
    assert "synth_ecp5" in files["yosys_script"].read_text()
    firmware = (tmp_path / "firmware" / "firmware.bin").read_bytes()
    rom = (tmp_path / "gateware" / "matndp_soc_rom.init").read_text().split()
    assert int(rom[0], 16) == int.from_bytes(firmware[:4], "little")
    assert not (tmp_path / "gateware" / "matndp_soc.bit").exists()
    # The clock the build asked for, in the headers the firmware is compiled against.
    soc_header = (tmp_path / "software" / "include" / "generated" / "soc.h").read_text()
    assert "#define CONFIG_CLOCK_FREQUENCY 30000000" in soc_header
