"""The slice's ``irq`` as an event of the SoC's interrupt controller."""

from migen import Module

from litex.soc.interconnect.csr import AutoCSR
from litex.soc.interconnect.csr_eventmanager import EventManager, EventSourceProcess

__all__ = ["SliceInterrupt"]


class SliceInterrupt(Module, AutoCSR):
    """``irq``'s rising edge sets the event ``done`` pending (the CPU's interrupt while the
    event is enabled); the firmware clears it. The event's status is ``irq`` itself."""

    def __init__(self, irq):
        self.submodules.ev = EventManager()
        self.ev.done = EventSourceProcess(edge="rising", description="the slice raised irq")
        self.ev.finalize()
        self.comb += self.ev.done.trigger.eq(irq)
