"""Lets the synchronous host runtime drive the simulated register bus.

Runtime calls are made from a cocotb ``bridge`` thread; each register access resumes the
simulation until the :class:`~sim.drivers.csr.CSRDriver` completes it, and a block of
words (a window's contents) is done in one resumption.
"""

from cocotb.task import bridge, resume

from matndp.host.csr_bus import CSRAccessError, CSRBus


__all__ = ["SimulatedCSRBus", "call_runtime"]


class SimulatedCSRBus(CSRBus):
    def __init__(self, driver):
        self.driver = driver
        self._read = resume(driver.read)
        self._write = resume(driver.write)
        self._read_block = resume(self._read_words)
        self._write_block = resume(self._write_words)

    def read(self, address):
        value, error = self._read(address)
        if error:
            raise CSRAccessError(f"bus error reading {address:#x}")
        return value

    def write(self, address, value):
        if self._write(address, value):
            raise CSRAccessError(f"bus error writing {value:#x} to {address:#x}")

    def read_words(self, address, count):
        words, failed = self._read_block(address, count)
        if failed is not None:
            raise CSRAccessError(f"bus error reading {failed:#x}")
        return words

    def write_words(self, address, words):
        failed = self._write_block(address, words)
        if failed is not None:
            raise CSRAccessError(f"bus error writing {failed[1]:#x} to {failed[0]:#x}")

    async def _read_words(self, address, count):
        """(the words read, the address of the first error or None)."""
        words = []
        for index in range(count):
            value, error = await self.driver.read(address + 4 * index)
            if error:
                return words, address + 4 * index
            words.append(value)
        return words, None

    async def _write_words(self, address, words):
        """(address, value) of the first write that failed, or None."""
        for index, word in enumerate(words):
            if await self.driver.write(address + 4 * index, word):
                return address + 4 * index, word
        return None


async def call_runtime(function, *args, **kwargs):
    """Run a blocking runtime call while the simulation carries on."""
    return await bridge(function)(*args, **kwargs)
