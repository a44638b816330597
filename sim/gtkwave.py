"""A GTKWave save file that groups a design's ports, shows stream payloads as their fields,
and opens on a chosen window of time (``gtkwave build/sim/ndp_slice.gtkw``, from any folder).

The save file format is GTKWave's: ``[dumpfile]`` and ``[savefile]`` name the dump and the
save file itself by absolute path (GTKWave opens the dump from any working folder, and
finds it beside a save file that was moved with it by the path between the two);
``[timestart]`` is the left edge of the view; the ``*`` line holds the zoom, the primary
marker and the 26 named markers (A–Z, -1 when unset); ``@flags`` lines set the display of
the traces that follow (hex, decimal or binary; group begin and end, closed or open).

The zoom is GTKWave 3.3's (``calczoom``): ``2 ** -zoom`` time units per 200 pixels of the
wave pane. The pane is what the window the file asks for leaves beside the signal tree
and the names: 1000 pixels at 1600 × 900, as GTKWave 3.3.118 lays it out, as long as the
names fit the 300 pixels given them (a long group title widens them: a payload's raw
vector sits in a sub-group titled only "raw payloads"). GTKWave moves the view's left edge
down to a multiple of the largest power of ten not above its time per pixel (measured: a
``[timestart]`` of 8 270 000 at 175 130 time units a pixel opens at 8 200 000), so the file
gives an edge already there and fits the rest of the window from it.
"""

import math
import pathlib
import re


__all__ = ["top_ports", "write_save_file", "zoom_for", "left_edge_grid", "view_for",
           "WINDOW_SIZE", "WAVE_PANE_PIXELS", "PIXELS_PER_ZOOM_FRAME"]


_PORT = re.compile(r"^\s*(input|output)\s+(?:wire\s+|reg\s+)?(?:\[(\d+):(\d+)\]\s+)?([\\\w$.]+)\s*;", re.M)

# Trace display flags.
_HEX, _DECIMAL, _BINARY = "@22", "@24", "@28"
_GROUP_BEGIN, _GROUP_END = "@800200", "@1000200"
_CLOSED_GROUP_BEGIN, _CLOSED_GROUP_END = "@c00200", "@1401200"
_NAMED_MARKERS = 26
_RAW_TITLE = "raw payloads"

# The window the save file asks for, the part of it the signal tree and the names take,
# and the wave pane GTKWave 3.3 leaves of it (measured: its scroll bars and borders take
# the rest).
WINDOW_SIZE = (1600, 900)
_SIGNAL_TREE_PIXELS = 220
_SIGNAL_NAMES_PIXELS = 300
WAVE_PANE_PIXELS = 1000
# GTKWave's zoom z shows 2 ** -z time units in this many pixels.
PIXELS_PER_ZOOM_FRAME = 200


def top_ports(verilog_text, module):
    """``{name: width}`` of ``module``'s ports, from exported Verilog."""
    start = verilog_text.find(f"module {module}(")
    if start < 0:
        # Amaranth writes a submodule's name escaped, a space before its port list.
        start = verilog_text.find(f"module \\{module} (")
    if start < 0:
        raise ValueError(f"module {module!r} not found in the Verilog")
    end = verilog_text.find("endmodule", start)
    ports = {}
    for _, msb, lsb, name in _PORT.findall(verilog_text[start:end]):
        ports[name] = int(msb) - int(lsb) + 1 if msb else 1
    return ports


def zoom_for(span):
    """GTKWave's zoom that fits ``span`` time units into the wave pane."""
    if not span > 0:
        raise ValueError(f"a time window must be longer than 0, got {span}")
    return -math.log2(span * PIXELS_PER_ZOOM_FRAME / WAVE_PANE_PIXELS)


def left_edge_grid(span):
    """The multiple GTKWave moves a view's left edge down to when the view shows ``span``
    time units: the largest power of ten not above a pixel's time (at least 1)."""
    return 10 ** max(0, math.floor(math.log10(span / WAVE_PANE_PIXELS)))


def view_for(start, end):
    """``(timestart, zoom)`` that make GTKWave show ``start .. end``: the left edge on its
    grid at or before ``start``, the zoom fitting the rest."""
    if not end > start:
        raise ValueError(f"a time window must be longer than 0, got {start}..{end}")
    left = start
    for _ in range(4):      # the grid shrinks or holds as the span grows: a step or two
        grid = left_edge_grid(end - left)
        snapped = start // grid * grid
        if snapped == left:
            break
        left = snapped
    return left, zoom_for(end - left)


def _trace(scope, name, width, decimal=False):
    if width == 1:
        return [_BINARY, f"{scope}.{name}"]
    return [_DECIMAL if decimal else _HEX, f"{scope}.{name}[{width - 1}:0]"]


def _group(title, scope, members, ports, fields, decimal_fields, escape):
    """The lines of one group: ``members`` (port names) at ``scope``, a port of ``fields``
    shown as its fields with its raw vector in a closed sub-group at the end."""
    lines = [_GROUP_BEGIN, f"-{title}"]
    raw = []
    for name in members:
        if name in fields:
            for field, width in fields[name]:
                lines += _trace(scope, f"{escape}{name}.{field}", width, field in decimal_fields)
            raw.append(name)
        else:
            lines += _trace(scope, name, ports[name])
    if raw:
        lines += [_CLOSED_GROUP_BEGIN, f"-{_RAW_TITLE}"]
        for name in raw:
            lines += _trace(scope, name, ports[name])
        lines += [_CLOSED_GROUP_END, f"-{_RAW_TITLE}"]
    return lines + [_GROUP_END, f"-{title}"]


def write_save_file(path, *, dump_file, verilog_text, module, scope, groups, payload_fields=None,
                    decimal_fields=(), escaped_fields=False, window=None, markers=(),
                    inner_groups=(), saved_as=None):
    """Write the save file and return ``path``.

    dump_file:      the dump, where it will be when the save file is opened.
    saved_as:       where the save file will be when it is opened (default ``path``; a
                    file written in a staging folder and moved later names its final place).
    groups:         ``[(title, [port-name prefixes])]`` of ``module``'s ports; ports are
                    listed in declaration order within a group.
    inner_groups:   ``[(title, instance, [port names])]``: ports of the instance
                    ``instance`` inside ``module`` (``module.instance`` in the Verilog,
                    ``scope.instance`` in the dump), in the order given.
    payload_fields: ``{port: [(field, width)]}``: such a port is shown as its fields
                    (names as the exported Verilog gives them, ``port.field``), its raw
                    vector kept in a closed sub-group at the end of its group. Ports of an
                    instance are named ``instance.port``.
    decimal_fields: field names shown in decimal (the others in hex, one-bit ones in binary).
    escaped_fields: the dump names a field as the Verilog escaped identifier it is
                    (``\\port.field``: Icarus keeps the backslash; Verilator drops it).
    window:         ``(start, end)`` in the dump's time units: the view the file opens on
                    (from GTKWave's grid point at or before ``start``, :func:`view_for`).
    markers:        up to 26 times, the named markers A, B, C, ... (-1: unset); the first
                    is also the primary marker.
    """
    payload_fields = dict(payload_fields or {})
    ports = top_ports(verilog_text, module)
    inner = {instance: top_ports(verilog_text, f"{module}.{instance}")
             for _, instance, _ in inner_groups}
    known = set(ports) | {f"{instance}.{name}" for instance, names in inner.items() for name in names}
    unknown = set(payload_fields) - known
    if unknown:
        raise ValueError(f"payload port(s) {', '.join(sorted(unknown))} are not ports of {module}")
    for _, instance, names in inner_groups:
        missing = [name for name in names if name not in inner[instance]]
        if missing:
            raise ValueError(f"module '{module}.{instance}' has no port {', '.join(missing)}")
    markers = list(markers)
    if len(markers) > _NAMED_MARKERS:
        raise ValueError(f"at most {_NAMED_MARKERS} named markers, not {len(markers)}")
    dump_file = pathlib.Path(dump_file).resolve()
    saved_as = pathlib.Path(saved_as or path).resolve()
    lines = [f'[dumpfile] "{dump_file}"', f'[savefile] "{saved_as}"',
             f"[size] {WINDOW_SIZE[0]} {WINDOW_SIZE[1]}",
             f"[sst_width] {_SIGNAL_TREE_PIXELS}", f"[signals_width] {_SIGNAL_NAMES_PIXELS}",
             "[sst_expanded] 1"]
    if window is not None:
        start, zoom = view_for(*window)
        lines.append(f"[timestart] {start}")
        named = [str(time) for time in markers] + ["-1"] * (_NAMED_MARKERS - len(markers))
        primary = markers[0] if markers else -1
        lines.append(f"*{zoom:.6f} {primary} {' '.join(named)}")
    else:
        lines.append("[timestart] 0")
    escape = "\\" if escaped_fields else ""
    for title, prefixes in groups:
        members = [name for name in ports if name.startswith(tuple(prefixes))]
        if members:
            lines += _group(title, scope, members, ports, payload_fields, decimal_fields, escape)
    for title, instance, names in inner_groups:
        fields = {name: payload_fields[f"{instance}.{name}"] for name in names
                  if f"{instance}.{name}" in payload_fields}
        lines += _group(title, f"{scope}.{instance}", names, inner[instance], fields,
                        decimal_fields, escape)
    path.write_text("\n".join(lines) + "\n")
    return path
