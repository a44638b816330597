"""The ECP5 synthesis flow (sim/fpga_flow/synth.py): argument checking, and one small design through
Yosys and nextpnr (slow)."""

import pytest

from matndp.hw.fp.select import FPSelect
from matndp.sim.fpga_flow.sdf_timing import read_sdf
from matndp.sim.fpga_flow.synth import _wrapper_verilog, critical_path_table, synthesize, synthesis_table


TINY_VERILOG = "module fp_select(input clk, input d, output reg q);\n" \
               "  always @(posedge clk) q <= d;\nendmodule\n"


@pytest.mark.parametrize("kwargs, message", [
    ({"device": "XC7A35T"}, "unknown ECP5 device 'XC7A35T'"),
    ({"top_name": "fp select"}, "top_name must be a plain Verilog identifier"),
    ({"freq_mhz": 0}, "freq_mhz must be a positive number"),
    ({"seeds": []}, r"seeds must be a non-empty list of distinct ints, not \[\]"),
    ({"seeds": 1}, "seeds must be a non-empty list of distinct ints, not 1"),
    ({"seeds": [1, 1]}, r"seeds must be a non-empty list of distinct ints, not \[1, 1\]"),
    ({"placer": "quick"}, "unknown nextpnr placer 'quick'; known: heap, sa, static"),
    ({"router": "router3"}, "unknown nextpnr router 'router3'; known: router1, router2"),
])
def test_bad_arguments_are_refused_by_name(tmp_path, kwargs, message):
    arguments = {"top_name": "fp_select", "out_dir": tmp_path, **kwargs}
    top_name = arguments.pop("top_name")
    with pytest.raises(ValueError, match=message):
        synthesize(TINY_VERILOG, top_name, **arguments)


def test_verilog_text_must_define_the_top_module(tmp_path):
    with pytest.raises(ValueError, match="defines no module 'other'"):
        synthesize(TINY_VERILOG, "other", out_dir=tmp_path)


def test_the_wrapper_drives_a_reset_from_a_global_buffer():
    wrapper = _wrapper_verilog("unit", [("clk", "input", 1), ("rst", "input", 1),
                                        ("a", "input", 3), ("q", "output", 2)])
    assert "DCCA reset_buffer (.CLKI(reset_source), .CLKO(reset_global));" in wrapper
    assert ".rst(reset_global)" in wrapper
    # The reset is not also a bit of the input chain: three bits for ``a`` only.
    assert "reg [2:0] in_chain;" in wrapper and ".a(in_chain[2:0])" in wrapper
    without = _wrapper_verilog("unit", [("clk", "input", 1), ("q", "output", 2)])
    assert "DCCA" not in without
    placed = _wrapper_verilog("unit", [("clk", "input", 1), ("rst", "input", 1)],
                              reset_buffer_bel="X3/Y46/LDCC0")
    assert '(* BEL="X3/Y46/LDCC0" *) DCCA reset_buffer' in placed


@pytest.mark.slow
def test_select_unit_synthesizes_places_and_routes(tmp_path):
    result = synthesize(FPSelect(), "fp_select", out_dir=tmp_path, seeds=[1, 2])
    # A 32-bit 2:1 multiplexer with a registered output and its valid bit: one LUT per
    # bit, a flip-flop per bit plus valid, no DSP or block RAM.
    assert result["ff"] == 33
    assert 32 <= result["lut"] <= 40
    assert result["dsp"] == 0 and result["bram"] == 0
    assert result["routed"] and result["fmax_mhz"] > 0
    assert [run["seed"] for run in result["seeds"]] == [1, 2]
    assert result["fmax_mhz"] == min(run["fmax_mhz"] for run in result["seeds"])
    for run in result["seeds"]:
        # The worst path goes through the multiplexer's one LUT level, and it is what sets
        # the seed's Fmax.
        path = run["critical_path"]
        assert path["from"] and path["to"]
        assert path["logic_levels"] == 1 and path["routing_ns"] > 0
        assert abs(path["logic_ns"] + path["routing_ns"] - 1000 / run["fmax_mhz"]) < 0.05
    rows = [{"name": "fp_select", "timing": "latency 1", **result}]
    assert "Fmax seed 1 (MHz) | Fmax seed 2 (MHz) |" in synthesis_table(rows)
    assert "| fp_select | latency 1 | " in synthesis_table(rows)
    assert critical_path_table(rows).count("| fp_select |") == 2
    # nextpnr's Fmax and the static timing over its SDF are two analyses of one routing.
    for run in result["seeds"]:
        worst = read_sdf(tmp_path / f"fp_select.seed{run['seed']}.sdf").analyse(10.0)[0]
        assert 1000.0 / worst.arrival_ns == pytest.approx(run["fmax_mhz"], abs=0.1)
        assert (run["failing_endpoints"] == 0) == (run["fmax_mhz"] >= 100)


def test_a_table_of_designs_not_placed_has_no_fmax_columns():
    row = {"name": "unit", "timing": "-", "lut": 1, "ff": 2, "dsp": 0, "bram": 0, "lutram": 0,
           "seeds": []}
    header, rule, line = synthesis_table([row]).splitlines()
    assert header.endswith("| LUT RAM |") and line == "| unit | - | 1 | 2 | 0 | 0 | 0 |"
    assert rule.count("|") == header.count("|")
