import pathlib

from tests.paths import DOCS
from matndp.hw.config import NDPConfig
from matndp.host.csr_doc import render_csr_markdown


def test_docs_csr_md_is_generated_from_the_register_map():
    checked_in = (DOCS / "csr.md").read_text()
    assert checked_in == render_csr_markdown(NDPConfig()), \
        "docs/csr.md is stale: run `make docs` (matndp csr doc --output docs/csr.md)"


def test_every_register_is_documented():
    text = render_csr_markdown(NDPConfig())
    for name in ("ID", "VERSION", "CONFIG", "STATUS", "STALL_CYCLES", "EVENT_COUNT", "HIT_DONE",
                 "IRQ_ENABLE", "CTRL", "BASE_LO", "BASE_HI", "SIZE_LO", "SIZE_HI", "KERNEL_PC",
                 "ARG_INDEX", "EXPECTED", "HITS"):
        assert f"**{name}**" in text
