"""The longest register-to-register paths of a ``synth_ecp5`` netlist, estimated before
place and route, and the units they cross.

Place and route of the engine slice takes most of an hour, and of the system-on-chip
around it longer (docs/fpga.md); this reads Yosys's JSON netlist in seconds. Each cell
adds its logic delay (:data:`CELL_DELAY_NS`) and each net between cells one routing hop
(:data:`ROUTING_HOP_NS`), except the dedicated wiring of carry chains and of the wide
multiplexers (``PFUMX``, ``L6MUX21``) fed by their slice's LUTs. With the hop at 1.35 ns the
worst path of the `fpga` engine slice (before it was pipelined) came to 55.1 ns, which is
nextpnr's own post-placement estimate of the same netlist (18.1 MHz); routed figures
differ, so these are for ranking paths and finding where they run, not for sign-off.

A path is named by the units it crosses: each cell's name as Yosys derives it from the
nets of the flattened design (``engine.order.…``, ``engine.core0.dispatch.…``), cut to its
unit (:func:`unit_of`).
"""

import collections
import json
import pathlib


__all__ = ["CELL_DELAY_NS", "ROUTING_HOP_NS", "CLOCK_TO_OUT_NS", "SETUP_NS", "unit_of",
           "estimate_paths"]


# Logic delay from an input to an output, ns (ECP5, speed grade 6, rounded).
CELL_DELAY_NS = {
    "LUT4": 0.45,
    "PFUMX": 0.3,
    "L6MUX21": 0.3,
    "TRELLIS_DPR16X4": 0.6,     # asynchronous read, from the read address
    "MULT18X18D": 4.5,          # with its registers bypassed
}
CARRY_NS = {"in": 0.55, "through": 0.06, "sum": 0.45}
CLOCK_TO_OUT_NS = {"TRELLIS_FF": 0.5, "DP16KD": 4.2, "MULT18X18D": 1.0}
SETUP_NS = 0.2
ROUTING_HOP_NS = 1.35
_DEDICATED_INPUTS = ("PFUMX", "L6MUX21")
_CLOCK_PORTS = {"CLK", "CLKA", "CLKB", "WCK"}


def unit_of(cell_name):
    """The unit a cell belongs to: its name's first two levels (``engine.order``), three
    inside a sub-core (``engine.core0.dispatch``), without Yosys's derived suffixes."""
    parts = cell_name.split(".")
    depth = 3 if len(parts) > 2 and parts[0] == "engine" and parts[1].startswith("core") else 2
    return ".".join(parts[:depth]).split("_")[0].split("$")[0]


def _arcs(cell):
    """(input port, output port, ns) of a combinational cell; None for a register, a
    block RAM, a registered multiplier or an unknown cell (where paths start and end)."""
    kind, directions = cell["type"], cell["port_directions"]
    inputs = [port for port, direction in directions.items() if direction == "input"]
    outputs = [port for port, direction in directions.items() if direction == "output"]
    if kind == "CCU2C":
        arcs = []
        for port in inputs:
            if port == "CIN":
                arcs += [("CIN", "COUT", CARRY_NS["through"]), ("CIN", "S0", CARRY_NS["sum"]),
                         ("CIN", "S1", CARRY_NS["sum"])]
            else:
                arcs += [(port, "COUT", CARRY_NS["in"]), (port, "S0", CARRY_NS["sum"]),
                         (port, "S1", CARRY_NS["in"])]
        return arcs
    if kind == "MULT18X18D":
        registered = any(name.startswith("REG_") and name.endswith("_CLK") and
                         str(value).strip() != "NONE"
                         for name, value in cell["parameters"].items())
        if registered:
            return None
        return [(i, o, CELL_DELAY_NS[kind]) for i in inputs if i[:1] in "AB" and i[1:].isdigit()
                for o in outputs if o.startswith("P")]
    if kind == "TRELLIS_DPR16X4":
        return [(i, o, CELL_DELAY_NS[kind]) for i in inputs if i.startswith("RAD")
                for o in outputs]
    if kind in CELL_DELAY_NS:
        return [(i, o, CELL_DELAY_NS[kind]) for i in inputs for o in outputs]
    return None


def estimate_paths(netlist, module, *, count=10):
    """The estimated worst register-to-register paths of ``module`` in ``netlist`` (a Yosys
    JSON netlist: a path or the parsed document): ``count`` of them, worst first, one per
    end unit and chain of units, each a dict of ``ns``, ``mhz``, ``to`` (the end unit),
    ``units`` (the units crossed, from the start), ``endpoints`` (how many endpoints share
    that end unit and chain) — and, over all endpoints, ``histogram``: endpoints per 5 ns
    of estimated delay."""
    if not isinstance(netlist, dict):
        netlist = json.loads(pathlib.Path(netlist).read_text())
    try:
        cells = netlist["modules"][module]["cells"]
    except KeyError:
        raise ValueError(f"the netlist has no module {module!r}") from None

    driver, arcs_of, starts = {}, {}, {}
    for name, cell in cells.items():
        arcs = _arcs(cell)
        if arcs is not None:
            arcs_of[name] = arcs
        for port, direction in cell["port_directions"].items():
            if direction != "output":
                continue
            for bit in cell["connections"].get(port, []):
                if isinstance(bit, int):
                    driver[bit] = (name, port)
                    if arcs is None:
                        starts[bit] = CLOCK_TO_OUT_NS.get(cell["type"], CLOCK_TO_OUT_NS["TRELLIS_FF"])

    arrival, previous = {}, {}

    def arrive(bit):
        # Iterative depth-first: the engine's paths are thousands of cells deep.
        stack = [bit]
        while stack:
            top = stack[-1]
            if top in arrival:
                stack.pop()
                continue
            if top in starts or top not in driver:
                arrival[top] = starts.get(top, 0.0)
                stack.pop()
                continue
            name, port = driver[top]
            cell = cells[name]
            pending = [b for i, o, _ in arcs_of[name] if o == port
                       for b in cell["connections"].get(i, [])
                       if isinstance(b, int) and b not in arrival]
            if pending:
                stack.extend(pending)
                continue
            best, best_from = 0.0, None
            for i, o, delay in arcs_of[name]:
                if o != port:
                    continue
                hop = 0.0 if i == "CIN" or cell["type"] in _DEDICATED_INPUTS else ROUTING_HOP_NS
                for b in cell["connections"].get(i, []):
                    if isinstance(b, int) and arrival[b] + hop + delay > best:
                        best, best_from = arrival[b] + hop + delay, b
            arrival[top], previous[top] = best, best_from
            stack.pop()
        return arrival[bit]

    endpoints = []
    for name, cell in cells.items():
        if name in arcs_of:
            continue
        for port, direction in cell["port_directions"].items():
            if direction == "input" and port not in _CLOCK_PORTS:
                for bit in cell["connections"].get(port, []):
                    if isinstance(bit, int) and bit in driver:
                        endpoints.append((arrive(bit) + ROUTING_HOP_NS + SETUP_NS, name, bit))
    endpoints.sort(key=lambda endpoint: -endpoint[0])

    histogram = collections.Counter(int(ns // 5) * 5 for ns, _, _ in endpoints)
    chains, order = collections.Counter(), {}
    for ns, name, bit in endpoints:
        units = []
        while bit is not None and bit in driver:
            unit = unit_of(driver[bit][0])
            if not units or units[-1] != unit:
                units.append(unit)
            bit = previous.get(bit)
        key = (unit_of(name), tuple(reversed(units)))
        chains[key] += 1
        order.setdefault(key, ns)
    worst = sorted(order, key=lambda key: -order[key])[:count]
    return {
        "paths": [{"ns": round(order[key], 1), "mhz": round(1000 / order[key], 1),
                   "to": key[0], "units": list(key[1]), "endpoints": chains[key]}
                  for key in worst],
        "histogram": {f"{low}-{low + 5} ns": histogram[low] for low in sorted(histogram)},
    }
