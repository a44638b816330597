"""The register map of an NDP slice, described once.

The RTL register file (:mod:`matndp.hw.bus.register_file`), the behaviours the slice attaches
to its fields, the host runtime and ``docs/csr.md`` are all generated from
:func:`register_map`, so they cannot disagree. Values fixed when the slice is built (the
identity and the build parameters) are ``CONST`` fields with their value here.

Field access kinds are those of :class:`matndp.hw.bus.map.Access`.
"""

from .bus.map import Access, Field, Register, RegisterArray, RegisterBlock, RegisterMap, SplitField
from .bus.signature import CSR_DATA_WIDTH


__all__ = ["register_map", "entry_register_name", "MAGIC", "VERSION_MAJOR", "VERSION_MINOR",
           "ENTRY_BLOCK_BASE", "ENTRY_STRIDE", "GLOBAL_BLOCK", "ENTRY_ARRAY"]


MAGIC = 0x6D4E4450          # "mNDP"
VERSION_MAJOR = 1
VERSION_MINOR = 0
ENTRY_BLOCK_BASE = 0x100
ENTRY_STRIDE = 0x40
GLOBAL_BLOCK = "global"
ENTRY_ARRAY = "entry"


def entry_register_name(index, name):
    """The name of filter entry ``index``'s register (or split field) ``name``."""
    return f"{ENTRY_ARRAY}{index}.{name}"


def _global_registers(config):
    n = config.trigger.filter_entries
    cw = config.counter_width
    return [
        Register("id", 0x000, (
            Field("magic", 0, 32, Access.CONST, "'mNDP'", value=MAGIC),
        ), "Identifies an NDP slice."),
        Register("version", 0x004, (
            Field("minor", 0, 16, Access.CONST, "minor version: additions", value=VERSION_MINOR),
            Field("major", 16, 16, Access.CONST, "major version: incompatible changes",
                  value=VERSION_MAJOR),
        ), "Register map version."),
        Register("config", 0x008, (
            Field("filter_entries", 0, 8, Access.CONST, "number of filter entries",
                  value=config.trigger.filter_entries),
            Field("sector_bytes", 8, 8, Access.CONST, "bytes per memory request",
                  value=config.sector_bytes),
            Field("addr_width", 16, 7, Access.CONST, "address bits", value=config.addr_width),
            Field("id_width", 24, 4, Access.CONST, "request id bits", value=config.id_width),
        ), "Build-time parameters, so that software adapts to the hardware it finds."),
        Register("status", 0x00C, (
            Field("id_reuse", 0, 1, Access.W1C,
                  "sticky: a read was issued while another read with the same id was outstanding"),
        ), "Error flags."),
        Register("stall_cycles", 0x010, (
            Field("count", 0, cw, Access.LOAD,
                  "cycles a GPU request or response was held because a trigger event queue was full"),
        ), "Back-pressure the trigger put on the GPU path."),
        Register("event_count", 0x014, (
            Field("count", 0, cw, Access.LOAD, "trigger events produced, all entries"),
        ), "Total trigger events."),
        Register("hit_done", 0x018, (
            Field("mask", 0, n, Access.RO,
                  "bit i set when entry i's expected count is non-zero and its hit count has reached it"),
        ), "Entries whose expected number of triggers has arrived."),
        Register("irq_enable", 0x01C, (
            Field("mask", 0, n, Access.RW, "bit i lets HIT_DONE bit i raise the interrupt line"),
        ), "Interrupt enables; irq = OR(HIT_DONE & IRQ_ENABLE)."),
    ]


def _entry_registers(config):
    cw = config.counter_width
    return [
        Register("ctrl", 0x00, (
            Field("enable", 0, 1, Access.RW, "the entry matches requests"),
            Field("on_write", 1, 1, Access.RW, "writes in range trigger"),
            Field("on_read", 2, 1, Access.RW, "reads in range trigger (when their response returns)"),
        ), "Entry control."),
        *_split_registers("base", 0x04, config, "range base, address"),
        *_split_registers("size", 0x0C, config, "range size in bytes,"),
        Register("kernel_pc", 0x14, (
            Field("pc", 0, 16, Access.RW, "entry point of the kernel the trigger runs"),
        ), "Kernel entry."),
        Register("arg_index", 0x18, (
            Field("index", 0, 8, Access.RW, "argument block the kernel receives"),
        ), "Kernel argument block."),
        Register("expected", 0x1C, (
            Field("count", 0, cw, Access.RW, "triggers expected for this entry; 0 disables HIT_DONE"),
        ), "Expected trigger count."),
        Register("hits", 0x20, (
            Field("count", 0, cw, Access.LOAD, "trigger events of this entry"),
        ), "Hit counter."),
    ]


def _split_registers(name, address, config, description):
    """The two registers, low word first at ``address``, that hold the address-wide value
    ``name`` (the field of both is ``name`` too)."""
    high = config.addr_width - 1
    return [
        Register(f"{name}_{half}", address + offset, (
            Field(name, 0, width, Access.RW, f"{description} bits {msb}:{lsb}"),
        ), f"The range's {name}, {half} word.")
        for half, offset, width, msb, lsb in (
            ("lo", 0x0, CSR_DATA_WIDTH, CSR_DATA_WIDTH - 1, 0),
            ("hi", 0x4, config.addr_width - CSR_DATA_WIDTH, high, CSR_DATA_WIDTH))
    ]


def _split_field(name):
    return SplitField(name, ((f"{name}_lo", name), (f"{name}_hi", name)))


def register_map(config):
    if config.trigger.filter_entries > CSR_DATA_WIDTH:
        raise ValueError(f"the register map holds at most {CSR_DATA_WIDTH} filter entries "
                         f"(one bit each in HIT_DONE and IRQ_ENABLE), not {config.trigger.filter_entries}")
    if not CSR_DATA_WIDTH < config.addr_width <= 2 * CSR_DATA_WIDTH:
        raise ValueError(f"the register map splits addresses into two {CSR_DATA_WIDTH}-bit words: "
                         f"addr_width must be in {CSR_DATA_WIDTH + 1}..{2 * CSR_DATA_WIDTH}, "
                         f"not {config.addr_width}")
    return RegisterMap([
        RegisterBlock(GLOBAL_BLOCK, 0x000, _global_registers(config)),
        RegisterArray(ENTRY_ARRAY, ENTRY_BLOCK_BASE, ENTRY_STRIDE, config.trigger.filter_entries,
                      _entry_registers(config), split_fields=(_split_field("base"), _split_field("size"))),
    ])
