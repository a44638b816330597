"""The whole iteration as independent jobs, one per block and slice, run one after another
here or at once on a local process pool or a Ray cluster.

Each kernel launch has its own copy of its operands and each block's share is its own
memory image, so a block needs nothing of another, nor one slice's share of it anything of
another slice's: a job plans its block's share on its slice (the host
model's plan of the iteration, made once per worker process), runs it through the batch
harness from reset, checks it and returns its measurements as plain data. The jobs give
the same results in any order and on any worker; :func:`run_block_jobs` hands them back
in block order.

A job's result is kept in a folder of results as it finishes, under a hash of everything
the job depends on (:attr:`BlockJob.key`): a run that is stopped is resumed by the same
command from the jobs it finished, and the folder goes when the whole run succeeds.
"""

from dataclasses import asdict, dataclass, field
import functools
import hashlib
import json
import os
import pathlib
import shutil
import socket
import time

import numpy as np

import matndp.hw
import matndp.host
import matndp.sim
from matndp.hw.config import NAMED_CONFIGS, SLICE_VARIABLE, slice_config_name
from matndp.sim.designs.files import source_digest
from matndp.sim.flows.cosim.combine import reduction_partials
from matndp.sim.flows.cosim.iteration import IterationPlan, share_block
from matndp.sim.flows.cosim.measure import merged_sweeps, overlap_figures, share_measures
from matndp.sim.flows.cosim.overlap import serial_share
from matndp.sim.flows.cosim.share_run import ShareRun, build_job
from matndp.sim.flows.cosim.setup import CosimSetup
from matndp.sim.runner import SIMULATORS
from matndp.sim.sweep.spec import canonical_json


__all__ = ["BlockJob", "run_block_job", "run_block_jobs", "JobsFailed"]


class JobsFailed(RuntimeError):
    """Jobs of a run that failed: ``failures`` is (where, error) of each, where the job's
    block (``fc2``), or its block and slice (``fc2 on slice 40``) when the run has jobs on
    several slices."""

    def __init__(self, failures):
        self.failures = failures
        super().__init__("; ".join(f"block {where}: {error}" for where, error in failures))


def _graph_digest(graph):
    """A digest of what the host model plans from ``graph``: its tensors and ops."""
    if graph is None:
        return None
    text = repr(([(name, tensor) for name, tensor in sorted(graph.tensors.items())], graph.ops,
                 graph.name, graph.batch))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class BlockJob:
    """Block number ``number`` of the iteration of ``setup`` (its ``block`` field names the
    block, its ``slice_index`` the slice whose share it is), run under ``simulator`` on a harness of ``shape``; ``graph`` stands for the zoo
    model when given; ``slice_config``: the named configuration of the slice, by default
    the one ``$MATNDP_SLICE`` names where the job is made (a worker whose variable names
    another fails the job rather than run it on another slice)."""
    setup: CosimSetup
    number: int
    shape: object
    simulator: str = "verilator"
    graph: object = None
    slice_config: str = field(default_factory=slice_config_name)

    def __post_init__(self):
        if not isinstance(self.setup, CosimSetup):
            raise TypeError(f"a block job's setup is a CosimSetup, not {self.setup!r}")
        if isinstance(self.number, bool) or not isinstance(self.number, int) or self.number < 0:
            raise ValueError(f"a block job's number must be an integer >= 0, not {self.number!r}")
        if self.simulator not in SIMULATORS:
            raise ValueError(f"unknown simulator {self.simulator!r}; known: {', '.join(SIMULATORS)}")
        if self.slice_config not in NAMED_CONFIGS:
            raise ValueError(f"unknown slice configuration {self.slice_config!r}; known: "
                             f"{', '.join(NAMED_CONFIGS)}")

    @property
    def block(self):
        return self.setup.block

    @property
    def slice_index(self):
        return self.setup.slice_index

    @functools.cached_property
    def key(self):
        """The hash of everything the job's result depends on, the project's code included;
        made once, where the job is made, and carried with it to the worker that runs it."""
        text = canonical_json({"setup": self.setup.as_dict(), "number": self.number,
                               "shape": asdict(self.shape), "simulator": self.simulator,
                               "graph": _graph_digest(self.graph), "slice": self.slice_config,
                               "code": _project_code()})
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _project_code():
    return source_digest(tuple(pathlib.Path(package.__file__).parent
                               for package in (matndp.hw, matndp.host, matndp.sim)))


# The host model's plan of the iteration, made once per worker process for its jobs.
_PLANS = {}


def _iteration_plan(job):
    # Every block's share on one slice comes from the same plan; the plan holds the slice
    # whose shares it deals, so a worker given jobs of several slices plans each.
    fields = {name: value for name, value in job.setup.as_dict().items() if name != "block"}
    key = (canonical_json(fields), _graph_digest(job.graph))
    if key not in _PLANS:
        _PLANS.clear()
        _PLANS[key] = IterationPlan(job.setup, job.graph, whole=True)
    return _PLANS[key]


def _plain(value):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _worker():
    return f"{socket.gethostname()}:{os.getpid()}"


def run_block_job(job, directory=None, share=None):
    """Plan (unless ``share``, its :class:`~matndp.sim.flows.cosim.iteration.IterationShare`,
    is given), run and check ``job``; its result as JSON-able data: ``status`` ``"ok"``
    with the block's ``cycles``, ``checks``, ``measures``, ``partials`` (its reductions'
    partial statistics, :func:`~matndp.sim.flows.cosim.combine.reduction_partials`) and
    ``notes``, or ``"failed"``
    with ``error`` (the exception's type and message)."""
    started = time.perf_counter()
    line = {"key": job.key, "block": job.block, "number": job.number, "slice": job.slice_index}
    try:
        here = slice_config_name()
        if here != job.slice_config:
            raise RuntimeError(f"the job is for the {job.slice_config} slice; this worker's "
                               f"{SLICE_VARIABLE} names {here}")
        if share is None:
            share = share_block(_iteration_plan(job), job.block, job.number)
        run, checks = _run_checked(share, job, directory)
        launches = sum(len(stage.launches) for step in share.steps for stage in step.stages)
        measures = share_measures(run)
        serial = serial_share(share)
        if serial is not None:
            # The steps the overlap merged, again one after another: what the merges saved,
            # and the sweeps they took, for the calibration.
            serial_run, _ = _run_checked(serial, job, directory and pathlib.Path(directory) / "serial")
            serial_measures = share_measures(serial_run)
            measures["overlap"] = overlap_figures(measures, serial_measures)
            measures["merged_sweeps"] = merged_sweeps(serial_measures)
        line.update(status="ok", cycles=int(run.result.cycles), steps=len(share.steps),
                    launches=launches, checks=checks, measures=measures,
                    partials=reduction_partials(run), notes=list(share.notes))
    except Exception as error:   # a failing job is a result of the run, named by its block
        line.update(status="failed", error=f"{type(error).__name__}: {error}")
    line.update(wall_s=round(time.perf_counter() - started, 3), worker=_worker())
    # Through JSON, so that a result read back from the folder of results is the same data.
    return json.loads(json.dumps(line, default=_plain))


def _run_checked(share, job, directory):
    """``share`` run through the harness of ``job`` (a :class:`ShareRun`) and its checks'
    summary."""
    from matndp.sim.batch.run import run_batch
    batch_job, keys, dump = build_job(share, shape=job.shape)
    run = ShareRun(share, batch_job, keys, dump, run_batch(batch_job, simulator=job.simulator, directory=directory))
    return run, run.check()


def _run_in_worker(task):
    job, directory = task
    return run_block_job(job, directory)


def _lost(task, reason):
    job, _ = task
    return {"key": job.key, "block": job.block, "number": job.number, "slice": job.slice_index,
            "status": "failed",
            "error": reason, "wall_s": 0.0, "worker": None}


class _Store:
    """The folder of finished jobs' results, one JSON file per job key."""

    def __init__(self, folder):
        self.folder = pathlib.Path(folder)

    def load(self, job):
        path = self.folder / f"{job.key}.json"
        try:
            line = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return line if line.get("key") == job.key and line.get("status") == "ok" else None

    def save(self, line):
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{line['key']}.json"
        partial = path.with_name(path.name + f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(line))
        partial.replace(path)

    def remove(self):
        shutil.rmtree(self.folder, ignore_errors=True)


def run_block_jobs(jobs, *, runner=None, shares=None, directory=None, store=None, progress=None):
    """Run ``jobs`` (:class:`BlockJob` s) and return their results in the order given.
    ``runner``: a :class:`~matndp.sim.sweep.runners.LocalPool` or
    :class:`~matndp.sim.sweep.runners.RayCluster`; None runs them here one after another,
    with ``shares`` (the jobs' planned shares, None for a job its run plans) when given. Each job's harness run goes in
    ``directory``/``NN-block`` (``directory``/``sliceSSS``/``NN-block`` when the jobs are of
    several slices). ``store``: a folder of results from which finished jobs
    are taken and to which each job is added as it finishes (removed when every job
    succeeded). ``progress(line, done, total)`` is told of each job finished (and of each
    taken from ``store``, its line marked ``resumed``). Raises
    :class:`JobsFailed` naming every block that failed, after the others have run."""
    store = _Store(store) if store else None
    results = {}
    for job in jobs:
        kept = store.load(job) if store else None
        if kept is not None:
            results[job.key] = kept
            if progress:
                progress({**kept, "resumed": True}, len(results), len(jobs))
    todo = [job for job in jobs if job.key not in results]
    planned = {job.key: share for job, share in zip(jobs, shares or ()) if share is not None}

    several = len({job.slice_index for job in jobs}) > 1

    def place(job):
        if directory is None:
            return None
        folder = pathlib.Path(directory) / f"slice{job.slice_index:03d}" if several else pathlib.Path(directory)
        return str(folder / f"{job.number:02d}-{job.block}")

    def finished(line):
        results[line["key"]] = line
        if store and line["status"] == "ok":
            store.save(line)
        if progress:
            progress(line, len(results), len(jobs))

    if runner is None:
        for job in todo:
            finished(run_block_job(job, place(job), planned.get(job.key)))
    else:
        tasks = [(job, place(job)) for job in todo]
        for line in runner.run(tasks, function=_run_in_worker, lost=_lost):
            finished(line)
    failures = [(f"{job.block} on slice {job.slice_index}" if several else job.block, results[job.key]["error"])
                for job in jobs if results[job.key]["status"] != "ok"]
    if failures:
        raise JobsFailed(failures)
    if store:
        store.remove()
    return [results[job.key] for job in jobs]
