"""The GTKWave save-file writer: ports of the top and of instances inside it, by group and
as payload fields; the dump named so that the file opens from any folder; and the view,
read as GTKWave 3.3 reads it."""

import math
import re

import pytest

from matndp.sim.gtkwave import top_ports, write_save_file


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

# GTKWave 3.3's own behaviour, from its source and runs of it, not from the writer: zoom z
# shows 2 ** -z time units in 200 pixels (calczoom); at [size] 1600 900 with [sst_width]
# 220 and [signals_width] 300 its wave pane is 1000 pixels wide (GTKWave 3.3.118 under
# Xvfb reports getWaveWidth 1000); and it moves [timestart] down to a multiple of the
# largest power of ten not above its time per pixel (8 270 000 at 175 130 a pixel opens at
# 8 200 000).
GTKWAVE_PIXELS_PER_ZOOM_FRAME = 200
GTKWAVE_WAVE_PANE = 1000


def gtkwave_view(timestart, zoom):
    """The window GTKWave 3.3 shows for a save file's [timestart] and zoom."""
    per_pixel = 2 ** -zoom / GTKWAVE_PIXELS_PER_ZOOM_FRAME
    grid = 10 ** max(0, math.floor(math.log10(per_pixel)))
    start = timestart // grid * grid
    return start, start + per_pixel * GTKWAVE_WAVE_PANE


def _write(tmp_path, **options):
    path = tmp_path / "x.gtkw"
    fields = {"a": [("low", 4), ("high", 4)], "inner.events__payload": [("entry", 4), ("rest", 369)]}
    write_save_file(path, dump_file=tmp_path / "x.fst", verilog_text=VERILOG, module="top",
                    scope="top", groups=[("inputs", ["a"]), ("none", ["zzz"])],
                    inner_groups=[("events", "inner", ["events__valid", "events__payload"])],
                    payload_fields=fields, decimal_fields=("entry",), **options)
    return path.read_text()


def test_ports_of_the_top_and_of_an_escaped_submodule():
    assert top_ports(VERILOG, "top") == {"clk": 1, "a": 8, "b": 4}
    assert top_ports(VERILOG, "top.inner") == {"clk": 1, "events__valid": 1, "events__payload": 373}


def test_groups_of_the_top_and_of_an_instance_with_payload_fields(tmp_path):
    text = _write(tmp_path)
    assert "-inputs" in text and "-none" not in text
    assert "@22\ntop.a.low[3:0]" in text and "@22\ntop.a.high[3:0]" in text
    assert text.index("-events") > text.index("top.a.low[3:0]")
    assert "@28\ntop.inner.events__valid" in text
    assert "@24\ntop.inner.events__payload.entry[3:0]" in text
    # The raw vectors stay, in closed sub-groups at the end of their group, with a title
    # short enough not to widen GTKWave's name pane.
    assert re.search(r"@c00200\n-raw payloads\n@22\ntop\.inner\.events__payload\[372:0\]\n"
                     r"@1401200\n-raw payloads\n@1000200\n-events", text)


def test_the_dump_and_the_save_file_are_named_by_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = _write(tmp_path, saved_as="final/x.gtkw")
    assert f'[dumpfile] "{tmp_path / "x.fst"}"\n' in text
    assert f'[savefile] "{tmp_path / "final" / "x.gtkw"}"\n' in text


@pytest.mark.parametrize("window", [(1_230_000, 6_700_000), (0, 3_000), (5_000_000, 190_000_000),
                                    (8_270_000, 183_660_000), (123_456, 175_489_870)])
def test_gtkwave_shows_the_window_asked_for(tmp_path, window):
    text = _write(tmp_path, window=window, markers=[window[0] + 10, -1, window[1] - 10])
    timestart = int(re.search(r"^\[timestart\] (\d+)$", text, re.M).group(1))
    zoom, primary, *named = re.search(r"^\*(.*)$", text, re.M).group(1).split()
    start, end = gtkwave_view(timestart, float(zoom))
    # The whole window, from no further left than GTKWave's grid allows.
    assert start <= window[0] and start == timestart
    assert window[0] - start < (window[1] - window[0]) / GTKWAVE_WAVE_PANE
    assert end == pytest.approx(window[1], rel=1e-6)
    assert int(primary) == window[0] + 10
    assert [int(m) for m in named[:3]] == [window[0] + 10, -1, window[1] - 10]
    assert len(named) == 26 and set(named[3:]) == {"-1"}
    assert re.search(r"^\[size\] 1600 900$", text, re.M)
    assert re.search(r"^\[sst_width\] 220$", text, re.M) and re.search(r"^\[signals_width\] 300$", text, re.M)


def test_unknown_module_port_and_window_are_errors(tmp_path):
    with pytest.raises(ValueError, match="module 'nope' not found"):
        top_ports(VERILOG, "nope")
    with pytest.raises(ValueError, match="module 'top.inner' has no port ready"):
        write_save_file(tmp_path / "x.gtkw", dump_file="x.fst", verilog_text=VERILOG, module="top",
                        scope="top", groups=[], inner_groups=[("t", "inner", ["ready"])])
    with pytest.raises(ValueError, match="payload port.*inner.nothing are not ports of top"):
        write_save_file(tmp_path / "x.gtkw", dump_file="x.fst", verilog_text=VERILOG, module="top",
                        scope="top", groups=[], payload_fields={"inner.nothing": []})
    with pytest.raises(ValueError, match="a time window must be longer than 0"):
        write_save_file(tmp_path / "x.gtkw", dump_file="x.fst", verilog_text=VERILOG, module="top",
                        scope="top", groups=[], window=(10, 10))
