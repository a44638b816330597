"""The GTKWave save-file writer: ports of the top and of instances inside it, by group."""

import pytest

from matndp.sim.gtkwave import append_group, top_ports, write_save_file


VERILOG = """
module top(clk, a, b);
  input clk;
  input [7:0] a;
  output [3:0] b;
endmodule
module \\top.inner (clk, events__valid, events__payload);
  input clk;
  input events__valid;
  input [372:0] events__payload;
endmodule
"""


def test_ports_of_the_top_and_of_an_escaped_submodule():
    assert top_ports(VERILOG, "top") == {"clk": 1, "a": 8, "b": 4}
    assert top_ports(VERILOG, "top.inner") == {"clk": 1, "events__valid": 1, "events__payload": 373}


def test_groups_in_the_save_file(tmp_path):
    path = tmp_path / "x.gtkw"
    write_save_file(path, dump_file="x.fst", verilog_text=VERILOG, module="top", scope="top",
                    groups=[("inputs", ["a"]), ("none", ["zzz"])])
    append_group(path, "events", "top.inner", ["events__valid", "events__payload"],
                 verilog_text=VERILOG, module="top.inner")
    text = path.read_text()
    assert "-inputs" in text and "top.a[7:0]" in text and "-none" not in text
    assert text.index("-events") > text.index("top.a[7:0]")
    assert "@28\ntop.inner.events__valid" in text and "@22\ntop.inner.events__payload[372:0]" in text


def test_unknown_module_and_port_are_errors(tmp_path):
    with pytest.raises(ValueError, match="module 'nope' not found"):
        top_ports(VERILOG, "nope")
    with pytest.raises(ValueError, match="has no port ready"):
        append_group(tmp_path / "x.gtkw", "t", "top.inner", ["ready"], verilog_text=VERILOG,
                     module="top.inner")
