"""``make sim``: the flagship waveform run.

A slice of ResNet-50 training goes through the NDP slice RTL: a convolution writes its
output tile by tile (real FP32 values), mixed with unrelated traffic, consumer reads and
reads of the next layer's weights; the host runtime programs the filter entries over the
CSR bus, exactly as for hardware. Outputs under the chosen directory: the waveform (FST),
a GTKWave save file with the signals grouped, and a report (JSON and Markdown).
"""

import json
import pathlib

from matndp.hw.config import NDPConfig
from .designs import ndp_slice_verilog
from .runner import run_cocotb


__all__ = ["run_flagship"]


SIGNAL_GROUPS = [
    ("gpu", ["gpu__"]),
    ("mem", ["mem__"]),
    ("trigger", ["events__", "irq"]),
    ("csr", ["csr__"]),
    ("clock and reset", ["clk", "rst"]),
]


def run_flagship(output, *, simulator="verilator", tiles=8, seed=1, pressure="random"):
    from .gtkwave import write_save_file
    output = pathlib.Path(output)
    output.mkdir(parents=True, exist_ok=True)
    config = NDPConfig(engine=None)
    verilog = ndp_slice_verilog(config)
    wave = output / "ndp_slice.fst"
    measurements_path = output / "measurements.json"
    run_cocotb(sources=[verilog], toplevel="ndp_slice", test_module="matndp.sim.tb.ndp_slice_tb",
               simulator=simulator, testcase="dnn_stream", waves=True, wave_file=wave,
               extra_env={"MATNDP_TILES": tiles, "MATNDP_SEED": seed, "MATNDP_PRESSURE": pressure,
                          "MATNDP_REPORT": measurements_path.resolve()})
    # Both simulators put the top module's signals under its own name in the FST.
    scope = "ndp_slice"
    write_save_file(output / "ndp_slice.gtkw", dump_file=wave.name, verilog_text=verilog.read_text(),
                    module="ndp_slice", scope=scope, groups=SIGNAL_GROUPS)
    measurements = json.loads(measurements_path.read_text())
    report = _report(config, measurements, simulator)
    (output / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (output / "report.md").write_text(_markdown(report))
    return report


def _report(config, measurements, simulator):
    sector = config.sector_bytes
    in_flight_bytes = measurements["events"] * sector
    return {
        "simulator": simulator,
        "workload": {"model": "resnet50", "layer": measurements["layer"], "tiles": measurements["tiles"],
                     "layer_sector_writes": measurements["layer_writes"],
                     "other_requests": measurements["other_requests"]},
        "rtl": {
            "requests": measurements["requests"], "reads": measurements["reads"],
            "trigger_events": measurements["events"], "cycles": measurements["cycles"],
            "stall_cycles": measurements["stall_cycles"],
            "back_pressure": measurements["pressure"],
        },
        # What the events mean for the GPU: a kernel fed by these events (e.g. bias + ReLU
        # on the convolution's output) no longer reads the data back from memory, and its
        # result write replaces the producer's.
        "host": {
            "bytes_seen_in_flight": in_flight_bytes,
            "gpu_reread_bytes_avoided": measurements["write_events"] * sector,
        },
        "files": {"waveform": "ndp_slice.fst", "gtkwave_save": "ndp_slice.gtkw"},
    }


def _markdown(report):
    rtl, workload, host = report["rtl"], report["workload"], report["host"]
    return "\n".join([
        "# matNDP flagship run",
        "",
        f"Workload: ResNet-50 `{workload['layer']}` output, first {workload['tiles']} tiles "
        f"({workload['layer_sector_writes']} sector writes) mixed with {workload['other_requests']} "
        f"other requests; simulator: {report['simulator']}; back-pressure: {rtl['back_pressure']}.",
        "",
        "| quantity | value |",
        "|---|---|",
        f"| GPU requests through the slice | {rtl['requests']} |",
        f"| reads among them | {rtl['reads']} |",
        f"| trigger events | {rtl['trigger_events']} |",
        f"| cycles | {rtl['cycles']} |",
        f"| GPU stall cycles (event queue full) | {rtl['stall_cycles']} |",
        f"| bytes the NDP saw in flight | {host['bytes_seen_in_flight']} |",
        f"| output bytes seen as they were written (a consumer kernel need not re-read them) "
        f"| {host['gpu_reread_bytes_avoided']} |",
        "",
        f"Waveform: `{report['files']['waveform']}` — open with "
        f"`gtkwave {report['files']['gtkwave_save']}` (signals grouped: gpu, mem, trigger, csr).",
        "",
    ])
