"""Lets the synchronous host runtime drive the simulated register bus.

Runtime calls are made from a cocotb ``bridge`` thread; each register access resumes the
simulation until the :class:`~sim.drivers.csr.CSRDriver` completes it.
"""

from cocotb.task import bridge, resume

from matndp.host.csr_bus import CSRAccessError, CSRBus


__all__ = ["SimulatedCSRBus", "call_runtime"]


class SimulatedCSRBus(CSRBus):
    def __init__(self, driver):
        self.driver = driver
        self._read = resume(driver.read)
        self._write = resume(driver.write)

    def read(self, address):
        value, error = self._read(address)
        if error:
            raise CSRAccessError(f"bus error reading {address:#x}")
        return value

    def write(self, address, value):
        if self._write(address, value):
            raise CSRAccessError(f"bus error writing {value:#x} to {address:#x}")


async def call_runtime(function, *args, **kwargs):
    """Run a blocking runtime call while the simulation carries on."""
    return await bridge(function)(*args, **kwargs)
