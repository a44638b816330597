"""A design's Verilog file: exported once, reused by any later process while the code that
builds it is unchanged, exported again when that code or the parameters change."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
import pytest

from matndp.sim.designs import files


class Passing(wiring.Component):
    def __init__(self, width):
        super().__init__({"a": In(width), "y": Out(width)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.y.eq(self.a)
        return m


@pytest.fixture
def exports(tmp_path, monkeypatch):
    """The builds of a fresh process each call (the per-process caches cleared), in a
    build folder of the test's own; the list of the designs actually exported."""
    monkeypatch.setenv("MATNDP_BUILD", str(tmp_path))
    made = []
    export = files.export_verilog

    def counting(component, name):
        made.append(name)
        return export(component, name)
    monkeypatch.setattr(files, "export_verilog", counting)

    def design(width, transform=None):
        files._export.cache_clear()
        files._exported.cache_clear()
        return files.design_file(Passing, "passing", width, transform=transform)
    yield design, made
    files._export.cache_clear()
    files._exported.cache_clear()


def test_a_later_process_reuses_the_file(exports):
    design, made = exports
    path = design(4)
    text = path.read_text()
    assert made == ["passing"] and "module passing" in text
    assert design(4) == path and path.read_text() == text
    assert made == ["passing"]


def test_other_parameters_or_a_transform_are_another_file(exports):
    design, made = exports
    first = design(4)
    assert design(5) != first
    transformed = design(4, transform=files.evaluate_at_time_zero)
    assert transformed not in (first, design(5))
    assert transformed.read_text() == files.evaluate_at_time_zero(first.read_text())
    # The transformed file is made from the design's own file, in a process of its own.
    assert made == ["passing"] * 2


def test_a_transformed_file_first_leaves_the_design_s_own_file_for_later_processes(exports):
    design, made = exports
    transformed = design(6, transform=files.evaluate_at_time_zero)
    plain = design(6)
    assert made == ["passing"]
    assert transformed.read_text() == files.evaluate_at_time_zero(plain.read_text())


def test_a_change_of_the_code_exports_again(exports, monkeypatch):
    design, made = exports
    path = design(4)
    monkeypatch.setattr(files, "_code_digest", lambda builder_file: "other code")
    assert design(4) == path
    assert made == ["passing", "passing"]


def test_a_file_without_its_key_or_removed_is_exported_again(exports):
    design, made = exports
    path = design(4)
    path.with_name(path.name + ".key").unlink()
    design(4)
    path.unlink()
    assert design(4).exists()
    assert made == ["passing"] * 3


def test_the_digest_covers_the_builder_s_own_file(tmp_path):
    builder = tmp_path / "builder.py"
    builder.write_text("width = 4\n")
    before = files._code_digest(str(builder))
    builder.write_text("width = 5\n")
    files.source_digest.cache_clear()
    assert files._code_digest(str(builder)) != before
