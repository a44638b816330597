from matndp.hw.engine.isa import INSTRUCTIONS, ErrorCause, ScalarSpecial, VectorSpecial
from matndp.sim.docgen.isa import render_isa_markdown
from tests.paths import DOCS


def test_docs_isa_md_is_generated_from_the_isa():
    assert (DOCS / "isa.md").read_text() == render_isa_markdown(), \
        "docs/isa.md is stale: run `make docs`"


def test_every_instruction_special_and_error_is_documented():
    text = render_isa_markdown()
    assert "{{" not in text and "do not edit by hand" in text and "make docs" in text
    for spec in INSTRUCTIONS:
        assert f"| `{spec.opcode.value:#04x}` | `{spec.mnemonic}" in text
    for special in list(ScalarSpecial) + list(VectorSpecial):
        assert f"`{special.name}`" in text
    for cause in ErrorCause:
        assert f"`{cause.name}`" in text
