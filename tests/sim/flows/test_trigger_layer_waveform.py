"""The waveform of `make sim` opens on the trigger at work: every trace the GTKWave save
file names is in the FST, payloads are shown as their fields, and the view and markers
fall where the dump itself shows the first trigger events, the first stall and irq rising.
The FST is read independently of the testbench (pywellen)."""

import re

import pytest
import pywellen

from matndp.sim.flows.trigger_layer import run_trigger_layer
from matndp.sim.gtkwave import WAVE_PANE_PIXELS


@pytest.fixture(scope="module", params=["icarus", "verilator"])
def run(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"trigger-layer-{request.param}")
    report = run_trigger_layer(folder, simulator=request.param, tiles=1, seed=2, progress=lambda line: None)
    return folder, report


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
    assert {title for title, _ in closed} == {"gpu raw payloads", "mem raw payloads",
                                              "trigger raw payloads"}
    for _, body in closed:
        assert all("." not in line.split("ndp_slice.", 1)[1] for line in body.splitlines()
                   if line.startswith("ndp_slice.")), body


def test_the_view_and_markers_fall_on_the_trigger_at_work(run):
    folder, report = run
    _, start, zoom, primary, named, _ = _save_file(folder)
    end = start + 2 ** -zoom * WAVE_PANE_PIXELS
    first_event, first_stall, irq_rise = named[:3]
    assert primary == first_event and all(marker == -1 for marker in named[3:])
    assert start < first_event < end and start < first_stall < end
    dump = Dump(folder / "ndp_slice.fst")
    cycle = 10_000
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
