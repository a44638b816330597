"""The slice's irq as an interrupt event: a rising irq sets the event pending, which raises
the CPU's line while enabled and stays until the firmware clears it, all through the CSR
bank the SoC puts the event's registers in (migen's simulator)."""

from migen import Module, Signal
from migen.sim import run_simulation

from litex.soc.interconnect.csr_bus import CSRBank

from matndp.sim.soc.interrupt import SliceInterrupt


class _Bench(Module):
    def __init__(self):
        self.irq = Signal()
        self.submodules.interrupt = SliceInterrupt(self.irq)
        self.submodules.bank = CSRBank(self.interrupt.get_csrs())
        self.address = {register.name: index
                        for index, register in enumerate(self.interrupt.get_csrs())}

    def write(self, name, value):
        # One bus write, then the cycles the bank and the register take to act on it.
        bus = self.bank.bus
        yield bus.adr.eq(self.address[name])
        yield bus.dat_w.eq(value)
        yield bus.we.eq(1)
        yield
        yield bus.we.eq(0)
        for _ in range(3):
            yield


def test_a_rising_irq_interrupts_once_until_cleared_and_a_held_one_not_again():
    bench = _Bench()
    line = bench.interrupt.ev.irq
    seen = []

    def process():
        yield from bench.write("ev_enable", 1)
        for level in (0, 1, 1, 1):
            yield bench.irq.eq(level)
            yield
            yield
            seen.append((yield line))
        yield from bench.write("ev_pending", 1)
        seen.append((yield line))           # cleared, irq still high: no new edge
        yield bench.irq.eq(0)
        yield
        yield bench.irq.eq(1)
        yield
        yield
        seen.append((yield line))           # the next rise
        yield from bench.write("ev_enable", 0)
        seen.append((yield line))           # pending, but masked

    run_simulation(bench, process())
    assert seen == [0, 1, 1, 1, 0, 1, 0]
