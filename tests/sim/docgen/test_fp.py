"""The op table of docs/fp.md (sim/docgen/fp.py): the document in the repository is the one
the op table generates, and the generated part is replaced, never anything around it."""

import pytest

from matndp.hw.fp.units import FP_OPERATIONS
from matndp.sim.docgen.fp import BEGIN, END, render_op_table, update_fp_doc
from tests.paths import DOCS


def test_docs_fp_md_is_generated_from_the_op_table():
    text = (DOCS / "fp.md").read_text()
    assert update_fp_doc(text) == text, \
        "docs/fp.md has drifted from hw/fp/units.py; run `make docs`"


def test_the_markers_name_the_command():
    assert "`make docs`" in BEGIN and "do not edit" in BEGIN
    assert "`make docs`" in END


def test_one_row_per_operation_with_its_code():
    rows = render_op_table().splitlines()[2:]
    assert len(rows) == len(FP_OPERATIONS)
    for row, (name, operation) in zip(rows, FP_OPERATIONS.items()):
        code = operation.code
        assert row.startswith(f"| `{name}` | `{operation.unit.__name__}` ")
        assert f"`{type(code).__name__}.{code.name}` = {code.value} |" in row


def test_only_the_generated_part_changes():
    text = f"before\n{BEGIN}\nstale table\n{END}\nafter\n"
    assert update_fp_doc(text) == f"before\n{BEGIN}\n{render_op_table()}{END}\nafter\n"


@pytest.mark.parametrize("text", [
    "no markers\n",
    f"{BEGIN}\nonly the first\n",
    f"{END}\n{BEGIN}\n",
    f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n",
], ids=["none", "no-end", "reversed", "twice"])
def test_bad_markers_are_named(text):
    with pytest.raises(ValueError, match="needs exactly one line"):
        update_fp_doc(text)
