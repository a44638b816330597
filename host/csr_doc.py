"""Render the register map (:func:`matndp.hw.csr_map.register_map`) as Markdown."""

from matndp.hw.bus.map import Access
from matndp.hw.bus.signature import CSR_DATA_WIDTH
from matndp.hw.csr_map import ENTRY_ARRAY, GLOBAL_BLOCK, register_map


__all__ = ["render_csr_markdown"]


_ACCESS_LABELS = {
    Access.RW: ("RW", "read and written; stored by the register file"),
    Access.RO: ("RO", "read-only status driven by the hardware (writes to a register with only "
                      "read-only fields are bus errors)"),
    Access.CONST: ("C", "a constant fixed when the slice is built; its value is given for the "
                        "parameters above"),
    Access.LOAD: ("LOAD", "a counter owned by the hardware; a write loads the written value"),
    Access.W1C: ("W1C", "sticky flags owned by the hardware; writing 1 clears a flag"),
}


def _bits(field):
    high = field.lsb + field.width - 1
    return f"{high}:{field.lsb}" if field.width > 1 else f"{field.lsb}"


def _description(field):
    if field.access is not Access.CONST:
        return field.doc
    # Identity words read better in hex, parameters and versions in decimal.
    value = f"{field.value:#010x}" if field.width == CSR_DATA_WIDTH else f"{field.value}"
    return f"{field.doc} (= {value})"


def _table(registers, address_of):
    lines = ["| address | register | bits | field | access | description |",
             "|---|---|---|---|---|---|"]
    for register in registers:
        for number, field in enumerate(sorted(register.fields, key=lambda f: f.lsb)):
            head = (f"`{address_of(register)}`", f"**{register.name.upper()}**") \
                if number == 0 else ("", "")
            lines.append(f"| {head[0]} | {head[1]} | {_bits(field)} | `{field.name}` | "
                         f"{_ACCESS_LABELS[field.access][0]} | {_description(field)} |")
    return lines


def render_csr_markdown(config):
    registers = register_map(config)
    entries = registers.array(ENTRY_ARRAY)
    lines = [
        "<!-- Generated from hw/csr_map.py by `make docs` (matndp csr doc --output docs/csr.md); "
        "do not edit. -->",
        "",
        "# CSR map of an NDP slice",
        "",
        f"Parameters: {config.trigger.filter_entries} filter entries, {config.addr_width}-bit addresses, "
        f"{config.sector_bytes}-byte sectors, {config.counter_width}-bit counters "
        f"(`matndp.hw.config.NDPConfig` defaults).",
        "",
        f"The bus (`hw/bus/signature.py`) carries {CSR_DATA_WIDTH}-bit registers at "
        f"{CSR_DATA_WIDTH // 8}-byte-aligned byte addresses. "
        "Every access is acknowledged one cycle after its strobe; `err` is set with the "
        "acknowledgement when the address maps to no register (misaligned addresses included) "
        "or when a write targets a register with only read-only fields.",
        "",
        "Access:",
        "",
        *(f"- **{label}**: {meaning}." for label, meaning in _ACCESS_LABELS.values()),
        "",
        "Counters wrap around. An event reaches its counter through a register stage, a cycle "
        "later than it happens; a write that loads a counter replaces the events "
        "before the write's cycle and counts those from its cycle on.",
        "",
        "## Global registers",
        "",
        *_table(registers.block(GLOBAL_BLOCK).registers, lambda r: f"{r.address:#05x}"),
        "",
        "## Filter entries",
        "",
        f"Entry *i* occupies `{entries.base:#05x} + i × {entries.stride:#04x}`, "
        f"for i = 0 … {len(entries) - 1}. Offsets within an entry:",
        "",
        *_table(entries.layout, lambda r: f"+{r.address:#04x}"),
        "",
        "A request matches entry *i* when the entry is enabled, its direction flag "
        "(`on_write` / `on_read`) is set, and `base ≤ addr < base + size`; the lowest matching "
        "index wins. Software (`matndp.host.runtime`) refuses overlapping ranges.",
        "",
    ]
    return "\n".join(lines)
