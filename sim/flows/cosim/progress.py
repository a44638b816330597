"""Progress of a long co-simulation on standard error: jobs done of the total, simulated
cycles per second of wall time, and the time left at that pace — one line refreshed in
place on a terminal, a line per job otherwise (a log keeps every one)."""

import sys
import time


__all__ = ["JobProgress"]


def _duration(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds // 60 % 60:02d} min"


class JobProgress:
    """Told of each finished job (``progress(result, done, total)``, as
    :func:`~matndp.sim.flows.cosim.shard.run_block_jobs` does), writes the run's progress
    to ``stream``. ``weights`` (by job key, e.g. the jobs' planned requests) apportion the
    time left; without them each job counts the same. Jobs taken from an earlier run count
    as done but not towards the pace."""

    def __init__(self, total, *, weights=None, stream=None, clock=time.monotonic):
        self.stream = stream or sys.stderr
        self.total = total
        self.weights = weights
        self.clock = clock
        self.started = clock()
        self.cycles = 0
        self.weight_run = 0.0
        self.weight_done = 0.0
        self.resumed = 0
        self.refreshing = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.width = 0

    def _weight(self, result):
        return self.weights.get(result["key"], 1) if self.weights else 1

    def __call__(self, result, done, total):
        weight = self._weight(result)
        self.weight_done += weight
        if result.get("wall_s") is None or result.get("resumed"):
            self.resumed += 1
        else:
            self.cycles += result.get("cycles", 0)
            self.weight_run += weight
        elapsed = max(self.clock() - self.started, 1e-9)
        whole = sum(self.weights.values()) if self.weights else total
        left = (whole - self.weight_done) * elapsed / self.weight_run if self.weight_run else None
        state = "failed" if result["status"] != "ok" else "done"
        # Slice 0 is every run's first; another slice is named.
        where = result["block"] + (f" on slice {result['slice']}" if result.get("slice") else "")
        line = (f"cosim: {done}/{total} jobs ({where} {state}), "
                f"{self.cycles / elapsed / 1e3:,.0f} k simulated cycles/s, "
                + (f"about {_duration(left)} left" if left is not None and done < total else
                   f"{_duration(elapsed)} so far")
                + (f"; {self.resumed} from an earlier run" if self.resumed else ""))
        if self.refreshing:
            self.stream.write("\r" + line.ljust(self.width) + ("\n" if done == total else ""))
            self.width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
