"""Where the points of a sweep run: a local process pool, or a Ray cluster.

A runner has ``run(points)``, an iterator of result lines in the order points finish.
Both run :func:`run_point` on each point (or the ``function`` given, with ``lost`` making
the line of a point whose worker died), so a point gives the same line under either
(apart from :data:`matndp.sim.sweep.results.TIMING_FIELDS`). A point that raises becomes a failed line in
the worker; a worker that dies takes its point with it as a failed line.
"""

import multiprocessing
import os
import socket
import time
from concurrent.futures import ProcessPoolExecutor, as_completed


__all__ = ["run_point", "LocalPool", "RayCluster", "RUNNER_HINT"]


RUNNER_HINT = "a local process pool (--jobs N), or a Ray cluster (--ray ADDRESS|auto|local)"


def _worker():
    return f"{socket.gethostname()}:{os.getpid()}"


def run_point(point):
    """The result line of ``point``, run here."""
    from matndp.sim.sweep.registry import POINT_FUNCTIONS
    from matndp.sim.sweep.results import result_line
    started = time.perf_counter()
    try:
        results = POINT_FUNCTIONS[point.function](point.config, point.seed)
    except Exception as error:   # a failing point is a result of the sweep, not its end
        return result_line(point, error=f"{type(error).__name__}: {error}",
                           wall_s=time.perf_counter() - started, worker=_worker())
    return result_line(point, results=results, wall_s=time.perf_counter() - started,
                       worker=_worker())


def _lost(point, reason):
    from matndp.sim.sweep.results import result_line
    return result_line(point, error=reason, wall_s=0.0, worker=None)


class LocalPool:
    """``jobs`` worker processes on this machine. Workers start from a fork server that
    has imported the point functions once."""

    def __init__(self, jobs=2):
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ValueError(f"jobs must be an integer >= 1, not {jobs!r}")
        self.jobs = jobs

    def describe(self):
        return f"local pool of {self.jobs}"

    def run(self, points, function=run_point, lost=_lost):
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([function.__module__ if function is not run_point
                                        else "matndp.sim.sweep.registry"])
        with ProcessPoolExecutor(max_workers=self.jobs, mp_context=context) as pool:
            futures = {pool.submit(function, point): point for point in points}
            try:
                for future in as_completed(futures):
                    try:
                        yield future.result()
                    except Exception as error:    # the worker process died
                        yield lost(futures[future], f"worker lost: {type(error).__name__}: {error}")
            finally:
                for future in futures:
                    future.cancel()


class RayCluster:
    """The Ray cluster at ``address`` (``auto``: the one this machine belongs to), or
    with ``address="local"`` a Ray instance started here with ``jobs`` CPUs. If Ray is
    already initialized in this process, that instance is used and left running."""

    def __init__(self, address="auto", jobs=2):
        if not isinstance(address, str) or not address:
            raise ValueError(f"Ray address must be ADDRESS, auto or local, not {address!r}")
        self.address = address
        self.jobs = jobs

    def describe(self):
        return f"Ray cluster {self.address}"

    @staticmethod
    def _ray():
        try:
            import ray
        except ImportError as error:
            raise ValueError(f"running on Ray needs the ray package ({error}); "
                             f"`make setup` installs it") from None
        return ray

    def check(self):
        """Refuse at once what cannot run: no ray package, or an address that is not
        HOST:PORT, auto or local, or a head that refuses connections."""
        self._ray()
        self._check_reachable()

    def _check_reachable(self):
        """Ray retries an unreachable head for minutes; a head address that refuses
        connections is refused here at once."""
        host, colon, port = self.address.rpartition(":")
        if self.address in ("auto", "local") or "://" in self.address or not colon:
            return
        if not port.isdigit():
            raise ValueError(f"Ray address {self.address!r} is not HOST:PORT, auto or local")
        try:
            socket.create_connection((host, int(port)), timeout=5).close()
        except OSError as error:
            raise ValueError(f"no Ray cluster at {self.address}: {error}") from None

    def run(self, points, function=run_point, lost=_lost):
        import logging
        ray = self._ray()
        started_here = not ray.is_initialized()
        if started_here:
            self._check_reachable()
            quiet = {"logging_level": logging.ERROR, "log_to_driver": False,
                     "configure_logging": True}
            try:
                if self.address == "local":
                    ray.init(num_cpus=self.jobs, include_dashboard=False, **quiet)
                else:
                    ray.init(address=self.address, **quiet)
            except ConnectionError as error:
                raise ValueError(f"no Ray cluster at {self.address!r}: {error}") from None
        try:
            remote = ray.remote(num_cpus=1, max_retries=0)(function)
            pending = {remote.remote(point): point for point in points}
            remaining = list(pending)
            while remaining:
                # In batches, so that a thousand short points do not cost a thousand waits.
                done, remaining = ray.wait(remaining, num_returns=min(len(remaining), 32),
                                           timeout=0.2)
                for reference in done:
                    point = pending.pop(reference)
                    try:
                        yield ray.get(reference)
                    except Exception as error:   # the worker died, or the task was lost
                        yield lost(point, f"worker lost: {type(error).__name__}: {error}")
        finally:
            if started_here:
                ray.shutdown()
