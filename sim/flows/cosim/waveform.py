"""The co-simulation's waveform: a window of its steps run again on their own in a traced
build of the harness (the build the whole run used: it is built traceable, so both share
it), checked like the whole run, with a GTKWave save file that groups the slice's GPU port,
memory port, register bus, the trigger's events into the engine and the engine's memory
requests, shows every payload as its fields, and opens on the window's work.

A trace of the whole run would hold millions of cycles, most of them idle; the window's
steps get the same stimulus (requests, gaps, kernels, values) but start from reset and
without the tiering stalls before them.

The view runs from :data:`LEAD_CYCLES` before the first trigger event to
:data:`TRAIL_CYCLES` after the first completion (the first time ``irq`` rises), with named
markers A at the first trigger event, B at the engine's first memory request and C at the
first completion.
"""

import copy
import pathlib

from matndp.sim.designs import KERNEL_CONFIG, ndp_slice_verilog
from matndp.sim.flows.cosim.share_run import run_share
from matndp.sim.flows.slice_waves import DECIMAL_FIELDS, ENGINE_GROUPS, PORT_GROUPS, payload_fields
from matndp.sim.gtkwave import write_save_file


__all__ = ["write_window", "save_window", "window_view", "WINDOW_FILES", "SLICE_SCOPE", "LEAD_CYCLES",
           "TRAIL_CYCLES", "TRACE_SCOPES"]


WINDOW_FILES = {"waveform": "window.fst", "gtkwave_save": "window.gtkw"}
# The slice inside the harness, as the dump names it.
SLICE_SCOPE = "slice_harness.dut"
LEAD_CYCLES = 20
TRAIL_CYCLES = 60
# What the traced build records: the harness, the slice, the instances the save file shows
# and the payload fields (a field is a scope of its own in the build's eyes: ``port.field``).
TRACE_SCOPES = ("slice_harness", SLICE_SCOPE,
                *(f"{SLICE_SCOPE}.{instance}" for _, instance, _ in ENGINE_GROUPS),
                *(f"{SLICE_SCOPE}.{port}" for port in payload_fields(KERNEL_CONFIG)))


def window_share(share, window):
    """A copy of ``share`` holding steps ``window[0] .. window[1] - 1``, without stalls."""
    first, end = window
    if not 0 <= first < end <= len(share.steps):
        raise ValueError(f"the waveform window {first}..{end - 1} is not within the "
                         f"{len(share.steps)} steps")
    part = copy.copy(share)
    part.steps = [copy.copy(step) for step in share.steps[first:end]]
    for step in part.steps:
        step.stall_cycles = 0
    return part


def window_view(result, config=KERNEL_CONFIG):
    """The cycles of the window's first trigger event, the engine's first memory request
    and the first completion (None where the window has none), from the run's logs."""
    events = result.log("events")["cycle"]
    requests = result.log("mem_requests")
    # The memory side's id carries the source in its top bit: 1 for the engine.
    engine = requests["cycle"][(requests["id"] >> (config.mem_id_width - 1)) & 1 == 1]
    irq = result.log("irq")
    rises = irq["cycle"][irq["level"] == 1] if len(irq["cycle"]) else irq["cycle"]
    first = {"first_event": events, "first_engine_request": engine, "first_completion": rises}
    return {name: int(cycles[0]) if len(cycles) else None for name, cycles in first.items()}


def _window_and_markers(result, view):
    start_cycle = max(0, (view["first_event"] or 0) - LEAD_CYCLES)
    last = view["first_completion"] or max(cycle for cycle in view.values() if cycle is not None)
    window = (result.time_ps(start_cycle), result.time_ps(last + TRAIL_CYCLES))
    markers = [-1 if view[name] is None else result.time_ps(view[name])
               for name in ("first_event", "first_engine_request", "first_completion")]
    return window, markers


def write_window(share, window, output, *, simulator="verilator", final=None):
    """Run the window's steps traced into ``output`` (``window.fst``, ``window.gtkw``; the
    save file names them where they will be: in ``final``, default ``output``); returns
    the files by role, the window's steps and its view (cycles of the markers)."""
    output = pathlib.Path(output)
    final = pathlib.Path(final or output)
    part = window_share(share, window)
    run = run_share(part, simulator=simulator, directory=output / "window_run", waves=True,
                    traceable=True, trace_scopes=TRACE_SCOPES)
    run.check()
    wave = output / WINDOW_FILES["waveform"]
    (output / "window_run" / "waves.fst").replace(wave)
    view = window_view(run.result)
    span, markers = _window_and_markers(run.result, view)
    save_window(output / WINDOW_FILES["gtkwave_save"], final, span, markers)
    return {**WINDOW_FILES, "window_steps": [step.op for step in part.steps],
            "gtkwave_save_path": str(final / WINDOW_FILES["gtkwave_save"]),
            "window_view": {**view, "view_ps": list(span), "markers_ps": markers}}


def save_window(path, folder, span, markers):
    """The window's save file at ``path``, naming the dump and itself as they will be in
    ``folder``, opening on ``span`` with ``markers`` (ps)."""
    return write_save_file(path, dump_file=folder / WINDOW_FILES["waveform"],
                           saved_as=folder / WINDOW_FILES["gtkwave_save"],
                           verilog_text=ndp_slice_verilog(KERNEL_CONFIG).read_text(),
                           module="ndp_slice", scope=SLICE_SCOPE, groups=PORT_GROUPS,
                           inner_groups=ENGINE_GROUPS, payload_fields=payload_fields(KERNEL_CONFIG),
                           decimal_fields=DECIMAL_FIELDS, window=span, markers=markers)
