"""The register map of an NDP slice, described once.

The RTL register file (:mod:`matndp.hw.bus.register_file`), the decoder in front of it
(:mod:`matndp.hw.bus.decoder`), the behaviours the slice attaches to its fields, the host
runtime, the register model host tests run on and ``docs/csr.md`` are all generated from
:func:`register_map`, so they cannot disagree. Values fixed when the slice is built (the
identity and the build parameters) are ``CONST`` fields with their value here.

Layout: the registers take the first 64 KiB (the global block at 0, filter entry *i* at
``ENTRY_BLOCK_BASE + i * ENTRY_STRIDE``, 0x1100 bytes at the 64 entries the configuration
allows; the rest is room for more blocks). Above them lie the engine's windows, each at a
fixed base that is a power of two no smaller than the largest window the configuration
allows there, so a window's base is aligned at every size and no window moves when
another grows: the argument blocks at 64 KiB (at most 32 KiB), the instruction memory at
128 KiB (at most 128 KiB), the scratchpad at 1 MiB (at most 1 MiB). The bus spans 2 MiB.

Values that may be wider than a register (a range's base and size, the per-entry masks)
take as many 32-bit words as their width needs, least significant first, at fixed
addresses: a word a configuration does not need is unmapped.

Field access kinds are those of :class:`matndp.hw.bus.map.Access`.
"""

from .bus.map import (Access, Field, Register, RegisterArray, RegisterBlock, RegisterMap, SplitField,
                      Window)
from .bus.signature import CSR_DATA_WIDTH
from .engine.isa import ARGUMENT_WORDS


__all__ = ["register_map", "entry_register_name", "MAGIC", "VERSION_MAJOR", "VERSION_MINOR",
           "ENTRY_BLOCK_BASE", "ENTRY_STRIDE", "GLOBAL_BLOCK", "ENTRY_ARRAY", "REGISTER_SPACE",
           "IMEM_WINDOW", "ARGS_WINDOW", "SCRATCHPAD_WINDOW", "WINDOW_BASES"]


MAGIC = 0x6D4E4450          # "mNDP"
VERSION_MAJOR = 1
VERSION_MINOR = 0
ENTRY_BLOCK_BASE = 0x100
ENTRY_STRIDE = 0x40
GLOBAL_BLOCK = "global"
ENTRY_ARRAY = "entry"
REGISTER_SPACE = 0x1_0000
IMEM_WINDOW = "imem"
ARGS_WINDOW = "args"
SCRATCHPAD_WINDOW = "scratchpad"
WINDOW_BASES = {ARGS_WINDOW: 0x1_0000, IMEM_WINDOW: 0x2_0000, SCRATCHPAD_WINDOW: 0x10_0000}


def entry_register_name(index, name):
    """The name of filter entry ``index``'s register (or split field) ``name``."""
    return f"{ENTRY_ARRAY}{index}.{name}"


def _wide_value(name, width, words, field, access, describe):
    """The registers of the ``width``-bit value ``name``, one per 32-bit word it needs, least
    significant first, and the split field that joins them. ``words`` are the
    ``(register name, address, doc)`` of the words the largest value needs; ``describe(lsb,
    msb)`` documents the field of the word holding bits ``msb:lsb``."""
    lsbs = range(0, width, CSR_DATA_WIDTH)
    registers = [
        Register(register, address, (
            Field(field, 0, min(CSR_DATA_WIDTH, width - lsb), access,
                  describe(lsb, min(width, lsb + CSR_DATA_WIDTH) - 1)),
        ), doc)
        for lsb, (register, address, doc) in zip(lsbs, words[:len(lsbs)], strict=True)
    ]
    return registers, SplitField(name, tuple((register.name, field) for register in registers))


def _global_registers(config):
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
    ]


def _entry_masks(config):
    """HIT_DONE and IRQ_ENABLE: one bit per filter entry, entries 32 and up in the _HI words."""
    n = config.trigger.filter_entries

    def first_entry(lsb):
        return "entry i" if lsb == 0 else f"entry {lsb} + i"
    hit_done, hit_done_split = _wide_value("hit_done", n, (
        ("hit_done", 0x018, "Entries whose expected number of triggers has arrived."),
        ("hit_done_hi", 0x020, f"HIT_DONE of entries {CSR_DATA_WIDTH} and up."),
    ), "mask", Access.RO, lambda lsb, msb: f"bit i set when {first_entry(lsb)}'s expected count is "
                                           f"non-zero and its hit count has reached it")
    irq_enable, irq_enable_split = _wide_value("irq_enable", n, (
        ("irq_enable", 0x01C, "Interrupt enables; irq = OR(HIT_DONE & IRQ_ENABLE) over all words."),
        ("irq_enable_hi", 0x024, f"IRQ_ENABLE of entries {CSR_DATA_WIDTH} and up."),
    ), "mask", Access.RW, lambda lsb, msb: f"bit i lets {first_entry(lsb)}'s HIT_DONE bit raise "
                                           f"the interrupt line")
    registers = sorted([*hit_done, *irq_enable], key=lambda register: register.address)
    return registers, (hit_done_split, irq_enable_split)


def _entry_registers(config):
    """The registers of one filter entry, and the split fields of its base and size."""
    cw = config.counter_width
    base, base_split = _range_words("base", 0x04, config, "range base, address")
    size, size_split = _range_words("size", 0x0C, config, "range size in bytes,")
    return [
        Register("ctrl", 0x00, (
            Field("enable", 0, 1, Access.RW, "the entry matches requests"),
            Field("on_write", 1, 1, Access.RW, "writes in range trigger"),
            Field("on_read", 2, 1, Access.RW, "reads in range trigger (when their response returns)"),
        ), "Entry control."),
        *base,
        *size,
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
    ], (base_split, size_split)


def _range_words(name, address, config, description):
    """The registers, low word first at ``address``, that hold the address-wide value
    ``name`` (the field of each is ``name`` too): ``{name}_lo``, and ``{name}_hi`` when
    addresses are wider than a register."""
    return _wide_value(name, config.addr_width, (
        (f"{name}_lo", address, f"The range's {name}, lo word."),
        (f"{name}_hi", address + 4, f"The range's {name}, hi word."),
    ), name, Access.RW, lambda lsb, msb: f"{description} bits {msb}:{lsb}")


def _windows(config):
    engine = config.engine
    sizes = {
        ARGS_WINDOW: (engine.argument_blocks * ARGUMENT_WORDS * 8,
                      f"argument blocks: {engine.argument_blocks} blocks of {ARGUMENT_WORDS} 64-bit "
                      f"words, block i at offset i × {ARGUMENT_WORDS * 8:#x}; each 64-bit word is two "
                      f"32-bit words, low word first"),
        IMEM_WINDOW: (engine.instruction_words * 8,
                      f"kernel instruction memory: {engine.instruction_words} 64-bit instructions, "
                      f"instruction i at offset 8 × i; each is two 32-bit words, low word first"),
        SCRATCHPAD_WINDOW: (engine.scratchpad_bytes,
                            f"the engine's scratchpad: {engine.scratchpad_bytes} bytes, read and "
                            f"written as 32-bit words"),
    }
    return [Window(name, WINDOW_BASES[name], size, doc) for name, (size, doc) in sizes.items()]


def register_map(config):
    global_registers = _global_registers(config)
    masks, mask_splits = _entry_masks(config)
    entry_registers, entry_splits = _entry_registers(config)
    return RegisterMap([
        RegisterBlock(GLOBAL_BLOCK, 0x000, [*global_registers, *masks], split_fields=mask_splits),
        RegisterArray(ENTRY_ARRAY, ENTRY_BLOCK_BASE, ENTRY_STRIDE, config.trigger.filter_entries,
                      entry_registers, split_fields=entry_splits),
        *_windows(config),
    ])
