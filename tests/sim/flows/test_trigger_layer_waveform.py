"""The waveform of `make sim` opens on the trigger at work: the GTKWave save file names its
dump by a path that holds from any folder, every trace it names is in the FST, payloads
are shown as their fields, the markers fall where the dump itself shows the first trigger
events, the first stall and irq rising, and the view is the window docs/waveforms.md
documents, read as GTKWave 3.3 reads a save file. The FST is read independently of the
testbench (pywellen); tests/sim/test_gtkwave_headless.py opens the file in GTKWave itself."""

import re

import pytest
import pywellen

from tests.sim.test_gtkwave import GTKWAVE_WAVE_PANE, gtkwave_view


CYCLE = 10_000
# docs/waveforms.md: 20 cycles before the first event to 60 after the first stall, or 200
# after the first event when the first stall comes more than 1 500 cycles after it.
LEAD, TRAIL, SPAN, NEAR = 20 * CYCLE, 60 * CYCLE, 200 * CYCLE, 1500 * CYCLE


# The tests of one run share a worker, which makes the run once.
pytestmark = pytest.mark.xdist_group("trigger_layer")


# `make sim` runs Verilator; the Icarus run's dump is checked in the slow suite (its run under
# a command's log is in the default one, tests/sim/flows/test_trigger_layer.py).
@pytest.fixture(params=[pytest.param("icarus", marks=pytest.mark.slow), "verilator"])
def run(request, trigger_layer_run):
    return trigger_layer_run(request.param)


def _save_file(folder):
    text = (folder / "ndp_slice.gtkw").read_text()
    start = int(re.search(r"^\[timestart\] (\d+)$", text, re.M).group(1))
    zoom, primary, *named = re.search(r"^\*(.*)$", text, re.M).group(1).split()
    traces = [line for line in text.splitlines() if line.startswith("ndp_slice.")]
    return text, start, float(zoom), int(primary), [int(m) for m in named], traces


class Dump:
    """Values of the FST's signals by full name, at a time."""

    def __init__(self, path):
        self.waveform = pywellen.Waveform(str(path))
        self.vars = {var.full_name: var for var in self.waveform.all_vars()}

    def value(self, name, time):
        return self.vars[name].signal.value_at(time)


def test_every_trace_of_the_save_file_is_in_the_dump(run):
    folder, _ = run
    _, _, _, _, _, traces = _save_file(folder)
    names = {var.full_name for var in pywellen.Waveform(str(folder / "ndp_slice.fst")).all_vars()}
    missing = [trace for trace in traces if re.sub(r"\[\d+:\d+\]$", "", trace) not in names]
    assert not missing, f"traces the dump does not have: {missing}"
    fields = [trace for trace in traces if re.search(r"payload\.\w+", trace)]
    for field in ("gpu__req__payload.addr", "gpu__req__payload.id", "events__payload.entry",
                  "events__payload.offset", "events__payload.write"):
        assert any(field in trace for trace in fields), field


def test_raw_payloads_sit_in_closed_groups(run):
    folder, _ = run
    text = _save_file(folder)[0]
    closed = re.findall(r"^@c00200\n-(.*)\n(.*?)^@1401200\n-\1$", text, re.M | re.S)
    assert [title for title, _ in closed] == ["raw payloads"] * 3
    for _, body in closed:
        assert all("." not in line.split("ndp_slice.", 1)[1] for line in body.splitlines()
                   if line.startswith("ndp_slice.")), body


def test_the_save_file_names_its_dump_so_that_it_opens_from_any_folder(run):
    folder, _ = run
    text = _save_file(folder)[0]
    dump = re.search(r'^\[dumpfile\] "(.*)"$', text, re.M).group(1)
    save = re.search(r'^\[savefile\] "(.*)"$', text, re.M).group(1)
    assert dump == str((folder / "ndp_slice.fst").resolve()) and pywellen.Waveform(dump)
    assert save == str((folder / "ndp_slice.gtkw").resolve())
    # The save file's times are the dump's units.
    timescale = pywellen.Waveform(dump).timescale
    assert (timescale.factor, str(timescale.unit)) == (1, "ps")


def test_the_view_is_the_documented_window(run):
    folder, _ = run
    _, timestart, zoom, _, named, _ = _save_file(folder)
    first_event, first_stall = named[:2]
    start, end = gtkwave_view(timestart, zoom)
    if first_stall != -1 and first_stall - first_event <= NEAR:
        documented = max(first_stall + TRAIL, first_event + SPAN)
    else:
        documented = first_event + SPAN
    assert start <= first_event - LEAD and first_event - LEAD - start < (end - start) / GTKWAVE_WAVE_PANE
    assert end == pytest.approx(documented, rel=1e-6)


def test_the_markers_fall_on_the_trigger_at_work(run):
    folder, report = run
    _, start, zoom, primary, named, _ = _save_file(folder)
    first_event, first_stall, irq_rise = named[:3]
    assert primary == first_event and all(marker == -1 for marker in named[3:])
    dump = Dump(folder / "ndp_slice.fst")
    cycle = CYCLE
    # The dump shows a transfer on the events stream at marker A and none before it.
    def transfer(time):
        return dump.value("ndp_slice.events__valid", time) and dump.value("ndp_slice.events__ready", time)
    assert not any(transfer(time) for time in range(start, first_event, cycle))
    assert transfer(first_event)
    # At marker B the slice withholds an access: nothing offered to memory or to the GPU.
    assert not dump.value("ndp_slice.mem__req__valid", first_stall) or \
        not dump.value("ndp_slice.gpu__resp__valid", first_stall)
    # irq rises at marker C.
    assert dump.value("ndp_slice.irq", irq_rise - cycle) == 0
    assert dump.value("ndp_slice.irq", irq_rise) == 1
    assert report["waveform_view"] == {"first_event_ps": first_event, "first_stall_ps": first_stall,
                                       "irq_rise_ps": irq_rise}
