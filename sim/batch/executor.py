"""The testbench side of a batch job (:mod:`matndp.sim.batch.job`): reads ``job.pickle``, carries out its
steps in order and writes ``results.pickle``. The runtime steps are the same in every
testbench; :class:`JobExecutor` subclasses say how loads, phases and dumps are done (by the
harness, or cycle by cycle in Python).
"""

import pathlib
import pickle
import time

from matndp.host.runtime import NDPRuntime
from matndp.sim.drivers.csr_adapter import SimulatedCSRBus, call_runtime
from matndp.sim.drivers.csr import CSRDriver
from matndp.sim.batch.job import JOB_FILE, RESULTS_FILE


__all__ = ["JobExecutor", "RecordingCSRDriver"]


CLOCK_NS = 10


def _apply(function, runtime):
    return function(runtime)


class RecordingCSRDriver(CSRDriver):
    """A :class:`CSRDriver` that keeps every access it made, in order: ``("read",
    address)`` or ``("write", address, value)``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.accesses = []

    async def read(self, address):
        self.accesses.append(("read", address))
        return await super().read(address)

    async def write(self, address, value):
        self.accesses.append(("write", address, value))
        return await super().write(address, value)


class JobExecutor:
    """Carries out the job in ``directory`` on ``dut``."""

    def __init__(self, dut, directory):
        self.dut = dut
        self.directory = pathlib.Path(directory)
        job = pickle.loads((self.directory / JOB_FILE).read_bytes())
        self.config = job["config"]
        self.shape = job["shape"]
        self.timing = job["timing"]
        self.logs = job["logs"]
        self.steps = job["steps"]
        self.results = {}
        self.csr = RecordingCSRDriver(dut, dut.clk)
        self.runtime = NDPRuntime(SimulatedCSRBus(self.csr), self.config)

    def file(self, key, kind):
        return self.directory / f"{kind}-{key}.hex"

    async def execute(self):
        started = time.perf_counter()
        await self.start()
        for step in self.steps:
            kind = step["kind"]
            if kind == "runtime":
                self.results[step["key"]] = await call_runtime(_apply, step["function"], self.runtime)
            elif kind == "load":
                self.results[step["key"]] = {"cycle": await self.load(step)}
            elif kind == "run":
                begun, cpu_begun = time.perf_counter(), time.process_time()
                measured = await self.run(step)
                measured["wall_s"] = time.perf_counter() - begun
                measured["cpu_s"] = time.process_time() - cpu_begun
                self.results[step["key"]] = measured
            elif kind == "timing":
                await self.retime(step)
            elif kind == "dump":
                file, cycle = await self.dump(step)
                self.results[step["key"]] = {"cycle": cycle, "file": file}
            else:
                raise ValueError(f"unknown step kind {kind!r}")
        await self.finish()
        self.results["wall_s"] = time.perf_counter() - started
        (self.directory / RESULTS_FILE).write_bytes(pickle.dumps(self.results))

    # --- per testbench --------------------------------------------------------------------------
    async def start(self):
        raise NotImplementedError

    def cycle(self):
        """The current cycle, on the clock the logs are stamped with."""
        raise NotImplementedError

    async def load(self, step):
        """Returns the first cycle whose memory requests see what was loaded."""
        raise NotImplementedError

    async def run(self, step):
        """Returns the phase's measurements: ``start_cycle``, ``end_cycle``, ``cycles``,
        ``reason`` (``"until"`` or ``"budget"``)."""
        raise NotImplementedError

    async def retime(self, step):
        """Sets the timing ports of ``step`` for the phases that follow."""
        raise NotImplementedError(f"{type(self).__name__} keeps one timing for the whole run")

    async def dump(self, step):
        """Writes the image; returns the file's name in the job directory and the first
        cycle whose memory requests are not in it."""
        raise NotImplementedError

    async def finish(self):
        pass
