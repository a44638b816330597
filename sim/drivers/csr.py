"""Drivers for the register bus of ``hw/bus/signature.py`` (one access at a time, answered
one or more cycles after the strobe): the host side (:class:`CSRDriver`) and a memory behind
a window (:class:`CSRTarget`)."""

import random

from cocotb.triggers import ReadOnly, RisingEdge

from matndp.sim.drivers.stream import CachedWrite, Participant


__all__ = ["CSRDriver", "CSRBusError", "CSRTarget"]


class CSRBusError(RuntimeError):
    pass


def _bus_signals(dut, prefix):
    return {name: getattr(dut, f"{prefix}__{name}")
            for name in ("addr", "w_en", "w_data", "r_en", "ack", "r_data", "err")}


class CSRDriver:
    """Issues one access at a time and waits for its acknowledgement, at most ``timeout``
    cycles after the strobe; an access left unanswered raises :class:`CSRBusError` naming
    it, and the bus is then in an unknown state."""

    def __init__(self, dut, clock, prefix="csr", *, timeout=64):
        if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout < 1:
            raise ValueError(f"CSRDriver: timeout must be a positive number of cycles, not {timeout!r}")
        self.clock = clock
        self.timeout = timeout
        for name, handle in _bus_signals(dut, prefix).items():
            setattr(self, name, handle)
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
        for _ in range(self.timeout):
            await ReadOnly()
            if int(self.ack.value):
                result = self.r_data.value.to_unsigned(), bool(int(self.err.value))
                await RisingEdge(self.clock)
                return result
            await RisingEdge(self.clock)
        kind = f"write of {value:#x} to" if write else "read of"
        raise CSRBusError(f"no acknowledgement within {self.timeout} cycles for the {kind} "
                          f"{address:#x}")

    async def read(self, address):
        """Returns ``(value, error)``."""
        return await self._access(address, write=False)

    async def write(self, address, value):
        """Returns the error flag."""
        _, error = await self._access(address, write=True, value=value)
        return error


class CSRTarget(Participant):
    """A memory of ``size`` bytes behind a window's bus (a :class:`~matndp.sim.drivers.stream.CycleLoop`
    participant): answers each access after a wait drawn from ``latency`` (a ``(min, max)``
    range of cycles, at least 1), with ``err`` for a misaligned address; ``silent`` makes it
    never answer. ``memory`` holds the bytes (little-endian words); ``accesses`` records
    ``(cycle, write, offset)`` of each access at its strobe, ``waits`` the cycles each answer
    was given after."""

    def __init__(self, dut, prefix, size, *, latency=(1, 1), seed=0):
        low, high = latency
        if not 1 <= low <= high:
            raise ValueError(f"CSRTarget: latency must be a range of at least 1 cycle, not {latency!r}")
        self.latency = latency
        self.random = random.Random(seed)
        self.memory = bytearray(size)
        self.accesses = []
        self.waits = []
        self.silent = False
        signals = _bus_signals(dut, prefix)
        self._addr, self._w_en, self._w_data, self._r_en = (
            signals[name] for name in ("addr", "w_en", "w_data", "r_en"))
        self.ack = CachedWrite(signals["ack"])
        self.r_data = CachedWrite(signals["r_data"])
        self.err = CachedWrite(signals["err"])
        self._pending = None        # [write, offset, data, cycles until the answer]

    def drive(self):
        pending = self._pending
        if pending is not None:
            pending[-1] -= 1
        if pending is None or pending[-1] > 0:
            self.ack.set(0)
            self.err.set(0)
            return
        self._pending = None
        write, offset, data, _ = pending
        refused = offset % 4 != 0 or offset + 4 > len(self.memory)
        self.ack.set(1)
        self.err.set(int(refused))
        if refused:
            self.r_data.set(0)
        elif write:
            self.memory[offset:offset + 4] = data.to_bytes(4, "little")
        else:
            self.r_data.set(int.from_bytes(self.memory[offset:offset + 4], "little"))

    def sample(self, now):
        write, read = int(self._w_en.value), int(self._r_en.value)
        if not (write or read):
            return
        if self._pending is not None:
            raise AssertionError(f"a new access at cycle {now} while the last is unanswered")
        offset = self._addr.value.to_unsigned()
        self.accesses.append((now, bool(write), offset))
        if not self.silent:
            wait = self.random.randint(*self.latency)
            self.waits.append(wait)
            self._pending = [bool(write), offset, self._w_data.value.to_unsigned(), wait]

    def reset(self, now):
        # A reset abandons the access in progress, as the bus's initiator does.
        self._pending = None
