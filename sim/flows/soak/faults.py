"""The kernels the soak makes fault, one per way a µthread can be stopped (the causes of
:class:`~matndp.hw.engine.isa.ErrorCause`), and the decoy kernel of the entries armed and
disarmed between chunks. Each faults at a known instruction on its first trigger.
"""

from dataclasses import dataclass

from matndp.hw.engine.isa import ErrorCause
from matndp.host.kernels.assembler import assemble
from matndp.host.kernels.image import KernelImage, Section
from matndp.sim.designs import KERNEL_CONFIG
from matndp.sim.flows.soak.layout import FAILING, HOLE, UNRELATED_REGION


__all__ = ["FaultKernel", "FAULT_KERNELS", "DECOY_KERNEL"]


@dataclass(frozen=True)
class FaultKernel:
    """A kernel that stops with ``cause`` at instruction ``pc`` (from its start) on its
    first trigger; ``triggers``: the most triggering accesses a stage gives its entry."""
    image: KernelImage
    pc: int
    cause: ErrorCause
    triggers: int = 3


def _one(name, instruction):
    return assemble(f".kernel {name}\n.main\n    {instruction}\n    exit\n")


_NOP, _ILLEGAL, _EXIT = 0x01, 0x03, 0x02

FAULT_KERNELS = {
    "illegal_instruction": FaultKernel(
        KernelImage("soak_illegal", (_NOP, _ILLEGAL, _EXIT), {Section.MAIN: 0}), 1,
        ErrorCause.ILLEGAL_INSTRUCTION),
    # OFFSET is below the fault region's size: the address lies below the window.
    "out_of_window": FaultKernel(_one("soak_out_of_window", "vld v1, [OFFSET + 0x20]"), 0,
                                 ErrorCause.OUT_OF_WINDOW),
    "misaligned": FaultKernel(_one("soak_misaligned", f"vld v1, [OFFSET + {UNRELATED_REGION[0] + 4:#x}]"),
                              0, ErrorCause.MISALIGNED),
    "scratchpad_range": FaultKernel(
        _one("soak_scratchpad", f"sld v1, [OFFSET + {KERNEL_CONFIG.engine.scratchpad_bytes:#x}]"), 0,
        ErrorCause.SCRATCHPAD_RANGE),
    "decode_error": FaultKernel(_one("soak_decode_error", f"vld v1, [OFFSET + {HOLE[0]:#x}]"), 0,
                                ErrorCause.MEMORY_ERROR),
    "slave_error": FaultKernel(_one("soak_slave_error", f"vld v1, [OFFSET + {FAILING[0]:#x}]"), 0,
                               ErrorCause.MEMORY_ERROR),
    # One trigger: a second µthread would spin on after the first has stopped the entry.
    "watchdog": FaultKernel(assemble(".kernel soak_watchdog\n.main\nloop: jump loop\n"), 0,
                            ErrorCause.WATCHDOG, triggers=1),
}

DECOY_KERNEL = assemble(".kernel soak_decoy\n.main\n    exit\n")
