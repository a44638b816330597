"""The register map of an NDP slice, described once.

The RTL register file (:mod:`matndp.hw.bus.register_file`), the host runtime and ``docs/csr.md`` are all
generated from :func:`register_map`, so they cannot disagree.

Field access kinds are those of :mod:`matndp.hw.bus.map`.
"""

from .bus.map import Field, Register, RegisterMap
from .bus.signature import CSR_DATA_WIDTH


__all__ = ["register_map", "entry_register_name", "MAGIC", "VERSION",
           "ENTRY_BLOCK_BASE", "ENTRY_STRIDE"]


MAGIC = 0x6D4E4450          # "mNDP"
VERSION = 0x0001_0000       # major.minor in 16-bit halves
ENTRY_BLOCK_BASE = 0x100
ENTRY_STRIDE = 0x40


def entry_register_name(index, name):
    return f"entry{index}.{name}"


def register_map(config):
    if config.trigger.filter_entries > CSR_DATA_WIDTH:
        raise ValueError(f"the register map holds at most {CSR_DATA_WIDTH} filter entries "
                         f"(one bit each in HIT_DONE and IRQ_ENABLE), not {config.trigger.filter_entries}")
    if not 33 <= config.addr_width <= 64:
        raise ValueError(f"the register map splits addresses into two 32-bit words: addr_width "
                         f"must be in 33..64, not {config.addr_width}")
    n = config.trigger.filter_entries
    cw = config.counter_width
    high_addr_bits = config.addr_width - 32
    registers = [
        Register("id", 0x000, (Field("magic", 0, 32, "ro", "constant 0x6D4E4450 ('mNDP')"),),
                 "Identifies an NDP slice."),
        Register("version", 0x004, (Field("version", 0, 32, "ro", "major in bits 31:16, minor in 15:0"),),
                 "Register map version."),
        Register("config", 0x008, (
            Field("filter_entries", 0, 8, "ro", "number of filter entries"),
            Field("sector_bytes", 8, 8, "ro", "bytes per memory request"),
            Field("addr_width", 16, 7, "ro", "address bits"),
            Field("id_width", 24, 4, "ro", "request id bits"),
        ), "Build-time parameters, so that software adapts to the hardware it finds."),
        Register("status", 0x00C, (
            Field("id_reuse", 0, 1, "ext",
                  "sticky: a read was issued while another read with the same id was outstanding; "
                  "write 1 to clear"),
        ), "Error flags."),
        Register("stall_cycles", 0x010, (Field("count", 0, cw, "ext",
                 "cycles a GPU request or response was held because a trigger event queue was full; "
                 "a write loads the counter"),), "Back-pressure the trigger put on the GPU path."),
        Register("event_count", 0x014, (Field("count", 0, cw, "ext",
                 "trigger events produced, all entries; a write loads the counter"),),
                 "Total trigger events."),
        Register("hit_done", 0x018, (Field("mask", 0, n, "ro",
                 "bit i set when entry i's expected count is non-zero and its hit count has reached it"),),
                 "Entries whose expected number of triggers has arrived."),
        Register("irq_enable", 0x01C, (Field("mask", 0, n, "rw",
                 "bit i lets HIT_DONE bit i raise the interrupt line"),),
                 "Interrupt enables; irq = OR(HIT_DONE & IRQ_ENABLE)."),
    ]
    for i in range(n):
        base = ENTRY_BLOCK_BASE + i * ENTRY_STRIDE
        entry = [
            ("ctrl", 0x00, (
                Field("enable", 0, 1, "rw", "the entry matches requests"),
                Field("on_write", 1, 1, "rw", "writes in range trigger"),
                Field("on_read", 2, 1, "rw", "reads in range trigger (when their response returns)"),
            ), "Entry control."),
            ("base_lo", 0x04, (Field("base", 0, 32, "rw", "range base, address bits 31:0"),),
             "Range base, low word."),
            ("base_hi", 0x08, (Field("base", 0, high_addr_bits, "rw",
                               f"range base, address bits {config.addr_width - 1}:32"),),
             "Range base, high word."),
            ("size_lo", 0x0C, (Field("size", 0, 32, "rw", "range size in bytes, bits 31:0"),),
             "Range size, low word."),
            ("size_hi", 0x10, (Field("size", 0, high_addr_bits, "rw",
                               f"range size in bytes, bits {config.addr_width - 1}:32"),),
             "Range size, high word."),
            ("kernel_pc", 0x14, (Field("pc", 0, 16, "rw", "entry point of the kernel the trigger runs"),),
             "Kernel entry."),
            ("arg_index", 0x18, (Field("index", 0, 8, "rw", "argument block the kernel receives"),),
             "Kernel argument block."),
            ("expected", 0x1C, (Field("count", 0, cw, "rw",
                                "triggers expected for this entry; 0 disables HIT_DONE"),),
             "Expected trigger count."),
            ("hits", 0x20, (Field("count", 0, cw, "ext", "trigger events of this entry; a write loads it"),),
             "Hit counter."),
        ]
        for name, offset, entry_fields, doc in entry:
            registers.append(Register(entry_register_name(i, name), base + offset, entry_fields, doc,
                                      group="entry"))
    return RegisterMap(registers)
