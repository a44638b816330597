"""Run the soak: rounds drawn from the seed (:mod:`.scenario`), each run through the batch
harness and checked (:mod:`.check`) until the cycles asked for have run; a failure leaves
its run's folder and a reproducer file naming the seed, the round and the first wrong
record.
"""

from dataclasses import asdict, dataclass, field
import json
import pathlib
import resource
import shutil
import time

from matndp.sim.batch.run import run_batch
from matndp.sim.flows.soak.check import SoakFailure, check_round
from matndp.sim.flows.soak.scenario import draw_round
from matndp.sim.flows.soak.settings import SoakSettings


__all__ = ["SoakReport", "run_soak", "REPRODUCER_FILE"]


REPRODUCER_FILE = "reproducer.json"


@dataclass
class SoakReport:
    """What a soak ran and found. ``failure``: the reproducer's record, or None."""
    seed: int
    cycles_asked: int
    rounds: int = 0
    stages: int = 0
    cycles: int = 0
    gpu_requests: int = 0
    gpu_reads_answered: int = 0
    engine_requests: int = 0
    launches: int = 0
    faults: dict = field(default_factory=dict)
    decoys: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    phase_wall_s: float = 0.0
    failure: dict | None = None

    @property
    def passed(self):
        return self.failure is None

    @property
    def cycles_per_second(self):
        """Cycles per wall second of the whole soak: drawing, running and checking."""
        return self.cycles / self.wall_s if self.wall_s else 0.0

    @property
    def cycles_per_cpu_second(self):
        """Cycles per CPU second of the soak and the simulators it ran (the machines are
        shared: this is the rate to compare)."""
        return self.cycles / self.cpu_s if self.cpu_s else 0.0

    def as_dict(self):
        values = asdict(self)
        values["cycles_per_second"] = round(self.cycles_per_second)
        values["cycles_per_cpu_second"] = round(self.cycles_per_cpu_second)
        values["passed"] = self.passed
        return values


def run_soak(seed, cycles, *, settings=SoakSettings(), directory, rounds=None, keep=False,
             simulator="verilator", progress=None):
    """Soak the slice with seed ``seed`` for at least ``cycles`` cycles (whole rounds), or
    only the rounds ``rounds`` (an iterable of round numbers, to replay a failure). Runs go
    into ``directory`` (``round-<n>``), removed once checked unless ``keep``; a failure
    writes ``directory/reproducer.json`` and ends the soak. ``progress(text)`` hears of
    each round. Returns a :class:`SoakReport`."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    report = SoakReport(seed, cycles)
    started = time.perf_counter()
    cpu_started = _cpu_seconds()
    numbers = iter(rounds) if rounds is not None else _forever()
    for number in numbers:
        if rounds is None and report.cycles >= cycles:
            break
        soak_round = draw_round(seed, number, settings)
        folder = directory / f"round-{number}"
        if folder.exists():
            shutil.rmtree(folder)
        result = run_batch(soak_round.job, simulator=simulator, directory=folder)
        try:
            summary = check_round(soak_round, result)
        except SoakFailure as failure:
            report.failure = dict(failure.record, message=str(failure), cycles_asked=cycles,
                                  settings=asdict(settings), run_directory=str(folder),
                                  reproducer=str(directory / REPRODUCER_FILE),
                                  replay=f"matndp soak --seed {seed} --round {number}")
            (directory / REPRODUCER_FILE).write_text(json.dumps(report.failure, indent=2) + "\n")
            break
        finally:
            report.wall_s = time.perf_counter() - started
            report.cpu_s = _cpu_seconds() - cpu_started
        report.rounds += 1
        report.stages += summary["stages"]
        report.cycles += summary["cycles"]
        report.gpu_requests += summary["gpu_requests"]
        report.gpu_reads_answered += summary["gpu_reads_answered"]
        report.engine_requests += summary["engine_requests"]
        report.launches += summary["launches"]
        report.decoys += summary["decoys"]
        for kind, count in summary["faults"].items():
            report.faults[kind] = report.faults.get(kind, 0) + count
        report.phase_wall_s += result.phase_wall_s
        if not keep:
            shutil.rmtree(folder)
        if progress is not None:
            progress(f"soak: round {number} passed, {report.cycles:,} of {cycles:,} cycles")
    report.wall_s = time.perf_counter() - started
    report.cpu_s = _cpu_seconds() - cpu_started
    return report


def _cpu_seconds():
    """CPU time of this process and of the simulators it has waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _forever():
    number = 0
    while True:
        yield number
        number += 1
