"""The co-simulation's waveform: a window of its steps run again on their own in a traced
build of the harness, checked like the whole run, with a GTKWave save file that groups the
slice's GPU port, memory port, trigger events, engine and register bus.

A trace of the whole run would hold millions of cycles, most of them idle; the window's
steps get the same stimulus (requests, gaps, kernels, values) but start from reset and
without the tiering stalls before them.
"""

import copy
import pathlib

from matndp.sim.designs import ndp_slice_verilog
from matndp.sim.gtkwave import append_group, write_save_file
from matndp.sim.designs import KERNEL_CONFIG
from matndp.sim.flows.cosim.share_run import run_share


__all__ = ["write_window", "WINDOW_FILES", "SLICE_SCOPE"]


WINDOW_FILES = {"waveform": "window.fst", "gtkwave_save": "window.gtkw"}
# The slice inside the harness, as the dump names it.
SLICE_SCOPE = "slice_harness.dut"
PORT_GROUPS = [("gpu", ["gpu__"]), ("mem", ["mem__"]), ("csr", ["csr__"]), ("irq", ["irq"])]
INNER_GROUPS = (
    ("trigger: events into the engine", "engine", ("events__valid", "events__ready", "events__payload")),
    ("engine: its memory requests", "arbiter", ("ndp__req__valid", "ndp__req__ready", "ndp__resp__valid")),
)


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


def write_window(share, window, output, *, simulator="verilator"):
    """Run the window's steps traced into ``output`` (``window.fst``, ``window.gtkw``);
    returns the files by role."""
    output = pathlib.Path(output)
    part = window_share(share, window)
    run = run_share(part, simulator=simulator, directory=output / "window_run", waves=True)
    run.check()
    wave = output / WINDOW_FILES["waveform"]
    (output / "window_run" / "waves.fst").replace(wave)
    text = ndp_slice_verilog(KERNEL_CONFIG).read_text()
    save = output / WINDOW_FILES["gtkwave_save"]
    write_save_file(save, dump_file=wave.name, verilog_text=text, module="ndp_slice",
                    scope=SLICE_SCOPE, groups=PORT_GROUPS)
    for title, scope, names in INNER_GROUPS:
        append_group(save, title, f"{SLICE_SCOPE}.{scope}", names, verilog_text=text,
                     module=f"ndp_slice.{scope}")
    return {**WINDOW_FILES, "window_steps": [step.op for step in part.steps]}
