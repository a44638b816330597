"""The save files of `make sim` opened in GTKWave itself, headless under Xvfb, as the README
prints the command: from the folder above ``build/`` (and, the folder moved, from
elsewhere). GTKWave must load the dump and open on the documented window with the
markers set. Slow (the co-simulation's window needs a traced build of the batch harness);
skipped where GTKWave or Xvfb is not installed (both optional: `apt-get install gtkwave
xvfb`)."""

import re
import shutil
import subprocess

import pytest
import pywellen

from matndp.sim.flows.trigger_layer import run_trigger_layer

from .documented_files import documented_files, written


pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (shutil.which("gtkwave") and shutil.which("xvfb-run")),
                                 reason="GTKWave and Xvfb are optional (apt-get install gtkwave xvfb)")]

CYCLE = 10_000
QUERY = """
set out [open "{out}" w]
puts $out "dump [gtkwave::getDumpFileName]"
puts $out "start [gtkwave::getWindowStartTime]"
puts $out "end [gtkwave::getWindowEndTime]"
puts $out "width [gtkwave::getWaveWidth]"
foreach name {{A B C}} {{ puts $out "$name [gtkwave::getNamedMarker $name]" }}
close $out
gtkwave::/File/Quit
"""


def open_in_gtkwave(save_file, cwd, tmp_path):
    """What GTKWave shows when it opens ``save_file`` (as given, from ``cwd``)."""
    script, out = tmp_path / "query.tcl", tmp_path / "view.txt"
    script.write_text(QUERY.format(out=out))
    done = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1920x1080x24", "gtkwave", "-S",
                           str(script), str(save_file)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and out.exists(), done.stdout + done.stderr
    view = dict(line.split(" ", 1) for line in out.read_text().splitlines())
    return {key: value if key == "dump" else int(value) for key, value in view.items()}


def _check_window(view, start, end):
    """The view shows ``start .. end`` across its wave pane of 1000 pixels: from a left
    edge at most a pixel before ``start`` (GTKWave puts it on its grid) to ``end``."""
    assert view["width"] == 1000
    per_pixel = (view["end"] - view["start"]) / view["width"]
    assert 0 <= start - view["start"] < per_pixel
    assert view["end"] == pytest.approx(end, abs=2 * per_pixel)


def test_the_trigger_parts_save_file_opens_as_the_readme_says(tmp_path):
    clone = tmp_path / "clone"
    folder = clone / "build" / "sim"
    run_trigger_layer(folder, simulator="icarus", tiles=1, seed=2, progress=lambda line: None)
    text = (folder / "ndp_slice.gtkw").read_text()
    named = [int(m) for m in re.search(r"^\*\S+ \S+ (.*)$", text, re.M).group(1).split()[:3]]
    first_event, first_stall = named[:2]
    view = open_in_gtkwave("build/sim/ndp_slice.gtkw", clone, tmp_path)
    assert view["dump"] == str(folder / "ndp_slice.fst")
    if first_stall != -1 and first_stall - first_event <= 1500 * CYCLE:
        end = max(first_stall + 60 * CYCLE, first_event + 200 * CYCLE)
    else:
        end = first_event + 200 * CYCLE
    _check_window(view, first_event - 20 * CYCLE, end)
    assert [view["A"], view["B"], view["C"]] == named
    # Moved with its folder, the save file still finds its dump.
    moved = tmp_path / "elsewhere" / "sim"
    shutil.move(str(folder), str(moved))
    assert open_in_gtkwave(moved / "ndp_slice.gtkw", tmp_path, tmp_path)["dump"] == str(moved / "ndp_slice.fst")


def test_the_cosimulations_window_opens_on_its_first_event_engine_request_and_completion(tmp_path):
    from matndp.sim.flows.cosim.iteration import share_iteration
    from matndp.sim.flows.cosim.setup import CosimSetup
    from matndp.sim.flows.cosim.waveform import LEAD_CYCLES, TRAIL_CYCLES, write_window
    from tests.sim.flows.test_cosim import mlp
    share = share_iteration(CosimSetup(block="fc1", slices=4, policy="ideal", hbm_fraction=0.9),
                            graph=mlp(32))
    files = write_window(share, (0, 2), tmp_path / "cosim")
    assert written(tmp_path / "cosim") == {"window.fst", "window.gtkw", "window_run/"}
    assert written(tmp_path / "cosim") <= documented_files("cosim.md", "Co-simulation")
    view = files["window_view"]
    assert None not in (view["first_event"], view["first_engine_request"], view["first_completion"])
    save = tmp_path / "cosim" / "window.gtkw"
    text = save.read_text()
    # Payloads as their fields, the engine's events and requests at their instances.
    for trace in ("slice_harness.dut.gpu__req__payload.addr[39:0]", "slice_harness.dut.mem__req__payload.id[8:0]",
                  "slice_harness.dut.engine.events__payload.entry[3:0]",
                  "slice_harness.dut.arbiter.ndp__req__payload.addr[39:0]"):
        assert trace in text, trace
    dump = pywellen.Waveform(str(tmp_path / "cosim" / "window.fst"))
    variables = {var.full_name: var.signal for var in dump.all_vars()}
    traced = [line for line in text.splitlines() if line.startswith("slice_harness.")]
    assert [line for line in traced if re.sub(r"\[\d+:\d+\]$", "", line) not in variables] == []

    def high(name, time):
        return variables[name].value_at(time) == 1
    first_event, engine_request, completion = view["markers_ps"]
    # Marker A: the first transfer into the engine, none before; B: the engine's first
    # request taken at the arbiter; C: irq rises.
    events = ("slice_harness.dut.engine.events__valid", "slice_harness.dut.engine.events__ready")
    assert all(high(name, first_event) for name in events)
    assert not any(all(high(name, time) for name in events) for time in range(0, first_event, CYCLE))
    assert high("slice_harness.dut.arbiter.ndp__req__valid", engine_request)
    assert high("slice_harness.dut.irq", completion) and not high("slice_harness.dut.irq", completion - CYCLE)
    opened = open_in_gtkwave(save, tmp_path, tmp_path)
    assert opened["dump"] == str(tmp_path / "cosim" / "window.fst")
    _check_window(opened, first_event - LEAD_CYCLES * CYCLE, completion + TRAIL_CYCLES * CYCLE)
    assert [opened["A"], opened["B"], opened["C"]] == [first_event, engine_request, completion]
