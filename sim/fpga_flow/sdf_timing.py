"""Static timing over the SDF file nextpnr writes after routing: every endpoint's slack,
not only the one worst path nextpnr's report gives per clock.

A design that misses its target usually misses it on many paths in several blocks, and
nextpnr names one of them per run; each run of the slice takes minutes. The SDF file holds
every delay the router's timing analysis used (each cell's input-to-output arcs, each
routed connection, each flip-flop's setup), so the whole picture can be read from one run:
how many endpoints fail and by how much, and the worst path into each.

The analysis is nextpnr's for one clock: every clocked cell's clock-to-output arc starts a
path at time 0 (the clock's global network has no skew in nextpnr's model), the maximum
delays of every arc and connection add along it, and a path ends at an input with a setup
check, which must be reached ``setup`` before the period ends. Only the maximum corner
(the third value of each ``min:typ:max`` triple) is used, as nextpnr's Fmax is.
"""

import dataclasses
import pathlib
import re
from collections import defaultdict


__all__ = ["SDFError", "Endpoint", "TimingGraph", "read_sdf", "register_name", "failing_registers"]


class SDFError(ValueError):
    pass


_TOKEN = re.compile(r'\(|\)|"[^"]*"|(?:\\.|[^\s()"])+')


def _tokens(text):
    for match in _TOKEN.finditer(text):
        yield match.group()


def _parse(text):
    """The SDF text as nested lists of tokens."""
    stack = [[]]
    for token in _tokens(text):
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                raise SDFError("unbalanced ')' in the SDF file")
            closed = stack.pop()
            stack[-1].append(closed)
        else:
            stack[-1].append(token)
    if len(stack) != 1:
        raise SDFError("the SDF file ends inside an open '('")
    return stack[0]


def _maximum(triple):
    """The maximum of a ``(min:typ:max)`` value, in ps."""
    if not triple:
        return 0.0
    values = [value for value in triple[0].split(":") if value]
    if not values:
        return 0.0
    return max(float(value) for value in values)


def _unescape(name):
    return re.sub(r"\\(.)", r"\1", name)


def _split_pin(path):
    """``instance/pin`` (the divider is ``/``, escaped in names as ``\\/``)."""
    for index in range(len(path) - 1, -1, -1):
        if path[index] == "/" and (index == 0 or path[index - 1] != "\\"):
            return _unescape(path[:index]), path[index + 1:]
    raise SDFError(f"connection end {path!r} names no pin")


def _edge_pin(spec):
    """The pin of a timing check's port: ``(posedge CLK)`` or ``CLK``."""
    if isinstance(spec, list):
        return spec[-1]
    return spec


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """The worst path into one checked input: ``cell`` and ``pin``, its ``slack_ns`` at the
    period analysed, and ``path``, the cells it passes from the clocked cell that starts it
    (``(cell, delay_ns)`` per step: each cell with the arrival time at its output)."""
    cell: str
    pin: str
    slack_ns: float
    arrival_ns: float
    path: tuple

    @property
    def start(self):
        return self.path[0][0]


class TimingGraph:
    """The timing arcs of one routed design, read from SDF text."""

    def __init__(self, text):
        root = _parse(text)
        if not root or not isinstance(root[0], list) or not root[0] or root[0][0] != "DELAYFILE":
            raise SDFError("not an SDF file: it does not start with (DELAYFILE")
        scale_ps = 1.0
        # node -> [(successor, delay_ps)]
        self._edges = defaultdict(list)
        self._sources = {}                 # node -> clock-to-output delay (ps)
        self._checks = {}                  # node -> setup (ps)
        for item in root[0][1:]:
            if not isinstance(item, list) or not item:
                continue
            if item[0] == "TIMESCALE":
                scale_ps = _timescale_ps(item[1:])
            elif item[0] == "CELL":
                self._read_cell(item, scale_ps)
        if not self._checks:
            raise SDFError("the SDF file has no setup checks: no endpoints to time")

    def _read_cell(self, cell, scale_ps):
        instance = ""
        for part in cell[1:]:
            if part[0] == "INSTANCE":
                instance = _unescape(part[1]) if len(part) > 1 else ""
        clocks = set()
        setups = {}
        for part in cell[1:]:
            if part[0] != "TIMINGCHECK":
                continue
            for check in part[1:]:
                if check[0] in ("SETUP", "SETUPHOLD"):
                    data, clock = _edge_pin(check[1]), _edge_pin(check[2])
                    clocks.add(clock)
                    setup = _maximum(check[3]) * scale_ps
                    setups[data] = max(setups.get(data, 0.0), setup)
        for pin, setup in setups.items():
            self._checks[(instance, pin)] = setup
        for part in cell[1:]:
            if part[0] != "DELAY":
                continue
            for block in part[1:]:
                if block[0] not in ("ABSOLUTE", "INCREMENT"):
                    continue
                for arc in block[1:]:
                    if arc[0] == "IOPATH":
                        source, sink = _edge_pin(arc[1]), arc[2]
                        delay = max(_maximum(arc[3]), _maximum(arc[4]) if len(arc) > 4 else 0)
                        delay *= scale_ps
                        if source in clocks:
                            node = (instance, sink)
                            self._sources[node] = max(self._sources.get(node, 0.0), delay)
                        else:
                            self._edges[(instance, source)].append(((instance, sink), delay))
                    elif arc[0] == "INTERCONNECT":
                        delay = max(_maximum(arc[3]), _maximum(arc[4]) if len(arc) > 4 else 0)
                        self._edges[_split_pin(arc[1])].append((_split_pin(arc[2]), delay * scale_ps))

    def analyse(self, period_ns):
        """Every endpoint's worst path at a clock of ``period_ns``, worst first."""
        arrival = dict(self._sources)
        previous = {}
        # Longest paths over a DAG: visit nodes in topological order.
        indegree = defaultdict(int)
        for node, successors in self._edges.items():
            for successor, _ in successors:
                indegree[successor] += 1
        ready = [node for node in self._edges if indegree[node] == 0]
        visited = 0
        while ready:
            node = ready.pop()
            visited += 1
            here = arrival.get(node)
            for successor, delay in self._edges.get(node, ()):
                if here is not None and (successor not in arrival or here + delay > arrival[successor]):
                    arrival[successor] = here + delay
                    previous[successor] = node
                indegree[successor] -= 1
                if indegree[successor] == 0:
                    ready.append(successor)
        period_ps = period_ns * 1000.0
        endpoints = []
        for node, setup in self._checks.items():
            if node not in arrival:
                continue
            total = arrival[node] + setup
            endpoints.append(Endpoint(cell=node[0], pin=node[1],
                                      slack_ns=round((period_ps - total) / 1000.0, 3),
                                      arrival_ns=round(total / 1000.0, 3),
                                      path=self._path(node, arrival, previous)))
        endpoints.sort(key=lambda endpoint: endpoint.slack_ns)
        return endpoints

    @staticmethod
    def _path(node, arrival, previous):
        cells = []
        while True:
            cell = node[0]
            if not cells or cells[-1][0] != cell:
                cells.append((cell, round(arrival[node] / 1000.0, 3)))
            if node not in previous:
                break
            node = previous[node]
        return tuple(reversed(cells))


def _timescale_ps(parts):
    text = "".join(part for part in parts if isinstance(part, str))
    match = re.fullmatch(r"([0-9.]+)\s*(fs|ps|ns|us)", text)
    if not match:
        raise SDFError(f"unreadable TIMESCALE {text!r}")
    return float(match.group(1)) * {"fs": 1e-3, "ps": 1.0, "ns": 1e3, "us": 1e6}[match.group(2)]


def read_sdf(path):
    """The :class:`TimingGraph` of the SDF file at ``path``."""
    return TimingGraph(pathlib.Path(path).read_text())


_PACKED_SUFFIX = re.compile(r"_TRELLIS_(?:FF|IO)_Q(?:_[0-9]+)?$")


def register_name(cell):
    """The register (or memory) a placed cell belongs to: Yosys names each bit's flip-flop
    after the register's wire with a ``_TRELLIS_FF_Q_<n>`` suffix."""
    return _PACKED_SUFFIX.sub("", cell)


def failing_registers(endpoints, limit=None):
    """The endpoints that miss the period, gathered by the register they end in, worst
    first: per register its ``register``, ``worst_slack_ns``, ``failing_bits`` and the
    worst path's ``start`` register and ``cells`` (the cells it passes, with the arrival
    time at each). ``limit``: how many registers at most."""
    groups = {}
    for endpoint in endpoints:
        if endpoint.slack_ns >= 0:
            break
        name = register_name(endpoint.cell)
        group = groups.get(name)
        if group is None:
            groups[name] = {"register": name, "worst_slack_ns": endpoint.slack_ns,
                            "failing_bits": 1, "start": register_name(endpoint.start),
                            "cells": [[cell, arrival] for cell, arrival in endpoint.path]}
        else:
            group["failing_bits"] += 1
    ordered = list(groups.values())
    return ordered if limit is None else ordered[:limit]
