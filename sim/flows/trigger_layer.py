"""``make sim``'s first part: a layer's output stream through the trigger, with its waveform.

A slice of ResNet-50 training goes through the NDP slice RTL (the trigger-only slice,
:data:`~matndp.sim.designs.TRIGGER_SLICE`): a convolution writes its output tile by tile
(real FP32 values), mixed with unrelated traffic, consumer reads and reads of the next
layer's weights; the host runtime programs the filter entries and the output entry's
interrupt over the CSR bus, exactly as for hardware. Outputs under the chosen folder: the
waveform (FST), a GTKWave save file that opens on the trigger at work, a figure, and a
report (JSON and Markdown) that lists the golden checks that passed.

The outputs are made in a temporary folder beside the chosen one and moved into it at the
end, so an interrupted or failed run leaves the folder as it was.
"""

import json
import os
import pathlib
import shutil

from amaranth.hdl import Shape

from matndp.host.access_stream import output_tiles
from matndp.host.units import format_bytes
from matndp.hw.layouts import request_layout, response_layout, trigger_event_layout
from matndp.sim.designs import TRIGGER_SLICE, ndp_slice_verilog
from matndp.sim.runner import run_cocotb
from matndp.sim.flows.trigger_traffic import TRIGGER_LAYER


__all__ = ["run_trigger_layer", "layer_tiles", "SIGNAL_GROUPS", "FILES"]


SIGNAL_GROUPS = [
    ("gpu", ["gpu__"]),
    ("mem", ["mem__"]),
    ("trigger", ["events__", "irq"]),
    ("csr", ["csr__"]),
    ("clock and reset", ["clk", "rst"]),
]

FILES = {"waveform": "ndp_slice.fst", "gtkwave_save": "ndp_slice.gtkw", "figure": "trigger.png",
         "report_json": "report.json", "report_markdown": "report.md",
         "measurements": "measurements.json"}

# Fields shown in decimal in the waveform; the other multi-bit fields are in hex.
DECIMAL_FIELDS = ("entry", "id")
# The view the save file opens on: from a little before the first trigger event to a
# little after the first stall (when it comes soon after), else a fixed number of cycles.
# "Soon" leaves room for where the scenario's register programming puts the first burst.
_LEAD_CYCLES = 20
_TRAIL_CYCLES = 60
_NEAR_STALL_CYCLES = 1500
_DEFAULT_SPAN_CYCLES = 200


def layer_tiles():
    """The number of output tiles of the layer: the most ``tiles`` may be."""
    return output_tiles(TRIGGER_LAYER)


def _payload_fields(config):
    layouts = {"gpu__req__payload": request_layout(config), "mem__req__payload": request_layout(config),
               "gpu__resp__payload": response_layout(config), "mem__resp__payload": response_layout(config),
               "events__payload": trigger_event_layout(config)}
    return {port: [(name, Shape.cast(field.shape).width) for name, field in layout]
            for port, layout in layouts.items()}


def _view(measurements):
    """The save file's window and named markers (A: first event, B: first stall, C: irq),
    in the dump's time units (ps)."""
    cycle = measurements["cycle_ps"]
    first_event = measurements["first_event_cycle"]
    held = measurements["held_cycles"]
    first_stall = held[0] if held else None
    start = max(0, first_event - _LEAD_CYCLES)
    if first_stall is not None and first_stall - first_event <= _NEAR_STALL_CYCLES:
        end = max(first_stall + _TRAIL_CYCLES, first_event + _DEFAULT_SPAN_CYCLES)
    else:
        end = first_event + _DEFAULT_SPAN_CYCLES
    markers = [first_event, first_stall if first_stall is not None else -1,
               measurements["irq_rise_cycle"]]
    return (start * cycle, end * cycle), [m * cycle if m >= 0 else -1 for m in markers]


def run_trigger_layer(output, *, simulator="verilator", tiles=8, seed=1, pressure="random",
                 progress=print):
    """Run the trigger's layer run into the folder ``output``; returns the report.
    ``progress`` receives a line per step."""
    from matndp.sim.gtkwave import write_save_file
    available = layer_tiles()
    if isinstance(tiles, bool) or not isinstance(tiles, int) or not 1 <= tiles <= available:
        raise ValueError(f"tiles must be in 1..{available} ({TRIGGER_LAYER} has {available} "
                         f"output tiles), not {tiles!r}")
    output = pathlib.Path(output)
    staging = output.parent / f".{output.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        config = TRIGGER_SLICE
        progress(f"sim: exporting the trigger-only slice ({config.trigger.filter_entries} "
                 f"filter entries)")
        verilog = ndp_slice_verilog(config, simulator=simulator)
        wave = staging / FILES["waveform"]
        measurements_path = staging / FILES["measurements"]
        progress(f"sim: building it under {simulator} and running {tiles} of {available} output "
                 f"tiles of {TRIGGER_LAYER} through it")
        run_cocotb(sources=[verilog], toplevel="ndp_slice", test_module="matndp.sim.tb.ndp_slice_tb",
                   simulator=simulator, testcase="dnn_stream", waves=True, wave_file=wave,
                   extra_env={"MATNDP_TILES": tiles, "MATNDP_SEED": seed, "MATNDP_PRESSURE": pressure,
                              "MATNDP_REPORT": measurements_path.resolve()})
        measurements = json.loads(measurements_path.read_text())
        window, markers = _view(measurements)
        # Both simulators put the top module's signals under its own name in the FST.
        write_save_file(staging / FILES["gtkwave_save"], dump_file=wave.name,
                        verilog_text=verilog.read_text(), module="ndp_slice", scope="ndp_slice",
                        groups=SIGNAL_GROUPS, payload_fields=_payload_fields(config),
                        decimal_fields=DECIMAL_FIELDS, escaped_fields=simulator == "icarus",
                        window=window, markers=markers)
        report = _report(config, measurements, simulator, available)
        _figure(measurements, staging / FILES["figure"])
        (staging / FILES["report_json"]).write_text(json.dumps(report, indent=2) + "\n")
        (staging / FILES["report_markdown"]).write_text(_markdown(report))
        output.mkdir(parents=True, exist_ok=True)
        for path in staging.iterdir():
            os.replace(path, output / path.name)
        staging.rmdir()
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return report


def _report(config, measurements, simulator, available_tiles):
    sector = config.sector_bytes
    in_flight_bytes = measurements["events"] * sector
    cycle = measurements["cycle_ps"]
    return {
        "simulator": simulator,
        "design": {"name": "trigger-only NDP slice", "filter_entries": config.trigger.filter_entries,
                   "event_queue_depth": config.trigger.event_queue_depth, "sector_bytes": sector},
        "workload": {"model": "resnet50", "layer": measurements["layer"], "tiles": measurements["tiles"],
                     "layer_tiles": available_tiles,
                     "layer_sector_writes": measurements["layer_writes"],
                     "other_requests": measurements["other_requests"]},
        "rtl": {
            "requests": measurements["requests"], "reads": measurements["reads"],
            "trigger_events": measurements["events"], "cycles": measurements["cycles"],
            "stall_cycles": measurements["stall_cycles"],
            "back_pressure": measurements["pressure"],
        },
        "entries": measurements["entries"],
        "events_by_entry": measurements["events_by_entry"],
        "disabled_entries": measurements["disabled_entries"],
        "irq": {"rise_cycle": measurements["irq_rise_cycle"],
                "cycles_after_last_event": measurements["irq_latency_cycles"]},
        "golden_checks": {"passed": measurements["checks"]},
        # What the events mean for the GPU: a kernel fed by these events (e.g. bias + ReLU
        # on the convolution's output) no longer reads the data back from memory, and its
        # result write replaces the producer's.
        "host": {
            "bytes_seen_in_flight": in_flight_bytes,
            "gpu_reread_bytes_avoided": measurements["write_events"] * sector,
        },
        "waveform_view": {"first_event_ps": measurements["first_event_cycle"] * cycle,
                          "first_stall_ps": (measurements["held_cycles"][0] * cycle
                                             if measurements["held_cycles"] else None),
                          "irq_rise_ps": measurements["irq_rise_cycle"] * cycle},
        "files": {key: name for key, name in FILES.items() if key != "measurements"},
    }


def _direction(entry):
    return " and ".join(kind for kind, on in (("writes", entry["on_write"]), ("reads", entry["on_read"])) if on)


def _markdown(report):
    rtl, workload, host = report["rtl"], report["workload"], report["host"]
    entries = report["entries"]
    lines = [
        "# matNDP: a layer through the trigger",
        "",
        f"ResNet-50 `{workload['layer']}` output, the first {workload['tiles']} of its "
        f"{workload['layer_tiles']} tiles ({workload['layer_sector_writes']} sector writes), mixed "
        f"with {workload['other_requests']} other requests, through the "
        f"{report['design']['name']} under {report['simulator']} with "
        f"{rtl['back_pressure']} back-pressure.",
        "",
        f"Golden checks, all passed ({len(report['golden_checks']['passed'])}):",
        *(f"- {check}" for check in report["golden_checks"]["passed"]),
        "",
        "| entry | range | triggers on | events | irq |",
        "|---|---|---|---|---|",
    ]
    for index, entry in entries.items():
        irq = (f"enabled; rose in cycle {report['irq']['rise_cycle']}"
               if entry["irq"] else "-")
        lines.append(f"| {index} | `{entry['base']:#x}` + {format_bytes(entry['size'])} | "
                     f"{_direction(entry)} | {report['events_by_entry'][index]} | {irq} |")
    disabled = ", ".join(str(index) for index in report["disabled_entries"])
    lines += [
        "",
        f"- {rtl['requests']} requests ({rtl['reads']} reads) in {rtl['cycles']} cycles; "
        f"{rtl['trigger_events']} trigger events"
        + (f"; entry {disabled} programmed, then disabled: no events" if disabled else "") + ".",
        f"- GPU stall cycles (an event queue full): {rtl['stall_cycles']}.",
        f"- Bytes served in flight (the NDP saw them without reading memory): "
        f"{format_bytes(host['bytes_seen_in_flight'])}; of them output bytes seen as they were "
        f"written (a consumer kernel need not re-read them): "
        f"{format_bytes(host['gpu_reread_bytes_avoided'])}.",
        "",
        f"Waveform: `gtkwave {report['files']['gtkwave_save']}` opens at the first trigger "
        f"events; markers A (first event), B (first stall), C (irq rises). Figure: "
        f"`{report['files']['figure']}`. Signals: docs/waveforms.md.",
        "",
    ]
    return "\n".join(lines)


def _figure(measurements, path):
    """Events delivered per entry over the run, the cycles the GPU was held, and irq."""
    from matndp.host.output import pyplot, save_figure
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(9, 4))
    for index, cycles in measurements["event_cycles"].items():
        entry = measurements["entries"][index]
        axis.step(cycles, range(1, len(cycles) + 1), where="post",
                  label=f"entry {index} ({_direction(entry)})")
    held = measurements["held_cycles"]
    if held:
        axis.plot(held, [0] * len(held), "|", color="tab:red", markersize=12,
                  label=f"GPU held: event queue full ({len(held)} cycles)")
    axis.axvline(measurements["irq_rise_cycle"], color="k", ls="--", lw=1, label="irq rises")
    axis.set_xlabel("cycle")
    axis.set_ylabel("trigger events delivered")
    axis.set_title(f"ResNet-50 {measurements['layer']}: {measurements['tiles']} output tiles "
                   f"through the trigger ({measurements['pressure']} back-pressure)")
    axis.legend(fontsize=8, loc="upper left")
    save_figure(figure, path, dpi=110)
