"""The co-simulation's report: ``report.json``, ``report.md`` and its figures (the
timeline of GPU and NDP activity per op, the memory slots by source, HBM occupancy from
the tiering run), and the calibration file the run measured, with the host model's
iteration re-timed by it; with several slices simulated, the spread of their cycles and the
iteration re-timed with the slowest slice per op kernel."""

import json
import pathlib

import numpy as np

from matndp.host.calibration import load_calibration
from matndp.host.offload import plan_offload
from matndp.host.output import pyplot, save_figure
from matndp.host.units import GB, format_seconds
from matndp.sim.batch.executor import CLOCK_NS
from matndp.sim.flows.cosim.combine import combine_lines, combine_report, reduction_partials
from matndp.sim.flows.cosim.measure import (SLOT_SOURCES, calibration_document, kernel_costs, measure,
                                            merged_sweeps, overlap_figures, overlap_saving,
                                            share_measures)
from matndp.sim.flows.cosim.slices import SliceMeasures, slice_spread, slowest_slice_retime


__all__ = ["write_report", "write_iteration_report", "FILES", "TIMING_FIELDS"]


FILES = {"report_json": "report.json", "report_markdown": "report.md",
         "timeline": "timeline.png", "slots": "memory_slots.png", "tiers": "hbm_occupancy.png",
         "calibration": "calibration.json"}

_COLORS = {"gpu": "#4c72b0", "migration": "#dd8452", "sweep": "#8172b3", "engine": "#55a868",
           "stall": "#c44e52"}


def _timeline(measures, clock_hz, path):
    """Two panels: the run as it went, and the same with the tiering stalls cut out, where
    the ops' own cycles can be seen."""
    plt = pyplot()
    steps = [step for step in measures["steps"] if step["first_cycle"] is not None]
    figure, panels = plt.subplots(1, 2, figsize=(13, max(4, 0.22 * len(steps) + 1.5)), sharey=True,
                                  gridspec_kw={"width_ratios": [1, 1.4]})
    scale = 1e6 / clock_hz
    for panel, (axes, cut) in enumerate(zip(panels, (False, True))):
        removed = 0
        for row, step in enumerate(steps):
            if cut:
                removed += step["stall_cycles"]
            elif step["stall_cycles"]:
                start = step["first_cycle"] - step["stall_cycles"]
                axes.broken_barh([(start * scale, step["stall_cycles"] * scale)], (row - 0.4, 0.8),
                                 facecolors=_COLORS["stall"], alpha=0.5)
            for stage in step["stages"]:
                if stage["first_cycle"] is None:
                    continue
                start, width = (stage["first_cycle"] - removed) * scale, stage["cycles"] * scale
                color = _COLORS["gpu"] if stage["kind"] == "gpu" else _COLORS["sweep"]
                axes.broken_barh([(start, width)], (row - 0.4, 0.8), facecolors=color)
                if stage["kind"] == "gpu" and stage["kernels"]:
                    axes.broken_barh([(start, width)], (row - 0.12, 0.24), facecolors=_COLORS["engine"])
        axes.set_xlabel("µs at the slice clock" + (", tiering stalls cut out" if cut else ""))
    panels[0].set_yticks(range(len(steps)), [step["op"] for step in steps], fontsize=7)
    panels[0].invert_yaxis()
    panels[0].set_title("as run")
    panels[1].set_title("without the stalls")
    handles = [plt.Rectangle((0, 0), 1, 1, color=_COLORS[key]) for key in ("gpu", "engine", "sweep", "stall")]
    panels[1].legend(handles, ["GPU kernel (its accesses to this slice)", "on-the-fly NDP kernels riding on it",
                               "NDP kernel (standalone / later phase)", "stall: waiting for flash (tiering)"],
                     loc="lower left", fontsize=8)
    figure.suptitle("One slice's share of the block through the RTL")
    return save_figure(figure, path)


def _slots(measures, clock_hz, path):
    plt = pyplot()
    slots = measures["slots"]
    edges = np.array(slots["edges_cycles"]) * 1e6 / clock_hz
    figure, axes = plt.subplots(figsize=(11, 3.6))
    bottom = np.zeros(len(edges) - 1)
    labels = {"gpu": "GPU", "migration": "tier copies (HBM↔flash)", "sweep": "NDP sweep",
              "engine": "NDP engine"}
    for source in SLOT_SOURCES:
        values = np.array(slots["fraction"][source])
        axes.bar(edges[:-1], values, width=np.diff(edges), bottom=bottom, align="edge",
                 color=_COLORS[source], label=labels[source])
        bottom += values
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("share of memory slots")
    axes.set_xlabel("µs at the slice clock, tiering stalls cut out")
    axes.legend(fontsize=8, loc="upper right")
    axes.set_title("The slice's memory slots by source (the rest idle)")
    return save_figure(figure, path)


def _tiers(share, path):
    plt = pyplot()
    record = share.tier.records[-1]
    samples = record.occupancy
    page = share.tier.lifetimes.page_bytes
    times = np.array([sample.time_s for sample in samples]) - record.start_s
    pages = np.array([sample.pages for sample in samples])
    figure, axes = plt.subplots(figsize=(11, 3.4))
    axes.step(times * 1e3, pages * page / GB, where="post", label="HBM in use")
    axes.axhline(share.tier.capacity_pages * page / GB, color="k", linestyle="--", label="HBM capacity")
    names = {op["op"] for op in share.ops}
    starts = _op_starts(share)
    spans = [(starts[slot] * 1e3, (starts[slot + 1] - starts[slot]) * 1e3)
             for slot, op in enumerate(share.graph.ops) if op.name in names and slot + 1 in starts]
    axes.broken_barh(spans, (0, pages.max() * page / GB * 1.02), facecolors="#8172b3", alpha=0.35,
                     label=f"the ops of {share.setup.block}")
    axes.set_xlabel("time in the iteration (ms, tiering model)")
    axes.set_ylabel("GB")
    axes.legend(fontsize=8)
    axes.set_title(f"HBM occupancy, policy {share.setup.policy}, HBM = {share.setup.hbm_fraction:g} × footprint")
    return save_figure(figure, path)


def _op_starts(share):
    from matndp.host.tier.events import EventKind
    record = share.tier.records[-1]
    starts = {}
    for event in share.tier.log or ():
        if event.time_s >= record.start_s and event.kind is EventKind.OP:
            starts.setdefault(event.slot, event.time_s - record.start_s)
    starts[len(share.graph.ops)] = record.end_s - record.start_s
    return starts


def _retime(share, calibration_path, blocks=True):
    calibration = load_calibration(calibration_path)
    plan = plan_offload(share.graph, share.plan.gpu, calibration)
    before = {entry.op: entry.end_s - entry.start_s for entry in share.plan.schedule}
    after = {entry.op: entry.end_s - entry.start_s for entry in plan.schedule}
    block = [op["op"] for op in share.ops]
    return {"iteration_s_host": share.plan.matndp_s, "iteration_s_retimed": plan.matndp_s,
            "baseline_s": share.plan.baseline_s,
            "speedup_host": share.plan.speedup, "speedup_retimed": plan.speedup,
            "block_s_host": sum(before[name] for name in block) if blocks else None,
            "block_s_retimed": sum(after[name] for name in block) if blocks else None,
            "calibration_host": share.plan.calibration.describe()["source"]}


def write_report(run, output, *, checks, wall_s=None, extra_files=None, other_slices=(), serial=None):
    """Measure ``run`` and write every file of :data:`FILES` into ``output``; returns the
    report (what ``report.json`` holds). ``other_slices``: the job results
    (:func:`~matndp.sim.flows.cosim.shard.run_block_job`) of the same block on other
    slices, set beside ``run``'s slice in ``slice_spread``, their reductions' partials
    combined with ``run``'s in ``combine`` (:func:`~matndp.sim.flows.cosim.combine.combine_report`:
    raises :class:`~matndp.sim.batch.check.CheckFailed` when a combination differs from
    the golden's). ``serial``: the run of the steps the overlap merged, one after another
    (``measures.overlap`` sets it beside ``run``)."""
    output = pathlib.Path(output)
    output.mkdir(parents=True, exist_ok=True)
    share = run.share
    measures = measure(run)
    if serial is not None:
        serial_measures = share_measures(serial)
        measures["overlap"] = overlap_figures(measures, serial_measures)
        # A merged stage's cycles are the GPU op's, not a kernel's pace: the sweeps the
        # merges took are measured in the serial run.
        measures["kernels"] = kernel_costs([measures["steps"] + merged_sweeps(serial_measures)], share.ops,
                                           share.plan.calibration)
    calibration = calibration_document(measures, share.clock_hz)
    (output / FILES["calibration"]).write_text(json.dumps(calibration, indent=2) + "\n")
    retimed = _retime(share, output / FILES["calibration"])
    _timeline(measures, share.clock_hz, output / FILES["timeline"])
    _slots(measures, share.clock_hz, output / FILES["slots"])
    _tiers(share, output / FILES["tiers"])
    report = {"setup": share.setup.as_dict(), "slices": share.slices, "clock_hz": share.clock_hz,
              "memory": {"latency_cycles": run.job.timing.latency,
                         "interval_cycles": share.memory_interval, "reorder": run.job.timing.reorder},
              "checks": checks, "passed": True, "measures": measures, "retimed": retimed,
              "tier": {"policy": share.setup.policy, "stall_s": share.tier.metrics["stall_s"],
                       "iteration_s": share.tier.metrics["iteration_s"],
                       "compute_s": share.tier.metrics["iteration_s"] - share.tier.metrics["stall_s"],
                       "inter_tier_bytes": share.tier.metrics.get("inter_tier_bytes"),
                       # The retimed matNDP iteration with the same flash stalls.
                       "iteration_s_matndp": share.tier.metrics["stall_s"] + retimed["iteration_s_retimed"]},
              "values": "seeded random (no producer is modelled in numpy for these tensors)",
              "notes": share.notes, "wall_s": wall_s, "files": {**FILES, **(extra_files or {})}}
    per_slice = [SliceMeasures(share.setup.slice_index, measures["cycles"], measures["steps"], measures["ops"])]
    per_slice += [SliceMeasures.of_results([result]) for result in other_slices]
    report["slice_spread"] = _spread(per_slice, share, share.ops,
                                     [checks] + [result["checks"] for result in other_slices])
    report["combine"] = combine_report(
        [(share.setup.slice_index, reduction_partials(run))] +
        [(result["slice"], result["partials"]) for result in other_slices],
        share, [op["op"] for op in share.ops])
    (output / FILES["report_json"]).write_text(json.dumps(report, indent=2, default=_plain) + "\n")
    (output / FILES["report_markdown"]).write_text(_markdown(report, share))
    return report


def _spread(per_slice, share, ops, checks, blocks=True):
    """``slice_spread`` of the report: the slices' cycles side by side, the launches checked
    on all of them, and the host model re-timed with the slowest slice per op kernel."""
    spread = slice_spread(per_slice, share.slices)
    retimed = slowest_slice_retime(per_slice, ops, share.plan.calibration, share.clock_hz,
                                   lambda path: _retime(share, path, blocks=blocks))
    return {**spread, "launches_bit_exact": sum(summary["launches_bit_exact"] for summary in checks),
            "retimed_slowest": retimed}


def write_iteration_report(results, output, *, share, wall_s=None):
    """The report of a whole iteration run block by block (``results``: each block's job
    result from :func:`~matndp.sim.flows.cosim.shard.run_block_job`, in block order, slice
    after slice when several were simulated; ``share``: the first block's share on the first
    slice, for the host model's plan): ``report.json``, ``report.md`` and the calibration;
    returns the report. The blocks' figures and the calibration are the first slice's
    (slice 0), the checks every job's, ``slice_spread`` sets the slices side by side and
    ``combine`` combines every block's reductions over them."""
    output = pathlib.Path(output)
    output.mkdir(parents=True, exist_ok=True)
    by_slice = {}
    for result in results:
        by_slice.setdefault(result["slice"], []).append(result)
    first = next(iter(by_slice.values()))
    checks = {}
    for result in results:
        for key, value in result["checks"].items():
            checks[key] = checks.get(key, 0) + value
    blocks, steps, ops = [], [], []
    for result in first:
        measures = result["measures"]
        steps += measures["steps"] + measures.get("merged_sweeps", [])
        ops += measures["ops"]
        blocks.append({"block": result["block"], "steps": result["steps"], "launches": result["launches"],
                       "host_cycles": measures["host_cycles"], "rtl_cycles": measures["rtl_busy_cycles"],
                       "stall_cycles": measures["stall_cycles"], "cycles": result["cycles"]})
    kernels = kernel_costs([steps], ops, share.plan.calibration)
    calibration = calibration_document({"kernels": kernels}, share.clock_hz)
    (output / FILES["calibration"]).write_text(json.dumps(calibration, indent=2) + "\n")
    retimed = _retime(share, output / FILES["calibration"], blocks=None)
    cycles = sum(result["cycles"] for result in first)
    simulated = sum(result["cycles"] for result in results)
    per_slice = [SliceMeasures.of_results(slice_results) for slice_results in by_slice.values()]
    report = {"setup": {**share.setup.as_dict(), "block": "the whole iteration"},
              "slices": share.slices, "clock_hz": share.clock_hz, "checks": checks, "passed": True,
              "cycles": cycles, "blocks": blocks, "kernels": kernels, "retimed": retimed,
              "wall_s": wall_s, "simulated_cycles_per_wall_s": simulated / wall_s if wall_s else None,
              "jobs": [{"block": result["block"], "slice": result["slice"], "cycles": result["cycles"],
                        "wall_s": result["wall_s"], "worker": result["worker"]} for result in results],
              "values": "seeded random (no producer is modelled in numpy for these tensors)",
              # A tensor several blocks read is noted once.
              "notes": list(dict.fromkeys(note for result in results for note in result["notes"])),
              "files": {"report_json": FILES["report_json"], "report_markdown": FILES["report_markdown"],
                        "calibration": FILES["calibration"]},
              "slice_spread": _spread(per_slice, share, ops, [checks], blocks=None),
              "combine": combine_report([(index, [partial for result in slice_results
                                                  for partial in result["partials"]])
                                         for index, slice_results in by_slice.items()],
                                        share, [op["op"] for op in ops]),
              "overlap": _iteration_overlap(first, share.setup.overlap)}
    (output / FILES["report_json"]).write_text(json.dumps(report, indent=2, default=_plain) + "\n")
    (output / FILES["report_markdown"]).write_text(_iteration_markdown(report))
    return report


def _iteration_overlap(results, on):
    """The blocks' overlap figures summed (``results``: one slice's jobs): the steps
    merged, the host model's serial and overlapped cycles, the RTL's busy cycles."""
    figures = [result["measures"]["overlap"] for result in results]
    summed = {"on": on, "merged": sum(len(figure["merged"]) for figure in figures),
              **{key: sum(figure[key] for figure in figures)
                 for key in ("host_serial_cycles", "host_overlapped_cycles", "rtl_busy_cycles")}}
    # A block with nothing merged saved nothing.
    return overlap_saving(summed, sum(figure.get("rtl_saved_cycles", 0) for figure in figures))


# The report's fields that say how a run went rather than what it gave (a job's too).
TIMING_FIELDS = ("wall_s", "simulated_cycles_per_wall_s", "worker")


def _iteration_markdown(report):
    setup, clock = report["setup"], report["clock_hz"]
    blocks = report["blocks"]
    host = sum(block["host_cycles"] for block in blocks)
    rtl = sum(block["rtl_cycles"] for block in blocks)
    stall = sum(block["stall_cycles"] for block in blocks)
    checks = report["checks"]
    lines = [
        f"# Co-simulation: a whole {setup['model']} training iteration, batch {setup['batch']}, "
        f"{setup['gpu']}, tiering `{setup['policy']}`",
        "",
        f"One NDP slice's share (1/{report['slices']}) of every block, each block a job of its "
        f"own through the batch harness from reset (its memory loaded, its kernels loaded by "
        f"the runtime): {report['cycles']:,} cycles ({_us(report['cycles'], clock)}), {stall:,} "
        f"of them tiering stalls.",
        "",
        *([f"Wall time: {report['wall_s']:.0f} s ({report['simulated_cycles_per_wall_s'] / 1e3:.0f} k "
           f"simulated cycles per second, checks included; the slowest job "
           f"{max(job['wall_s'] for job in report['jobs']):.0f} s).", ""] if report["wall_s"] else []),
        f"Checks passed: {checks['gpu_requests']:,} GPU-port requests and {checks['engine_requests']:,} "
        f"engine requests through the GPU path and memory, {checks['write_events']:,} write and "
        f"{checks['read_events']:,} read events, {checks['launches_bit_exact']} kernel launches "
        f"bit-exact against the numpy golden and the instruction-set simulator.",
        "",
        *_note_lines(report["notes"]),
        *_iteration_overlap_lines(report["overlap"]),
        "| block | steps | kernel launches | host cycles | RTL cycles | RTL / host | stall cycles |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for block in blocks:
        ratio = f"{block['rtl_cycles'] / block['host_cycles']:.2f}" if block["host_cycles"] else "–"
        lines.append(f"| {block['block']} | {block['steps']} | {block['launches']} | {block['host_cycles']:,} | "
                     f"{block['rtl_cycles']:,} | {ratio} | {block['stall_cycles']:,} |")
    lines += [f"| all | {sum(b['steps'] for b in blocks)} | {sum(b['launches'] for b in blocks)} | "
              f"{host:,} | {rtl:,} | {rtl / host:.2f} | {stall:,} |", "",
              "Kernel cycles per trigger sector measured (sweeps of 64 sectors or more):", "",
              "| op kernel | measured | host model |", "|---|---:|---:|"]
    for name, cost in report["kernels"].items():
        lines.append(f"| {name} | {cost['cycles_per_packet']:.1f} | {cost['host_cycles_per_packet']:.1f} |")
    retimed = report["retimed"]
    lines += ["", f"Re-timed with them (`calibration.json`), the host model's iteration takes "
              f"{format_seconds(retimed['iteration_s_retimed'])} with matNDP (was "
              f"{format_seconds(retimed['iteration_s_host'])}; baseline {format_seconds(retimed['baseline_s'])}), "
              f"speedup {retimed['speedup_retimed']:.3f}× (was {retimed['speedup_host']:.3f}×).", ""]
    lines += _slice_lines(report)
    lines += combine_lines(report["combine"])
    return "\n".join(lines)


def _slice_lines(report, shown=20):
    """The section on the slices simulated, when there are several."""
    spread, clock = report["slice_spread"], report["clock_hz"]
    if len(spread["slices"]) < 2:
        return []
    busy, retimed = spread["busy_cycles"], spread["retimed_slowest"]
    differing = [op for op in spread["ops"] if op["rtl_cycles"]["max"] != op["rtl_cycles"]["min"]]
    lines = ["## Slices", "",
             f"{len(spread['slices'])} of the {spread['of']} slices the memory is interleaved over "
             f"(slices {', '.join(map(str, spread['slices']))}: spread evenly over the GPU), each with "
             f"its own share of every tensor as the interleave deals it (whole rows of an activation, "
             f"sectors of anything else, round-robin from slice 0), each a job of its own; "
             f"{spread['launches_bit_exact']} kernel launches bit-exact on all of them.", "",
             f"Busy cycles (tiering stalls cut out): min {busy['min']:,}, median {busy['median']:,.0f}, "
             f"max {busy['max']:,} ({_us(busy['max'], clock)}, slice {busy['slowest_slice']}); the "
             f"slowest slice per op, summed: {spread['slowest_per_op_cycles']:,} cycles against the "
             f"host model's {spread['host_cycles']:,}.", ""]
    if differing:
        lines += [f"Ops whose cycles differ between the slices ({len(differing)} of {len(spread['ops'])}):",
                  "", "| op | where | host | RTL min | median | max | slowest slice |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        for op in differing[:shown]:
            cycles = op["rtl_cycles"]
            lines.append(f"| {op['op']} | {op['where']} | {op['host_cycles']:,} | {cycles['min']:,} | "
                         f"{cycles['median']:,.0f} | {cycles['max']:,} | {cycles['slowest_slice']} |")
        if len(differing) > shown:
            lines.append(f"| … {len(differing) - shown} more (`report.json`, `slice_spread`) | | | | | | |")
        lines.append("")
    lines += [f"Re-timed with the slowest slice per op kernel (its cycles over the slices' mean "
              f"trigger sectors: the host model spreads an op evenly over the slices, and the "
              f"slowest one bounds it), the host model's iteration takes "
              f"{format_seconds(retimed['iteration_s_retimed'])} with matNDP, speedup "
              f"{retimed['speedup_retimed']:.3f}× (with the first slice's costs: "
              f"{format_seconds(report['retimed']['iteration_s_retimed'])}, "
              f"{report['retimed']['speedup_retimed']:.3f}×).", ""]
    return lines


def _note_lines(notes, shown=4):
    if not notes:
        return []
    lines = [f"Note: {note}." for note in notes[:shown]]
    if len(notes) > shown:
        lines.append(f"… and {len(notes) - shown} more such tensors (`report.json`, `notes`).")
    return [" ".join(lines), ""]


def _plain(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _us(cycles, clock_hz):
    return f"{cycles / clock_hz * 1e6:,.1f} µs"


def _gpu_path_lines(path):
    lines = ["The GPU port's requests, from the slice taking one to memory accepting it (the "
             "trigger's stage, the arbiter sharing the slot with the engine, memory's own "
             "back-pressure), the cycles the trigger held the port for a full event queue, and "
             "those it waited for a read id still in flight:", "",
             "| requests | count | cycles to memory: min / mean / 99th pct / max | held | id wait |",
             "|---|---:|---|---:|---:|"]
    for kind, title in (("gpu", "GPU stages (with tier copies)"), ("sweep", "NDP sweeps")):
        row = path[kind]
        delay = row["to_memory_cycles"]
        spread = (f"{delay['min']} / {delay['mean']:.2f} / {delay['p99']:.0f} / {delay['max']:,}"
                  if delay else "–")
        lines.append(f"| {title} | {row['requests']:,} | {spread} | "
                     f"{row['held_for_full_event_queue_cycles']:,} | {row['id_gated_cycles']:,} |")
    return lines + [""]


def _achieved(overlap):
    return "–" if overlap["achieved"] is None else f"{overlap['achieved']:.0%}"


def _iteration_overlap_lines(overlap):
    if not overlap["on"]:
        return ["Overlap off (`--no-overlap`): every step ran after the one before.", ""]
    return [f"Overlap on: {overlap['merged']} groups of steps the host model runs at the same time ran "
            f"as one stage each; the host model's schedule of the blocks' steps: "
            f"{overlap['host_serial_cycles']:,} cycles one after another, {overlap['host_overlapped_cycles']:,} "
            f"as overlapped. RTL busy cycles: {overlap['rtl_busy_cycles']:,} as run, "
            f"{overlap['rtl_serial_busy_cycles']:,} one after another (each block's merged steps run again "
            f"serially); the RTL saved {overlap['rtl_saved_cycles']:,} of the {overlap['host_saved_cycles']:,} "
            f"cycles the plan's overlap saves: {_achieved(overlap)} achieved.", ""]


def _overlap_lines(overlap):
    """The paragraph on the steps run concurrently as the host model plans them."""
    planned = (f"The host model's schedule of the block's steps: {overlap['host_serial_cycles']:,} cycles "
               f"one after another, {overlap['host_overlapped_cycles']:,} as overlapped.")
    if not overlap["on"]:
        return [f"Overlap off (`--no-overlap`): every step ran after the one before. {planned}", ""]
    if not overlap["merged"]:
        return [f"Overlap on: no steps the host model runs at the same time. {planned}", ""]
    pairs = "; ".join(f"`{group['gpu']}` with {', '.join(f'`{op}`' for op in group['ndp'])}"
                      for group in overlap["merged"])
    lines = [f"Overlap on: steps the host model runs at the same time ran as one stage: {pairs}. {planned}"]
    if "achieved" in overlap:
        lines[0] += (f" RTL busy cycles: {overlap['rtl_busy_cycles']:,} as run, "
                     f"{overlap['rtl_serial_busy_cycles']:,} one after another (the merged steps run "
                     f"again serially: {overlap['rtl_merged_steps_serial_cycles']:,} against "
                     f"{overlap['rtl_merged_steps_overlapped_cycles']:,}); the RTL saved "
                     f"{overlap['rtl_saved_cycles']:,} of the {overlap['host_saved_cycles']:,} cycles the "
                     f"plan's overlap saves: {_achieved(overlap)} achieved.")
    return [*lines, ""]


def _markdown(report, share):
    setup, measures, clock = report["setup"], report["measures"], report["clock_hz"]
    slots = measures["slots"]
    lines = [
        f"# Co-simulation: {setup['model']} `{setup['block']}`, batch {setup['batch']}, "
        f"{setup['gpu']}, tiering `{setup['policy']}`",
        "",
        f"One NDP slice's share (1/{report['slices']}) of every tensor of the block's forward, "
        f"backward and optimizer ops, placed by the host model's offload planner, ran through "
        f"the slice RTL (trigger, engine, arbiter) in the batch harness: "
        f"{measures['cycles']:,} cycles ({_us(measures['cycles'], clock)} at "
        f"{clock / 1e9:g} GHz), of which {measures['stall_cycles']:,} waiting for the flash tier. "
        f"Memory: {report['memory']['latency_cycles']} cycles latency, one sector per "
        f"{report['memory']['interval_cycles']} cycles (the GPU's bandwidth over its slices), "
        f"reordering among {report['memory']['reorder']}; back-pressure "
        f"{setup['pressure']:g} on every stream.",
        "",
        f"Checks passed: the GPU path and memory ({report['checks']['gpu_requests']:,} GPU "
        f"requests, {report['checks']['engine_requests']:,} engine requests), "
        f"{report['checks']['write_events']:,} write and {report['checks']['read_events']:,} read "
        f"events, {report['checks']['launches_bit_exact']} kernel launches bit-exact against the "
        f"numpy golden and the instruction-set simulator. Values: {report['values']}.",
        "",
        *_note_lines(report["notes"]),
        *_overlap_lines(measures["overlap"]),
        "![timeline](timeline.png)",
        "",
        "## Per op: RTL against the host model",
        "",
        "Cycles of the slice for its share. Host: the op's scheduled time in the host model's "
        "plan. RTL: from the op's first request to its last kernel's completion, and of that "
        "the cycles after its last request was taken (kernels finishing: a finalizer's "
        "per-channel pass, the last µthreads). The stall column is the tiering model's wait "
        "before the op (an idle phase in the run).",
        "",
        "| op | where | kernel | host | RTL | of it after the last request | RTL / host | stall | measured as |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    stalls = {step["op"]: step["stall_cycles"] for step in measures["steps"]}
    tails = {step["op"]: sum(stage["tail_cycles"] for stage in step["stages"]) for step in measures["steps"]}
    for op in measures["ops"]:
        rtl = op["rtl_cycles"]
        ratio = f"{rtl / op['host_cycles']:.2f}" if rtl and op["host_cycles"] else "–"
        tail = tails.get(op["op"])
        lines.append(f"| {op['op']} | {op['where']} | {op['kernel'] or ''} | {op['host_cycles']:,} | "
                     f"{rtl if rtl is None else format(rtl, ',')} | "
                     f"{'' if tail is None else format(tail, ',')} | {ratio} | "
                     f"{stalls.get(op['op'], 0):,} | {op['measured_as']} |")
    own = [step for step in measures["steps"]]
    gpu_steps = [step for step in own if step["where"] == "gpu"]
    ndp_steps = [step for step in own if step["where"] != "gpu"]
    lines += [
        "",
        f"GPU ops: host {sum(s['host_cycles'] for s in gpu_steps):,} cycles, RTL "
        f"{sum(s['rtl_cycles'] for s in gpu_steps):,}. NDP ops (own steps): host "
        f"{sum(s['host_cycles'] for s in ndp_steps):,}, RTL {sum(s['rtl_cycles'] for s in ndp_steps):,}.",
        "",
        "Where they differ: a GPU op's requests are spread over its scheduled time, so the RTL "
        "time exceeds it by what the slice adds — the kernels riding on its writes finishing "
        "after its last write (finalizers run once per entry, serially), the tier copies "
        "sharing its memory slots, and back-pressure. A standalone NDP op's RTL time is the "
        "engine's own pace on a sweep of its trigger tensor with the slice's bandwidth; the host "
        "model prices it from the calibration's cycles per sector spread over every slice.",
        "",
        *_gpu_path_lines(measures["gpu_path"]),
        "## Memory slots",
        "",
        "![memory slots](memory_slots.png)",
        "",
        f"Requests memory took: " + ", ".join(f"{name} {count:,}" for name, count in slots["requests"].items())
        + f", of {slots['slots']:,} slots outside the tiering stalls (one every "
        f"{report['memory']['interval_cycles']} cycles).",
        "",
        "## Tiers",
        "",
        "![HBM occupancy](hbm_occupancy.png)",
        "",
        f"The tiering model (`{setup['policy']}`, HBM = {setup['hbm_fraction']:g} × footprint) "
        f"stalls the whole iteration {format_seconds(report['tier']['stall_s'])} of "
        f"{format_seconds(report['tier']['iteration_s'])}; before this block's ops "
        f"{measures['stall_cycles']:,} cycles. Its page copies during the block's ops are "
        f"{slots['requests']['migration']:,} of this slice's memory requests. An op never "
        f"touches a page outside HBM in that model (it waits until the page is fetched), so the "
        f"flash tier shows in the RTL run as those stalls and copies, not as per-access latency.",
        "",
        "## Calibration",
        "",
        "Kernel cycles per trigger sector measured here (sweep stages), beside the host "
        "model's calibration:",
        "",
        "| op kernel | measured | host model | phases measured | phases kept |",
        "|---|---:|---:|---|---|",
    ]
    for name, cost in measures["kernels"].items():
        lines.append(f"| {name} | {cost['cycles_per_packet']:.1f} | {cost['host_cycles_per_packet']:.1f} | "
                     f"{', '.join(cost['measured_phases'])} | {', '.join(cost['kept_phases']) or '–'} |")
    retimed = report["retimed"]
    lines += [
        "",
        f"Re-timed with them (`calibration.json`), the host model's whole iteration takes "
        f"{format_seconds(retimed['iteration_s_retimed'])} with matNDP (was "
        f"{format_seconds(retimed['iteration_s_host'])} with the {retimed['calibration_host']} "
        f"calibration; baseline {format_seconds(retimed['baseline_s'])}), speedup "
        f"{retimed['speedup_retimed']:.3f}× (was {retimed['speedup_host']:.3f}×); this block's ops "
        f"{format_seconds(retimed['block_s_retimed'])} (was {format_seconds(retimed['block_s_host'])}).",
        "",
        *_tier_reconciliation(report),
        *_slice_lines(report),
        *combine_lines(report["combine"]),
    ]
    if report.get("files", {}).get("waveform"):
        lines += _waveform_lines(report)
    return "\n".join(lines)


def _tier_reconciliation(report):
    """How the iteration times above relate: the host model's with every tensor in HBM
    against the tiering run's with the flash tier's stalls."""
    tier, retimed = report["tier"], report["retimed"]
    tiered = tier["iteration_s"]
    with_matndp = tier["iteration_s_matndp"]
    return [
        f"These iteration times are the GPU's with every tensor in HBM, as the offload planner "
        f"times it: they leave the flash tier out. The tiering run (`{tier['policy']}`, HBM = "
        f"{report['setup']['hbm_fraction']:g} × footprint) times the baseline's ops, "
        f"{format_seconds(tier['compute_s'])}, and adds its stalls, "
        f"{format_seconds(tier['stall_s'])}: {format_seconds(tiered)}. With matNDP's "
        f"{format_seconds(retimed['iteration_s_retimed'])} in place of the baseline's ops and the "
        f"same stalls, the tiered iteration takes {format_seconds(with_matndp)}, "
        f"{tiered / with_matndp:.3f}× faster: at this HBM size the flash tier's stalls, which "
        f"matNDP does not shorten, set the iteration time.",
        "",
    ]


def _waveform_lines(report):
    files = report["files"]
    view = files.get("window_view") or {}
    clock = report["clock_hz"]
    steps = files.get("window_steps") or []
    lines = ["## Waveform", "",
             f"`{files['waveform']}`: steps {', '.join(f'`{step}`' for step in steps)} run again "
             f"on their own (the same requests, kernels and values, from reset and without the "
             f"tiering stalls), traced and checked like the whole run. Open it with "
             f"`gtkwave {files.get('gtkwave_save_path', files['gtkwave_save'])}` (from any "
             f"folder; docs/waveforms.md).",
             ""]
    if view:
        start, end = (time / 1e3 for time in view["view_ps"])
        marks = [("A", "the first trigger event", view.get("first_event")),
                 ("B", "the engine's first memory request", view.get("first_engine_request")),
                 ("C", "the first completion (irq rises)", view.get("first_completion"))]
        lines += [f"The save file opens on {start:,.0f}–{end:,.0f} ns of the window's run, with "
                  f"markers:", "", "| marker | at | cycle of the window's run |", "|---|---|---:|"]
        lines += [f"| {name} | {what} | {'–' if cycle is None else format(cycle, ',')} |"
                  for name, what, cycle in marks]
        lines += ["", "Groups: gpu, mem, trigger (irq), csr, clock and reset (the slice's ports, "
                      "payloads as their fields, raw vectors in closed sub-groups), then the "
                      "trigger's events into the engine and the engine's memory requests at the "
                      f"arbiter. The waveform's clock period is {CLOCK_NS} ns; the report's "
                      f"times are at the slice clock, {clock / 1e9:g} GHz.", ""]
    return lines
