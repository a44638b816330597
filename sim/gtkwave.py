"""A GTKWave save file that groups a design's top-level ports, shows stream payloads as
their fields, and opens on a chosen window of time (``gtkwave build/sim/ndp_slice.gtkw``).

The save file format is GTKWave's: ``[timestart]`` is the left edge of the view, the
``*`` line holds the zoom, the primary marker and the 26 named markers (A–Z, -1 when
unset), and ``@flags`` lines set the display of the traces that follow (hex, decimal or
binary; group begin and end, closed or open). GTKWave shows ``2 ** -zoom`` time units per
pixel of the wave pane.
"""

import math
import re


__all__ = ["top_ports", "write_save_file", "append_group", "zoom_for", "WINDOW_SIZE", "WAVE_PANE_PIXELS"]


_PORT = re.compile(r"^\s*(input|output)\s+(?:wire\s+|reg\s+)?(?:\[(\d+):(\d+)\]\s+)?([\\\w$.]+)\s*;", re.M)

# Trace display flags.
_HEX, _DECIMAL, _BINARY = "@22", "@24", "@28"
_GROUP_BEGIN, _GROUP_END = "@800200", "@1000200"
_CLOSED_GROUP_BEGIN, _CLOSED_GROUP_END = "@c00200", "@1401200"
_NAMED_MARKERS = 26

# The window the save file asks for, and the part of it the waves get (the rest holds the
# signal tree and the names).
WINDOW_SIZE = (1600, 900)
_SIGNAL_TREE_PIXELS = 220
_SIGNAL_NAMES_PIXELS = 300
WAVE_PANE_PIXELS = WINDOW_SIZE[0] - _SIGNAL_TREE_PIXELS - _SIGNAL_NAMES_PIXELS


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
    return -math.log2(span / WAVE_PANE_PIXELS)


def _trace(scope, name, width, decimal=False):
    if width == 1:
        return [_BINARY, f"{scope}.{name}"]
    return [_DECIMAL if decimal else _HEX, f"{scope}.{name}[{width - 1}:0]"]


def write_save_file(path, *, dump_file, verilog_text, module, scope, groups, payload_fields=None,
                    decimal_fields=(), escaped_fields=False, window=None, markers=()):
    """Write the save file and return ``path``.

    groups:         ``[(title, [port-name prefixes])]``; ports are listed in declaration
                    order within a group.
    payload_fields: ``{port: [(field, width)]}``: such a port is shown as its fields
                    (names as the exported Verilog gives them, ``port.field``), its raw
                    vector kept in a closed sub-group at the end of its group.
    decimal_fields: field names shown in decimal (the others in hex, one-bit ones in binary).
    escaped_fields: the dump names a field as the Verilog escaped identifier it is
                    (``\\port.field``: Icarus keeps the backslash; Verilator drops it).
    window:         ``(start, end)`` in the dump's time units: the view the file opens on.
    markers:        up to 26 times, the named markers A, B, C, ...; the first is also the
                    primary marker.
    """
    payload_fields = payload_fields or {}
    ports = top_ports(verilog_text, module)
    unknown = set(payload_fields) - set(ports)
    if unknown:
        raise ValueError(f"payload port(s) {', '.join(sorted(unknown))} are not ports of {module}")
    markers = list(markers)
    if len(markers) > _NAMED_MARKERS:
        raise ValueError(f"at most {_NAMED_MARKERS} named markers, not {len(markers)}")
    lines = [f'[dumpfile] "{dump_file}"', f"[size] {WINDOW_SIZE[0]} {WINDOW_SIZE[1]}",
             f"[sst_width] {_SIGNAL_TREE_PIXELS}", f"[signals_width] {_SIGNAL_NAMES_PIXELS}",
             "[sst_expanded] 1"]
    if window is not None:
        start, end = window
        lines.append(f"[timestart] {start}")
        named = [str(time) for time in markers] + ["-1"] * (_NAMED_MARKERS - len(markers))
        primary = markers[0] if markers else -1
        lines.append(f"*{zoom_for(end - start):.6f} {primary} {' '.join(named)}")
    else:
        lines.append("[timestart] 0")
    for title, prefixes in groups:
        members = [name for name in ports if name.startswith(tuple(prefixes))]
        if not members:
            continue
        lines += [_GROUP_BEGIN, f"-{title}"]
        raw = []
        for name in members:
            if name in payload_fields:
                escape = "\\" if escaped_fields else ""
                for field, width in payload_fields[name]:
                    lines += _trace(scope, f"{escape}{name}.{field}", width, field in decimal_fields)
                raw.append(name)
            else:
                lines += _trace(scope, name, ports[name])
        if raw:
            lines += [_CLOSED_GROUP_BEGIN, f"-{title} raw payloads"]
            for name in raw:
                lines += _trace(scope, name, ports[name])
            lines += [_CLOSED_GROUP_END, f"-{title} raw payloads"]
        lines += [_GROUP_END, f"-{title}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def append_group(path, title, scope, names, *, verilog_text, module):
    """Add a group of ``module``'s ports ``names`` (in that order), as seen at ``scope``
    (an instance inside the top, e.g. ``ndp_slice.engine``), to the save file ``path``."""
    ports = top_ports(verilog_text, module)
    missing = [name for name in names if name not in ports]
    if missing:
        raise ValueError(f"module {module!r} has no port {', '.join(missing)}")
    lines = ["@800200", f"-{title}"]
    for name in names:
        width = ports[name]
        lines += ["@28", f"{scope}.{name}"] if width == 1 else ["@22", f"{scope}.{name}[{width - 1}:0]"]
    lines += ["@1000200", f"-{title}"]
    with open(path, "a") as file:
        file.write("\n".join(lines) + "\n")
