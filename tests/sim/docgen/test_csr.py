
from tests.paths import DOCS
import pytest

from matndp.hw.bus.map import Window
from matndp.hw.config import NDPConfig
from matndp.sim.docgen.csr import _rules, render_csr_markdown


def test_docs_csr_md_is_generated_from_the_register_map():
    checked_in = (DOCS / "csr.md").read_text()
    assert checked_in == render_csr_markdown(NDPConfig()), \
        "docs/csr.md is stale: run `make docs`"


def test_every_register_is_documented():
    text = render_csr_markdown(NDPConfig())
    for name in ("ID", "VERSION", "CONFIG", "STATUS", "STALL_CYCLES", "EVENT_COUNT", "COMPLETE",
                 "IRQ_ENABLE", "CTRL", "BASE_LO", "BASE_HI", "SIZE_LO", "SIZE_HI", "KERNEL_PC",
                 "ARG_INDEX", "EXPECTED", "HITS"):
        assert f"**{name}**" in text


def test_the_generated_file_says_how_to_regenerate_it():
    first_line = render_csr_markdown(NDPConfig()).splitlines()[0]
    assert first_line.startswith("<!--") and "do not edit" in first_line and "`make docs`" in first_line


def test_the_windows_and_the_address_map_are_documented():
    text = render_csr_markdown(NDPConfig())
    for row in ("| **args** | `0x010000` | 0x1000 | RW | 12 |", "| **imem** | `0x020000` | 0x2000 | RW | 13 |",
                "| **scratchpad** | `0x100000` | 0x8000 | RW | 15 |",
                "| `0x000100` | `0x000500` | 0x400 | filter entries 0 … 15 |",
                "| `0x022000` | `0x100000` | 0xde000 | unmapped |",
                "| `0x108000` | `0x200000` | 0xf8000 | unmapped |"):
        assert row in text, row
    assert "21 address bits" in text
    assert "COMPLETE_HI (`0x020`) and IRQ_ENABLE_HI (`0x024`)" in text


@pytest.mark.parametrize("readable, writable, access", [(True, True, "RW"), (True, False, "RO"),
                                                         (False, True, "WO")])
def test_a_windows_access_column_spells_what_the_decoder_allows(readable, writable, access):
    window = Window("w", 0x1000, 0x1000, "a window", readable=readable, writable=writable)
    assert _rules(window) == access
