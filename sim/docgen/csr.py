"""Render the register map (:func:`matndp.hw.csr_map.register_map`) as Markdown."""

from dataclasses import replace

from matndp.hw.bus.map import Access
from matndp.hw.bus.signature import CSR_DATA_WIDTH
from matndp.hw.csr_map import ENTRY_ARRAY, GLOBAL_BLOCK, REGISTER_SPACE, register_map


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


def _address(value, digits):
    return f"`{value:#0{digits + 2}x}`"


def _address_map(registers, entries):
    """The bus's address space in order: the register blocks, the windows, and the gaps,
    which are unmapped."""
    digits = (registers.addr_width + 3) // 4
    glob = registers.block(GLOBAL_BLOCK)
    entries_end = entries.base + len(entries) * entries.stride
    regions = [(glob.base, glob.end, "global registers"),
               (entries.base, entries_end, f"filter entries 0 … {len(entries) - 1}")]
    regions += [(window.base, window.end, f"window **{window.name}**") for window in registers.windows]
    lines = ["| from | to (excl.) | bytes | what |", "|---|---|---|---|"]
    position = 0
    for start, end, what in sorted(regions):
        if start > position:
            gap = "unmapped (room for more registers)" if start <= REGISTER_SPACE else "unmapped"
            lines.append(f"| {_address(position, digits)} | {_address(start, digits)} | "
                         f"{start - position:#x} | {gap} |")
        lines.append(f"| {_address(start, digits)} | {_address(end, digits)} | {end - start:#x} | {what} |")
        position = end
    top = 1 << registers.addr_width
    if position < top:
        lines.append(f"| {_address(position, digits)} | {_address(top, digits)} | "
                     f"{top - position:#x} | unmapped |")
    return lines


def _mask_words(config):
    """(name, address) of the per-entry mask words beyond the first, from the map of the
    fewest entries that need them."""
    wider = replace(config, trigger=replace(config.trigger, filter_entries=CSR_DATA_WIDTH + 1))
    registers = register_map(wider)
    return [(register.name, register.address)
            for name in ("complete", "irq_enable", *(("stopped",) if config.engine else ()))
            for register, _ in registers.split_field(name)[1:]]


def _rules(window):
    return {(True, True): "RW", (True, False): "RO", (False, True): "WO"}[window.readable, window.writable]


def _windows_table(registers):
    lines = ["| window | base | size | access | offset bits | contents |", "|---|---|---|---|---|---|"]
    digits = (registers.addr_width + 3) // 4
    for window in registers.windows:
        lines.append(f"| **{window.name}** | {_address(window.base, digits)} | {window.size:#x} | "
                     f"{_rules(window)} | {window.addr_width} | {window.doc} |")
    return lines


def render_csr_markdown(config):
    registers = register_map(config)
    entries = registers.array(ENTRY_ARRAY)
    engine = config.engine
    lines = [
        "<!-- Generated from hw/csr_map.py by `make docs`; "
        "do not edit. -->",
        "",
        "# CSR map of an NDP slice",
        "",
        f"Parameters: {config.trigger.filter_entries} filter entries, {config.addr_width}-bit addresses, "
        f"{config.sector_bytes}-byte sectors, {config.counter_width}-bit counters, "
        f"{engine.instruction_words} instruction words, {engine.argument_blocks} argument blocks, "
        f"a {engine.scratchpad_bytes}-byte scratchpad (`matndp.hw.config.NDPConfig` defaults).",
        "",
        f"The bus (`hw/bus/signature.py`) carries {CSR_DATA_WIDTH}-bit words at "
        f"{CSR_DATA_WIDTH // 8}-byte-aligned byte addresses, {registers.addr_width} address bits. "
        "An access is a one-cycle strobe; the target acknowledges it one or more cycles later "
        "(registers: exactly three), and the initiator holds the address and write data until "
        "then and issues nothing else meanwhile. `err` is set with the acknowledgement when the "
        "address maps to no register and no window (misaligned addresses included), when a "
        "write targets a register with only read-only fields, or when a window's target "
        "refuses the access.",
        "",
        "## Address map",
        "",
        "The decoder (`hw/bus/decoder.py`) sends an access inside a window to that window's "
        "bus, with the address relative to the window, and every other access to the "
        "register file. The layout is fixed: the registers keep the first "
        f"{REGISTER_SPACE // 1024} KiB at every configuration, and each window sits at a "
        "base no smaller than the largest window the configuration allows there, so no "
        "address moves when a parameter changes; only the windows' sizes follow the "
        "configuration.",
        "",
        *_address_map(registers, entries),
        "",
        "Access:",
        "",
        *(f"- **{label}**: {meaning}." for label, meaning in _ACCESS_LABELS.values()),
        "",
        "Counters wrap around. An event reaches its counter through a register stage, a cycle "
        "later than it happens; a write that loads a counter replaces the events "
        "before the cycle the write reaches the counter (its acknowledge's) and counts "
        "those from that cycle on.",
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
        "## Words that follow the parameters",
        "",
        f"A value wider than {CSR_DATA_WIDTH} bits takes one more word, least significant "
        "first, at the next address; a word the configuration does not need is unmapped. "
        f"With addresses of {CSR_DATA_WIDTH} bits or fewer BASE_HI and SIZE_HI are absent; "
        f"with more than {CSR_DATA_WIDTH} filter entries "
        + " and ".join(f"{name.upper()} (`{address:#05x}`)" for name, address in _mask_words(config))
        + f" hold the bits of entries {CSR_DATA_WIDTH} and up.",
        "",
        "## Windows",
        "",
        "Each window is read and written in 32-bit words at byte offsets from its base "
        "(`matndp.host.runtime.NDPRuntime.read_window` / `write_window`). Its target may take "
        "several cycles to answer; the runtime's accesses wait for it. A slice built without "
        "a target behind a window answers the window's accesses with `err`.",
        "",
        *_windows_table(registers),
        "",
    ]
    return "\n".join(lines)
