"""The C header the SoC's firmware is built with, generated from the project's single
sources: the register map (``hw/csr_map.py``) of the configuration the SoC's slice is built
with, each kernel's image from the assembler, and what the firmware writes to the slice,
recorded from :class:`~matndp.host.runtime.NDPRuntime` itself (the same calls the RTL
flows make: ``load_kernel``, ``write_arguments``, ``program``, ``enable_interrupts``), so
that the firmware replays the runtime's register writes word for word. The values a run
must give are the instruction-set simulator's, checked against the numpy goldens
(``sim/golden``) when the header is made."""

from dataclasses import dataclass

import numpy as np

from matndp.hw.csr_map import ENTRY_STRIDE, MAGIC, register_map
from matndp.host.csr_bus import CSRBus, RegisterModelBus
from matndp.host.runtime import NDPRuntime
from matndp.sim.flows.kernel_run import (Launch, differing_elements, golden_outputs,
                                         plan_launches, reference_outputs)


__all__ = ["SoCKernel", "SOC_KERNELS", "STAGING_BASE", "TENSOR_BASE", "RecordingBus",
           "firmware_header", "kernel_programs", "REGENERATE"]


# Where the tensors lie in the SoC's DRAM (byte offsets, the slice's addresses), and where
# the CPU stages a write-triggered launch's triggering tensor for the DMA to send through
# the slice.
TENSOR_BASE = 0x10_0000
STAGING_BASE = 0x80_0000
REGENERATE = "make soc-sim (matndp soc-sim)"


@dataclass(frozen=True)
class SoCKernel:
    """A library kernel the firmware runs: its name, problem and inputs' seed."""
    name: str
    problem: dict
    seed: int = 1


# bn_stats at 16 channels (two finalizer µthreads, eight initializer µthreads on the fpga
# configuration's four slots) does not complete in the SoC: every main µthread ends, the
# finalizer never starts (docs/fpga.md, "The slice in a LiteX SoC"); at 8 channels it does.
SOC_KERNELS = (SoCKernel("bias_relu", {"rows": 4, "channels": 16}),
               SoCKernel("bn_stats", {"rows": 8, "channels": 16}),
               SoCKernel("bn_apply", {"rows": 4, "channels": 16}))


class RecordingBus(CSRBus):
    """A register model that records every write: ``(address, [words])`` blocks, one per
    ``write`` or ``write_words`` call, in order."""

    def __init__(self, registers):
        self.model = RegisterModelBus(registers)
        self.blocks = []

    def read(self, address):
        return self.model.read(address)

    def write(self, address, value):
        self.model.write(address, value)
        self.blocks.append((address, [int(value)]))

    def write_words(self, address, words):
        words = [int(word) for word in words]
        self.model.write_words(address, words)
        self.blocks.append((address, words))

    def take(self):
        """The blocks recorded since the last take."""
        blocks, self.blocks = self.blocks, []
        return blocks


@dataclass(frozen=True)
class KernelProgram:
    """What the firmware does for one launch: the register writes of each runtime step,
    the regions it places in memory, the DMA's transfer (a write-triggered launch's
    tensor copied from ``trigger_source`` through the slice, a read-triggered one's read
    through it) and the regions it checks."""
    name: str
    entry: int
    steps: dict             # step name -> [(address, [words])]
    place: list             # [(address, bytes)]
    read: bool
    trigger_source: int
    trigger_address: int
    trigger_sectors: int
    expected: list          # [(address, bytes)]


def kernel_programs(config, kernels=SOC_KERNELS):
    """The :class:`KernelProgram` of each of ``kernels`` on a slice of ``config``, entry
    *i* and argument block *i* for kernel *i*. ValueError when a launch does not fit the
    engine, its triggering accesses are not whole sectors or its references disagree."""
    if config.engine is None:
        raise ValueError("the SoC's slice needs an engine to run kernels")
    plans = plan_launches([Launch(k.name, k.problem) for k in kernels], seed=kernels[0].seed,
                          config=config, base=TENSOR_BASE)
    if len(plans) > min(config.engine.argument_blocks, config.trigger.filter_entries):
        raise ValueError(f"{len(plans)} kernels need as many argument blocks and filter "
                         f"entries; the engine has {config.engine.argument_blocks}")
    bus = RecordingBus(register_map(config))
    runtime = NDPRuntime(bus, config)
    staging = STAGING_BASE
    programs = []
    for index, plan in enumerate(plans):
        if any(mask != (1 << config.sector_bytes) - 1 for _, mask in plan.trigger):
            raise ValueError(f"{plan.launch.kernel.name}: the DMA moves whole sectors; its "
                             f"trigger tensor must fill them")
        if staging + plan.trigger_bytes.size > 1 << 32 or plan.entry["base"] + plan.entry["size"] > staging:
            raise ValueError("the tensors reach the staging area: raise STAGING_BASE")
        iss, golden, _ = reference_outputs(plan.launch, plan.inputs)
        differing = differing_elements(iss, golden)
        if differing:
            raise ValueError(f"{plan.launch.kernel.name}: the instruction-set simulator and "
                             f"the golden differ in {differing}")
        steps = {}
        loaded = runtime.load_kernel(plan.spec.image)
        steps["load_kernel"] = bus.take()
        runtime.write_arguments(index, plan.arguments)
        steps["write_arguments"] = bus.take()
        entry = plan.entry
        runtime.program(index, loaded.filter_range(
            entry["base"], entry["size"], on_write=entry["on_write"], on_read=entry["on_read"],
            expected=entry["expected"], init_threads=entry["init_threads"],
            final_threads=entry["final_threads"], arg_index=index))
        steps["program"] = bus.take()
        runtime.enable_interrupts(1 << index)
        steps["enable_interrupts"] = bus.take()
        place = [(address, raw.tobytes()) for _, address, raw in plan.place]
        source = staging if plan.write_triggered else 0
        if plan.write_triggered:
            place.append((staging, plan.trigger_bytes.tobytes()))
            staging += -(-plan.trigger_bytes.size // 4096) * 4096
        expected = []
        for region in plan.read_back:
            raw = np.ascontiguousarray(iss[region["tensor"]]).view(np.uint8).tobytes()
            expected.append((region["addr"], raw[:region["bytes"]]))
        programs.append(KernelProgram(plan.launch.kernel.name, index, steps, place,
                                      not plan.write_triggered, source, entry["base"],
                                      len(plan.trigger), expected))
    return programs


def _symbol(name):
    return name.upper().replace(".", "_")


def _words(data):
    if len(data) % 4:
        raise ValueError(f"a region of {len(data)} bytes is not whole 32-bit words")
    return np.frombuffer(data, dtype="<u4").tolist()


def _array(name, words):
    lines = [", ".join(f"0x{word:08x}u" for word in words[i:i + 6]) for i in range(0, len(words), 6)]
    body = ",\n    ".join(lines) if lines else "0"
    return f"static const uint32_t {name}[] = {{\n    {body}\n}};\n"


def _register_defines(registers):
    lines = []
    for register in registers:
        symbol = _symbol(register.name)
        lines.append(f"#define NDP_{symbol} 0x{register.address:06x}u")
        for field in register.fields:
            lines.append(f"#define NDP_{symbol}_{_symbol(field.name)}_SHIFT {field.lsb}")
            lines.append(f"#define NDP_{symbol}_{_symbol(field.name)}_MASK "
                         f"0x{(1 << field.width) - 1:x}u")
    for window in registers.windows:
        lines.append(f"#define NDP_WINDOW_{_symbol(window.name)} 0x{window.base:06x}u")
        lines.append(f"#define NDP_WINDOW_{_symbol(window.name)}_BYTES {window.size}u")
    return "\n".join(lines) + "\n"


def _blocks(prefix, blocks):
    arrays, rows = [], []
    for position, (address, words) in enumerate(blocks):
        arrays.append(_array(f"{prefix}_{position}", words))
        rows.append(f"    {{0x{address:06x}u, {len(words)}u, {prefix}_{position}}},")
    table = f"static const struct ndp_block {prefix}[] = {{\n" + "\n".join(rows) + "\n};\n"
    return "".join(arrays) + table


def firmware_header(config, kernels=SOC_KERNELS):
    """The text of the firmware's header for a slice of ``config`` running ``kernels``."""
    registers = register_map(config)
    programs = kernel_programs(config, kernels)
    parts = [f"/* Generated from hw/csr_map.py, the kernel library and its references by "
             f"matndp.sim.soc.firmware_header: do not edit. Regenerate with {REGENERATE}. */\n",
             "#ifndef NDP_FIRMWARE_H\n#define NDP_FIRMWARE_H\n\n#include <stdint.h>\n\n",
             f"#define NDP_SECTOR_BYTES {config.sector_bytes}u\n#define NDP_MAGIC 0x{MAGIC:08x}u\n"
             f"#define NDP_ENTRY_STRIDE 0x{ENTRY_STRIDE:x}u\n",
             _register_defines(registers), "\n",
             "struct ndp_block { uint32_t address; uint32_t count; const uint32_t *words; };\n",
             "struct ndp_step { const char *name; const struct ndp_block *blocks; uint32_t count; };\n",
             "struct ndp_kernel {\n    const char *name;\n    uint32_t entry;\n"
             "    const struct ndp_step *steps;\n    uint32_t step_count;\n"
             "    const struct ndp_block *place;\n    uint32_t place_count;\n"
             "    uint32_t read;\n    uint32_t trigger_source;\n    uint32_t trigger_address;\n    uint32_t trigger_sectors;\n"
             "    const struct ndp_block *expected;\n    uint32_t expected_count;\n};\n\n"]
    rows = []
    for index, program in enumerate(programs):
        prefix = f"ndp_k{index}"
        step_rows = []
        for step, blocks in program.steps.items():
            parts.append(_blocks(f"{prefix}_{step}", blocks))
            step_rows.append(f'    {{"{step}", {prefix}_{step}, {len(blocks)}u}},')
        parts.append(f"static const struct ndp_step {prefix}_steps[] = {{\n" + "\n".join(step_rows) + "\n};\n")
        parts.append(_blocks(f"{prefix}_place", [(a, _words(d)) for a, d in program.place]))
        parts.append(_blocks(f"{prefix}_expected", [(a, _words(d)) for a, d in program.expected]))
        rows.append(f'    {{"{program.name}", {program.entry}u, {prefix}_steps, {len(program.steps)}u, '
                    f'{prefix}_place, {len(program.place)}u, {int(program.read)}u, '
                    f'0x{program.trigger_source:x}u, '
                    f'0x{program.trigger_address:x}u, {program.trigger_sectors}u, '
                    f'{prefix}_expected, {len(program.expected)}u}},')
    parts.append("static const struct ndp_kernel ndp_kernels[] = {\n" + "\n".join(rows) + "\n};\n")
    parts.append(f"#define NDP_KERNEL_COUNT {len(programs)}u\n\n#endif\n")
    return "".join(parts)


if __name__ == "__main__":
    import sys
    from matndp.sim.designs import FPGA_ENGINE_SLICE
    sys.stdout.write(firmware_header(FPGA_ENGINE_SLICE))
