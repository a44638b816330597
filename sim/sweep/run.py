"""Running a sweep: expand the specification, skip what the output file already holds, run
the rest on a runner, append each line as it comes, and plot the summary."""

from dataclasses import dataclass
import sys
import time


__all__ = ["SweepSummary", "run_sweep"]


@dataclass
class SweepSummary:
    points: int
    run: int
    skipped: int
    failed: int
    wall_s: float
    output: str
    plot: str | None = None

    def line(self):
        text = (f"sweep: {self.points} points: {self.run} run, {self.skipped} skipped, "
                f"{self.failed} failed in {self.wall_s:.1f} s; wrote {self.output}")
        return text + (f" and {self.plot}" if self.plot else "")


def run_sweep(spec, output, runner, *, progress=True, plot=True, retry_failed=False):
    """Run the points of ``spec`` not yet in ``output`` on ``runner``; returns a
    :class:`SweepSummary`. With ``retry_failed``, points whose line in ``output`` is a
    failure run again (their old lines are removed first)."""
    from matndp.sim.sweep.results import ResultFile
    started = time.perf_counter()
    points = list(spec.points())
    store = ResultFile(output)
    earlier = store.load()
    if retry_failed:
        failed = {line["key"] for line in earlier if line["status"] == "failed"}
        if failed:
            earlier = [line for line in earlier if line["key"] not in failed]
            store.rewrite(earlier)
    finished = {line["key"]: line for line in earlier}
    todo = [point for point in points if point.key not in finished]
    lines = {key: finished[key] for key in (point.key for point in points) if key in finished}
    failed_count = 0
    bar = _progress(len(todo), progress)
    with store:
        for line in runner.run(todo) if todo else ():
            store.append(line)
            lines[line["key"]] = line
            failed_count += line["status"] == "failed"
            bar.update(1)
    bar.close()
    summary = SweepSummary(len(points), len(todo), len(points) - len(todo), failed_count,
                           time.perf_counter() - started, str(output))
    if plot:
        from matndp.sim.sweep.plots import plot_summary, summary_plot_path
        ordered = [lines[point.key] for point in points if point.key in lines]
        summary.plot = str(plot_summary(spec, ordered, summary_plot_path(output)))
        summary.wall_s = time.perf_counter() - started
    return summary


class _Counter:
    """A plain counter on standard error, for when tqdm is not installed."""

    def __init__(self, total):
        self.total, self.done = total, 0

    def update(self, count):
        self.done += count
        print(f"\rsweep: {self.done}/{self.total} points", end="", file=sys.stderr, flush=True)

    def close(self):
        if self.done:
            print(file=sys.stderr)


class _Silent:
    def update(self, count):
        pass

    def close(self):
        pass


def _progress(total, shown):
    if not shown or not total:
        return _Silent()
    try:
        from tqdm import tqdm
    except ImportError:
        return _Counter(total)
    return tqdm(total=total, desc="sweep", unit="point", file=sys.stderr)
