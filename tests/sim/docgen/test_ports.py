"""The port tables of docs/verilog.md (sim/docgen/ports.py): every port of the exported
``ndp_slice`` with its width, and every payload field with the bits the exported Verilog
gives it; a port or field without a description stops the rendering with its name."""

import re

import pytest

from matndp.hw.config import NDPConfig
from matndp.sim.designs import ndp_slice_verilog
from matndp.sim.docgen import ports
from matndp.sim.docgen.ports import BEGIN, END, render_port_tables, update_verilog_doc
from matndp.sim.gtkwave import top_ports
from tests.paths import DOCS


# The default slice is the one the engine tests export: one export for both.
pytestmark = pytest.mark.xdist_group("engine_slice")

_ROW = re.compile(r"^\| (`[^|]+`) \| ([^|]+) \| ([^|]+) \| (.*) \|$")
_FIELD = re.compile(r"`(\w+)` \[(\d+)(?::(\d+))?\]")


def _table(text):
    """The default configuration's table: ``{port: width}`` and ``{port: {field: (msb, lsb)}}``."""
    first = text.split("\n\n", 2)[1]
    widths, fields = {}, {}
    for line in first.splitlines()[2:]:
        names, _, width, what = _ROW.match(line).groups()
        for name, bits in zip(re.findall(r"`(\w+)`", names), width.split(", ")):
            widths[name] = int(bits)
        if names.endswith("__payload`"):
            fields[names.strip("`")] = {name: (int(msb), int(lsb) if lsb else int(msb))
                                        for name, msb, lsb in _FIELD.findall(what)}
    return widths, fields


def _exported_fields(verilog, port):
    """``{field: (msb, lsb)}`` of ``port`` as the exported top module assigns its named wires."""
    top = verilog[verilog.index("module ndp_slice("):]
    top = top[:top.index("endmodule")]
    found = {}
    for field, msb, lsb in re.findall(rf"assign \\{port}\.(\w+)\s+= {port}\[(\d+)(?::(\d+))?\];", top):
        found[field] = (int(msb), int(lsb) if lsb else int(msb))
    return found


def test_the_table_is_the_exported_verilogs_ports_and_fields():
    verilog = ndp_slice_verilog(NDPConfig()).read_text()
    widths, fields = _table(render_port_tables())
    assert widths == top_ports(verilog, "ndp_slice")
    assert widths["gpu__resp__payload"] == 266 and widths["mem__resp__payload"] == 267
    assert set(fields) == {name for name in widths if name.endswith("__payload")}
    for port, table_fields in fields.items():
        assert table_fields == _exported_fields(verilog, port), port


def test_docs_verilog_md_is_generated_from_the_design():
    text = (DOCS / "verilog.md").read_text()
    assert update_verilog_doc(text) == text, "docs/verilog.md has drifted from the design; run `make docs`"
    assert "`mem_write_error` | in | 1 |" in text


def test_only_the_generated_part_changes():
    text = f"before\n{BEGIN}\nstale table\n{END}\nafter\n"
    assert update_verilog_doc(text) == f"before\n{BEGIN}\n{render_port_tables()}{END}\nafter\n"


@pytest.mark.parametrize("table, name, message", [
    ("PURPOSES", "mem_write_error", "port mem_write_error of ndp_slice has no description"),
    ("FIELDS", "status", "payload field status has no description"),
])
def test_a_port_or_field_without_a_description_is_named(monkeypatch, table, name, message):
    descriptions = dict(getattr(ports, table))
    del descriptions[name]
    monkeypatch.setattr(ports, table, descriptions)
    with pytest.raises(ValueError, match=message):
        render_port_tables()
