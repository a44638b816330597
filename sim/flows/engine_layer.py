"""``make sim --engine``: on-the-fly NDP on a real layer, through the slice with its
engine.

ResNet-50's ``layer1.0.conv3`` output (C = 256 channels, channels innermost, real values
computed from seeded inputs and He-initialized weights) is written by the GPU, one slice's
share of its pixels. Two filter entries watch two such output tensors, written
interleaved sector by sector: the first runs ``bias_relu`` (y = max(x + b, 0), the
epilogue a GEMM would otherwise need a second pass for), the second ``bn_stats`` (the
batch-norm statistics, reduced in the scratchpad in trigger order, and the finalizer's
scale and shift). Both compute on the written data in flight; the GPU does nothing else.
Outputs are checked bit for bit against the instruction-set simulator and the numpy
goldens. With waves (the default), the save file groups the GPU port, the memory port,
the trigger's events into the engine and the engine's memory requests.
"""

import json
import pathlib

import numpy as np

from matndp.host.access_stream import RESNET50_LAYERS, conv_output
from matndp.host.kernels.library import kernel
from matndp.host.kernels.library.inputs import random_inputs
from matndp.sim.designs import KERNEL_CONFIG, ndp_slice_verilog
from matndp.sim.flows.kernel_run import (Launch, differing_elements, reference_outputs,
                                         run_launches_rtl)


__all__ = ["run_engine_layer", "LAYER"]

LAYER = "layer1.0.conv3"
KERNELS = ("bias_relu", "bn_stats")

# Signals of the waveform, by group: (title, scope under the top, names).
ENGINE_SIGNALS = (
    ("trigger events into the engine", "engine", ("events__valid", "events__ready", "events__payload")),
    ("engine memory requests", "arbiter", ("ndp__req__valid", "ndp__req__ready", "ndp__resp__valid")),
)
PORT_GROUPS = [("GPU requests", ["gpu__req__"]), ("GPU responses", ["gpu__resp__"]),
               ("memory requests", ["mem__req__"]), ("memory responses", ["mem__resp__"]),
               ("completion", ["irq"])]


def layer_launches(rows, seed, kernels=KERNELS):
    """One launch per kernel, their trigger tensors real conv outputs of the layer: rows
    0..rows for the first, rows..2·rows for the second, and so on."""
    output = conv_output(LAYER, seed=seed)
    channels = RESNET50_LAYERS[LAYER].out_channels
    launches = []
    for index, name in enumerate(kernels):
        problem = {"rows": rows, "channels": channels}
        inputs = random_inputs(kernel(name).launch(problem), seed + index)
        inputs["x"] = np.ascontiguousarray(output[index * rows:(index + 1) * rows])
        launches.append(Launch(name, problem, inputs=inputs))
    return launches


def _checks(run):
    launch = kernel(run.kernel).launch(run.problem)
    iss, golden, _ = reference_outputs(launch, run.inputs)
    return launch, differing_elements(run.outputs, iss), differing_elements(run.outputs, golden)


def run_engine_layer(output, *, simulator="verilator", rows=8, seed=1, pressure=0.2,
                        waves=True):
    """Run the two launches into ``output`` (``engine_report.json``, ``engine_report.md``;
    with ``waves``, the default, also ``engine.fst`` and ``engine.gtkw``); returns the
    report. The run's job, inputs and outputs stay in ``output/engine_run``."""
    from matndp.sim.gtkwave import write_save_file, append_group
    output = pathlib.Path(output)
    output.mkdir(parents=True, exist_ok=True)
    runs = run_launches_rtl(layer_launches(rows, seed), seed=seed, simulator=simulator,
                            pressure=pressure, unrelated_per_access=0, waves=waves,
                            directory=output / "engine_run")
    files = {}
    if waves:
        wave = output / "engine.fst"
        (output / "engine_run" / "waves.fst").replace(wave)
        verilog = ndp_slice_verilog(KERNEL_CONFIG)
        save = output / "engine.gtkw"
        text = verilog.read_text()
        write_save_file(save, dump_file=wave.name, verilog_text=text,
                        module="ndp_slice", scope="ndp_slice", groups=PORT_GROUPS)
        for title, scope, names in ENGINE_SIGNALS:
            append_group(save, title, f"ndp_slice.{scope}", names, verilog_text=text,
                         module=f"ndp_slice.{scope}")
        files = {"waveform": str(wave), "gtkwave": str(save)}

    measured = runs[0].measurements
    sector = KERNEL_CONFIG.sector_bytes
    entries = []
    for run in runs:
        launch, against_iss, against_golden = _checks(run)
        entries.append({
            "kernel": run.kernel, "problem": run.problem, "triggers": launch.expected_triggers,
            "complete": run.complete, "error": run.error, "cycles_to_complete": run.cycles,
            "completed_uthreads": run.measurements["completed"],
            "bytes_computed_in_flight": launch.expected_triggers * sector,
            "mismatches_against_iss": against_iss, "mismatches_against_golden": against_golden,
            "bit_exact": not any(against_iss.values()) and not any(against_golden.values()),
        })
    report = {
        "workload": {"model": "resnet50", "layer": LAYER, "rows_per_tensor": rows,
                     "channels": RESNET50_LAYERS[LAYER].out_channels,
                     "values": "real conv outputs (numpy, seeded inputs and weights)"},
        "simulator": simulator, "seed": seed, "back_pressure": pressure,
        "engine": {"sub_cores": KERNEL_CONFIG.engine.sub_cores, "slots": KERNEL_CONFIG.engine.slots},
        "entries": entries,
        "gpu_requests": measured["gpu_requests"],
        "ndp_memory_requests": measured["ndp_memory_requests"],
        "instructions": measured["instructions"],
        "gpu_stall_cycles": measured["stall_cycles"],
        "passed": all(entry["complete"] and entry["error"] is None and entry["bit_exact"]
                      for entry in entries),
        "files": files,
    }
    (output / "engine_report.json").write_text(json.dumps(report, indent=2) + "\n")
    (output / "engine_report.md").write_text(_markdown(report))
    return report


def _markdown(report):
    workload = report["workload"]
    lines = [
        "# On-the-fly NDP on a ResNet-50 layer",
        "",
        f"The GPU writes two {workload['rows_per_tensor']} × {workload['channels']} tensors of "
        f"ResNet-50 `{workload['layer']}` output ({workload['values']}), interleaved; the slice's "
        f"engine ({report['engine']['sub_cores']} sub-core, {report['engine']['slots']} µthread "
        f"slots) computes on the written data in flight. Simulator {report['simulator']}, "
        f"random back-pressure {report['back_pressure']} on every stream.",
        "",
        "| entry | kernel | triggers | complete after | bytes computed in flight | bit-exact (ISS, golden) |",
        "|---|---|---|---|---|---|",
    ]
    for index, entry in enumerate(report["entries"]):
        lines.append(f"| {index} | `{entry['kernel']}` | {entry['triggers']} | "
                     f"{entry['cycles_to_complete']} cycles | {entry['bytes_computed_in_flight']} B | "
                     f"{'yes' if entry['bit_exact'] else 'NO'} |")
    lines += [
        "",
        f"GPU memory requests {report['gpu_requests']}, engine memory requests "
        f"{report['ndp_memory_requests']}, instructions {report['instructions']}, GPU stall "
        f"cycles {report['gpu_stall_cycles']}.",
        "",
        f"Result: {'PASS' if report['passed'] else 'FAIL'}: every output "
        f"{'equals' if report['passed'] else 'does not equal'} the instruction-set simulator's "
        f"and the golden model's, bit for bit.",
        "",
    ]
    if report["files"]:
        lines += [f"Waveform: `{report['files']['waveform']}` (open `gtkwave "
                  f"{report['files']['gtkwave']}`).", ""]
    return "\n".join(lines)
