"""The ECP5 synthesis flow (sim/synth.py): argument checking, and one small design through
Yosys and nextpnr (slow)."""

import pytest

from matndp.hw.fp.select import FPSelect
from matndp.sim.synth import synthesize, synthesis_table


TINY_VERILOG = "module fp_select(input clk, input d, output reg q);\n" \
               "  always @(posedge clk) q <= d;\nendmodule\n"


@pytest.mark.parametrize("kwargs, message", [
    ({"device": "XC7A35T"}, "unknown ECP5 device 'XC7A35T'"),
    ({"top_name": "fp select"}, "top_name must be a plain Verilog identifier"),
    ({"freq_mhz": 0}, "freq_mhz must be a positive number"),
])
def test_bad_arguments_are_refused_by_name(tmp_path, kwargs, message):
    arguments = {"top_name": "fp_select", "out_dir": tmp_path, **kwargs}
    top_name = arguments.pop("top_name")
    with pytest.raises(ValueError, match=message):
        synthesize(TINY_VERILOG, top_name, **arguments)


def test_verilog_text_must_define_the_top_module(tmp_path):
    with pytest.raises(ValueError, match="defines no module 'other'"):
        synthesize(TINY_VERILOG, "other", out_dir=tmp_path)


@pytest.mark.slow
def test_select_unit_synthesizes_places_and_routes(tmp_path):
    result = synthesize(FPSelect(), "fp_select", out_dir=tmp_path)
    # A 32-bit 2:1 multiplexer with a registered output and its valid bit: one LUT per
    # bit, a flip-flop per bit plus valid, no DSP or block RAM.
    assert result["ff"] == 33
    assert 32 <= result["lut"] <= 40
    assert result["dsp"] == 0 and result["bram"] == 0
    assert result["routed"] and result["fmax_mhz"] > 0
    assert "| fp_select |" in synthesis_table([{"name": "fp_select", "timing": "latency 1",
                                                 **result}])
