"""A GTKWave save file that groups a design's top-level ports, so that a waveform opens
with the interesting signals laid out (``gtkwave build/sim/ndp_slice.gtkw``)."""

import re


__all__ = ["top_ports", "write_save_file", "append_group"]


_PORT = re.compile(r"^\s*(input|output)\s+(?:wire\s+|reg\s+)?(?:\[(\d+):(\d+)\]\s+)?([\\\w$.]+)\s*;", re.M)


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


def write_save_file(path, *, dump_file, verilog_text, module, scope, groups):
    """``groups``: ``[(title, [port-name prefixes])]``; ports are listed in declaration
    order within a group, one-bit signals as binary and vectors in hex."""
    ports = top_ports(verilog_text, module)
    lines = [f'[dumpfile] "{dump_file}"', "[timestart] 0", "[sst_expanded] 1", "[signals_width] 300"]
    for title, prefixes in groups:
        members = [name for name in ports if name.startswith(tuple(prefixes))]
        if not members:
            continue
        lines += ["@800200", f"-{title}"]
        for name in members:
            width = ports[name]
            if width == 1:
                lines += ["@28", f"{scope}.{name}"]
            else:
                lines += ["@22", f"{scope}.{name}[{width - 1}:0]"]
        lines += ["@1000200", f"-{title}"]
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
