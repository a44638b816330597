"""Driver for the register bus of ``hw/csr_bus.py`` (one access at a time)."""

from cocotb.triggers import ReadOnly, RisingEdge


__all__ = ["CSRDriver", "CSRBusError"]


class CSRBusError(RuntimeError):
    pass


class CSRDriver:
    def __init__(self, dut, clock, prefix="csr"):
        self.clock = clock
        self.addr = getattr(dut, f"{prefix}__addr")
        self.w_en = getattr(dut, f"{prefix}__w_en")
        self.w_data = getattr(dut, f"{prefix}__w_data")
        self.r_en = getattr(dut, f"{prefix}__r_en")
        self.ack = getattr(dut, f"{prefix}__ack")
        self.r_data = getattr(dut, f"{prefix}__r_data")
        self.err = getattr(dut, f"{prefix}__err")
        self.w_en.value = 0
        self.r_en.value = 0

    async def _access(self, address, write, value=0):
        self.addr.value = address
        self.w_data.value = value
        self.w_en.value = int(write)
        self.r_en.value = int(not write)
        await RisingEdge(self.clock)
        self.w_en.value = 0
        self.r_en.value = 0
        await ReadOnly()
        if not int(self.ack.value):
            raise CSRBusError(f"no acknowledgement for the access at {address:#x}")
        result = self.r_data.value.to_unsigned(), bool(int(self.err.value))
        await RisingEdge(self.clock)
        return result

    async def read(self, address):
        """Returns ``(value, error)``."""
        return await self._access(address, write=False)

    async def write(self, address, value):
        """Returns the error flag."""
        _, error = await self._access(address, write=True, value=value)
        return error
