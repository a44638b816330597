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
            *(() if not config.trigger.gather_sectors else (
                Field("gather_error", 1, 1, Access.W1C,
                      "sticky: a gathering entry's write fell outside its GATHER layout (a copy "
                      "index ≥ K, a slot beyond the table, copies smaller than a sector); "
                      "its event was dropped"),
            )),
        ), "Error flags."),
        Register("stall_cycles", 0x010, (
            Field("count", 0, cw, Access.LOAD,
                  "cycles a GPU request or response was held because a trigger event queue was full"),
        ), "Back-pressure the trigger put on the GPU path."),
        Register("event_count", 0x014, (
            Field("count", 0, cw, Access.LOAD, "trigger events produced, all entries"),
        ), "Total trigger events."),
        Register("mem_read_errors", 0x060, (
            Field("count", 0, cw, Access.LOAD,
                  "read responses memory answered with an error status, GPU's and engine's"),
        ), "Reads memory failed; each error also reaches the read's requester."),
        Register("mem_write_errors", 0x064, (
            Field("count", 0, cw, Access.LOAD,
                  "writes memory refused, as reported on the slice's mem_write_error input"),
        ), "Writes memory failed (engine stores included)."),
    ]


def _entry_masks(config):
    """COMPLETE, IRQ_ENABLE and STOPPED: one bit per filter entry, entries 32 and up in the
    _HI words."""
    n = config.trigger.filter_entries

    def first_entry(lsb):
        return "entry i" if lsb == 0 else f"entry {lsb} + i"
    if config.engine is None:
        meaning = "its expected count is non-zero and its hit count has reached it"
    else:
        meaning = ("its expected count is non-zero, that many of its kernels have ended "
                   "without error and its finalizer (if it names one) has ended")
    complete, complete_split = _wide_value("complete", n, (
        ("complete", 0x018, "Entries whose expected work is done."),
        ("complete_hi", 0x020, f"COMPLETE of entries {CSR_DATA_WIDTH} and up."),
    ), "mask", Access.RO, lambda lsb, msb: f"bit i set when {first_entry(lsb)}: {meaning}")
    irq_enable, irq_enable_split = _wide_value("irq_enable", n, (
        ("irq_enable", 0x01C, "Interrupt enables; irq = OR(COMPLETE & IRQ_ENABLE) over all words."),
        ("irq_enable_hi", 0x024, f"IRQ_ENABLE of entries {CSR_DATA_WIDTH} and up."),
    ), "mask", Access.RW, lambda lsb, msb: f"bit i lets {first_entry(lsb)}'s COMPLETE bit raise "
                                           f"the interrupt line")
    registers = [*complete, *irq_enable]
    splits = [complete_split, irq_enable_split]
    if config.engine is not None:
        stopped, stopped_split = _wide_value("stopped", n, (
            ("stopped", 0x028, "Entries an error stopped (until they are armed again)."),
            ("stopped_hi", 0x02C, f"STOPPED of entries {CSR_DATA_WIDTH} and up."),
        ), "mask", Access.RO, lambda lsb, msb: f"bit i set when an error stopped "
                                               f"{first_entry(lsb)}'s kernels")
        registers += stopped
        splits.append(stopped_split)
    return sorted(registers, key=lambda register: register.address), tuple(splits)


def _engine_registers(config):
    """The engine's global registers (none without an engine)."""
    engine = config.engine
    if engine is None:
        return [], ()
    cw = config.counter_width
    window_base, base_split = _wide_value("window_base", config.addr_width, (
        ("window_base_lo", 0x040, "Lowest address kernels may access, lo word."),
        ("window_base_hi", 0x044, "Lowest address kernels may access, hi word."),
    ), "address", Access.RW, lambda lsb, msb: f"window base, address bits {msb}:{lsb}")
    end_width = config.addr_width + 1
    window_end, end_split = _wide_value("window_end", end_width, (
        ("window_end_lo", 0x048, "One past the highest address kernels may access, lo word."),
        ("window_end_hi", 0x04C, "One past the highest address kernels may access, hi word."),
        ("window_end_top", 0x050, "Bit 64 of the window end (64-bit addresses only)."),
    ), "address", Access.RW, lambda lsb, msb: f"window end, bits {msb}:{lsb}")
    # The window is the whole address space after reset.
    end_init = 1 << config.addr_width
    window_end = [
        Register(register.name, register.address, tuple(
            Field(field.name, field.lsb, field.width, field.access, field.doc,
                  init=(end_init >> (CSR_DATA_WIDTH * index)) & ((1 << field.width) - 1))
            for field in register.fields), register.doc)
        for index, register in enumerate(window_end)]
    registers = [
        Register("error", 0x030, (
            Field("recorded", 0, 1, Access.W1C,
                  "an error was recorded; write 1 to clear, so that the next one is recorded"),
            Field("cause", 4, 3, Access.RO, "ErrorCause of the recorded error (docs/isa.md)"),
            Field("entry", 8, 6, Access.RO, "filter entry whose kernel failed"),
        ), "The first error since it was last cleared."),
        Register("error_pc", 0x034, (
            Field("pc", 0, engine.pc_bits, Access.RO, "instruction of the recorded error"),
        ), "Where the recorded error happened."),
        Register("watchdog", 0x038, (
            Field("cycles", 0, 32, Access.RW, "cycles a µthread may live before it is stopped",
                  init=engine.watchdog_cycles),
        ), "The µthread watchdog."),
        Register("engine_config", 0x03C, (
            Field("sub_cores", 0, 4, Access.CONST, "sub-cores", value=engine.sub_cores),
            Field("slots", 4, 7, Access.CONST, "µthread slots per sub-core", value=engine.slots),
            Field("instruction_words_log2", 11, 5, Access.CONST, "log2 of the instruction words",
                  value=engine.instruction_words.bit_length() - 1),
            Field("argument_blocks_log2", 16, 4, Access.CONST, "log2 of the argument blocks",
                  value=engine.argument_blocks.bit_length() - 1),
            Field("scratchpad_log2", 20, 5, Access.CONST, "log2 of the scratchpad bytes",
                  value=engine.scratchpad_bytes.bit_length() - 1),
        ), "The engine's build-time parameters."),
        *window_base,
        *window_end,
        Register("instructions", 0x058, (
            Field("count", 0, cw, Access.LOAD, "instructions the engine dispatched"),
        ), "Engine instruction counter."),
        Register("ndp_requests", 0x05C, (
            Field("count", 0, cw, Access.LOAD, "memory requests the engine issued"),
        ), "Engine memory-request counter."),
    ]
    return registers, (base_split, end_split)



def _entry_registers(config):
    """The registers of one filter entry, and the split fields of its base and size."""
    cw = config.counter_width
    engine = config.engine
    # Without an engine the fields keep the widths software saw before there was one.
    pc_bits = 16 if engine is None else engine.pc_bits
    arg_bits = 8 if engine is None else max(1, (engine.argument_blocks - 1).bit_length())
    base, base_split = _range_words("base", 0x04, config, "range base, address")
    size, size_split = _range_words("size", 0x0C, config, "range size in bytes,")
    return [
        Register("ctrl", 0x00, (
            Field("enable", 0, 1, Access.RW,
                  "the entry matches requests" + ("" if config.engine is None else
                                                  "; setting it arms the entry")),
            Field("on_write", 1, 1, Access.RW, "writes in range trigger"),
            Field("on_read", 2, 1, Access.RW, "reads in range trigger (when their response returns)"),
            *(() if config.engine is None else (
                Field("ordered", 3, 1, Access.RW,
                      "the kernel's scratchpad atomics are applied in trigger order"),
                Field("has_init", 4, 1, Access.RW, "arming runs the initializer at INIT_PC"),
                Field("has_final", 5, 1, Access.RW,
                      "reaching the expected count runs the finalizer at FINAL_PC"),
            )),
        ), "Entry control."),
        *base,
        *size,
        Register("kernel_pc", 0x14, (
            Field("pc", 0, pc_bits, Access.RW, "entry point of the kernel the trigger runs"),
        ), "Kernel entry."),
        Register("arg_index", 0x18, (
            Field("index", 0, arg_bits, Access.RW, "argument block the kernel receives"),
        ), "Kernel argument block."),
        Register("expected", 0x1C, (
            Field("count", 0, cw, Access.RW, "triggers expected for this entry; 0 leaves COMPLETE clear"),
        ), "Expected trigger count."),
        Register("hits", 0x20, (
            Field("count", 0, cw, Access.LOAD, "trigger events of this entry"),
        ), "Hit counter."),
        *(() if config.engine is None else (
            Register("helper_pcs", 0x24, (
                Field("init", 0, pc_bits, Access.RW, "entry point of the initializer"),
                Field("final", 16, pc_bits, Access.RW, "entry point of the finalizer"),
            ), "Initializer and finalizer entry points."),
            Register("completed", 0x28, (
                Field("count", 0, cw, Access.RO,
                      "this entry's kernels that ended without error since it was armed"),
            ), "Completion counter."),
            Register("drained", 0x2C, (
                Field("count", 0, cw, Access.RO,
                      "events of this entry dropped since an error stopped it"),
            ), "Drained events."),
            Register("final_threads", 0x30, (
                Field("count", 0, cw, Access.RW,
                      "µthreads the finalizer runs as, the i-th with SEQ = i; 0 runs one"),
            ), "Finalizer µthreads."),
            Register("init_threads", 0x34, (
                Field("count", 0, cw, Access.RW,
                      "µthreads the initializer runs as, the i-th with SEQ = i; 0 runs one"),
            ), "Initializer µthreads."),
        )),
        *(() if not config.trigger.gather_sectors else (
            Register("gather", 0x38, (
                Field("ports", 0, 5, Access.RW,
                      "K: a sector's K-th write starts the kernel, the others only count "
                      "(0 or 1: every write starts it)"),
                Field("copy_log2", 8, 6, Access.RW,
                      "log2 of a copy's bytes: copy k = offset >> COPY_LOG2, the sector "
                      "within it the bits below"),
                Field("slot", 16, config.trigger.gather_slot_bits, Access.RW,
                      "the table slot of the copies' first sector; one slot per sector of a copy"),
            ), "Arrival gathering (docs/trigger.md)."),
        )),
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
    engine_registers, engine_splits = _engine_registers(config)
    entry_registers, entry_splits = _entry_registers(config)
    return RegisterMap([
        RegisterBlock(GLOBAL_BLOCK, 0x000, [*global_registers, *masks, *engine_registers],
                      split_fields=(*mask_splits, *engine_splits)),
        RegisterArray(ENTRY_ARRAY, ENTRY_BLOCK_BASE, ENTRY_STRIDE, config.trigger.filter_entries,
                      entry_registers, split_fields=entry_splits),
        *(_windows(config) if config.engine is not None else ()),
    ])
