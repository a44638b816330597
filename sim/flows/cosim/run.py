"""``make sim``'s co-simulation: one slice's share of a training block, from the host
model's plan and tiering run, through the slice RTL in the batch harness, checked, with
its report; optionally the waveform of a window of its steps; and the same on other slices,
or the whole iteration, as jobs."""

from dataclasses import replace
import pathlib
import time

from matndp.host.output import whole_folder

from matndp.hw.config import slice_config_name
from matndp.sim.batch.run import prepare_batch
from matndp.sim.designs import KERNEL_CONFIG, ndp_slice_verilog

from matndp.sim.flows.cosim.iteration import share_blocks, share_iteration
from matndp.sim.flows.cosim.report import FILES, write_iteration_report, write_report
from matndp.sim.flows.cosim.overlap import serial_share
from matndp.sim.flows.cosim.progress import JobProgress
from matndp.sim.flows.cosim.share_run import run_share, shape_for
from matndp.sim.flows.cosim.shard import BlockJob, run_block_jobs
from matndp.sim.flows.cosim.setup import CosimSetup
from matndp.sim.flows.cosim.waveform import TRACE_SCOPES, write_window


__all__ = ["run_cosim", "run_cosim_iteration", "jobs_folder", "DEFAULT_WINDOW"]


# The waveform's steps by default: the first GPU op with the kernel riding on its writes,
# and the sweep of that kernel's second phase.
DEFAULT_WINDOW = (0, 2)


def run_cosim(output, setup=None, *, share=None, simulator="verilator", window=DEFAULT_WINDOW,
              progress=print, slices=None, runner=None, job_progress=None, status=None):
    """Run ``setup`` (a :class:`~matndp.sim.flows.cosim.setup.CosimSetup`, default ``make sim``'s; or ``share``,
    its :class:`~matndp.sim.flows.cosim.iteration.IterationShare` planned already) into ``output``: the files of :data:`~matndp.sim.flows.cosim.report.FILES` and, when ``window`` (first step, end
    step) is given, ``window.fst`` and ``window.gtkw``. Made in a folder beside ``output``
    and moved into place at the end, so a failed run leaves ``output`` as it was. Returns
    the report; raises :class:`~matndp.sim.batch.check.CheckFailed` when a check fails.
    With a window, the whole run and the window's run share one traced build.

    ``slices``: the slice indices to simulate (:func:`~matndp.sim.flows.cosim.interleave.spread_slices`;
    default the share's own), the share's slice first: the others run after it as jobs (on
    ``runner`` as :func:`run_cosim_iteration` runs its jobs, kept in :func:`jobs_folder`
    until all succeed; their progress, ``job_progress`` or by default a
    :class:`~matndp.sim.flows.cosim.progress.JobProgress`, written to ``status``, default
    standard error) and the report sets them beside it. Raises
    :class:`~matndp.sim.flows.cosim.shard.JobsFailed` naming the slices whose job failed."""
    output = pathlib.Path(output)
    started = time.monotonic()
    if share is None:
        setup = setup or CosimSetup()
        progress(f"sim: planning {setup.model} {setup.block} at batch {setup.batch} on {setup.gpu} "
                 f"(offload plan, tiering run with {setup.policy})")
        share = share_iteration(setup)
    slices = _slices_from(slices, share)
    if window and not window[1] <= len(share.steps):
        raise ValueError(f"--window {window[0]}:{window[1]}: the co-simulation has "
                         f"{len(share.steps)} steps")
    requests = sum(len(stage) for step in share.steps for stage in step.stages)
    progress(f"sim: exporting the slice with its engine (the {slice_config_name()} configuration)")
    ndp_slice_verilog(KERNEL_CONFIG)
    which = (f"one of {share.slices} slices" if len(slices) == 1 else
             f"slice {share.setup.slice_index} of {share.slices} (then {len(slices) - 1} more)")
    progress(f"sim: co-simulation: {len(share.steps)} steps, {requests:,} GPU-port requests "
             f"for {which}, through the batch harness under {simulator}")
    with whole_folder(output) as work:
        run = run_share(share, simulator=simulator, directory=work / "run", traceable=bool(window),
                        trace_scopes=TRACE_SCOPES)
        progress(f"sim: {run.result.cycles:,} cycles run in {run.result.results['wall_s']:.0f} s; "
                 f"checking every output against the golden models and the instruction-set "
                 f"simulator")
        checks = run.check()
        serial = _serial_run(share, work, simulator, progress, traceable=bool(window))
        others = _other_slices(share, slices, simulator, runner, work, output, progress,
                               job_progress, status)
        files = {}
        if window:
            progress(f"sim: the waveform of steps {window[0]}..{window[1] - 1}, run again on the "
                     f"same build, traced")
            files = write_window(share, window, work, simulator=simulator, final=output)
        progress("sim: the co-simulation's report, figures and calibration")
        return write_report(run, work, checks=checks, wall_s=time.monotonic() - started,
                            extra_files=files, other_slices=others, serial=serial)


def _serial_run(share, work, simulator, progress, traceable):
    """The steps the overlap merged, run again one after another (checked as every run
    is): what the merges saved. On the build the run itself took (``traceable``)."""
    serial = serial_share(share)
    if serial is None:
        return None
    progress(f"sim: the {len(serial.steps)} merged steps again one after another, for the cycles "
             f"the overlap saved")
    run = run_share(serial, simulator=simulator, directory=work / "serial_run", traceable=traceable,
                    trace_scopes=TRACE_SCOPES)
    run.check()
    return run


def _other_slices(share, slices, simulator, runner, work, output, progress, job_progress, status):
    """The job results of ``share``'s block on the ``slices`` after the first (its own)."""
    others = slices[1:]
    if not others:
        return []
    shape = shape_for([share])
    jobs = [BlockJob(replace(share.setup, slice_index=other), 0, shape, simulator, share.graph)
            for other in others]
    where = runner.describe() if runner else "one after another here"
    progress(f"sim: the same block on {len(others)} more of the {share.slices} slices, as many jobs ({where})")
    if runner is not None:
        prepare_batch(KERNEL_CONFIG, shape, simulator=simulator)
    requests = sum(len(stage) for step in share.steps for stage in step.stages)
    if job_progress is None:
        job_progress = JobProgress(len(jobs), weights={job.key: requests for job in jobs}, stream=status)
    return run_block_jobs(jobs, runner=runner, directory=work / "slices", store=jobs_folder(output),
                          progress=job_progress)




def run_cosim_iteration(output, setup=None, *, shares=None, graph=None, simulator="verilator",
                        runner=None, progress=print, job_progress=None, slices=None, status=None):
    """The whole iteration of ``setup`` (or its ``shares``, from
    :func:`~matndp.sim.flows.cosim.iteration.share_blocks`; ``graph`` standing for the zoo
    model when they were planned from one), a job per block, into ``output``
    (``report.md``, ``report.json``, ``calibration.json``); returns the report. ``runner``:
    a :class:`~matndp.sim.sweep.runners.LocalPool` or
    :class:`~matndp.sim.sweep.runners.RayCluster` running the jobs at once (each worker
    plans its blocks again); None runs them here one after another. Finished jobs are kept
    beside ``output`` (``cosim.jobs/``) until the run succeeds, so the same command
    resumes a stopped run; ``job_progress`` (default: a
    :class:`~matndp.sim.flows.cosim.progress.JobProgress` on ``status``, default standard
    error) is told of each job. ``slices``: the slice indices to simulate (default the shares' own), the
    shares' first: a job per block and slice, the other slices' shares planned by the jobs.
    Raises :class:`~matndp.sim.flows.cosim.shard.JobsFailed` naming the blocks (and slices)
    that failed."""
    output = pathlib.Path(output)
    started = time.monotonic()
    if shares is None:
        shares = share_blocks(setup or CosimSetup(), graph)
    shape = shape_for(shares)
    slices = _slices_from(slices, shares[0])
    jobs = [BlockJob(replace(share.setup, slice_index=index), number, shape, simulator, graph)
            for index in slices for number, share in enumerate(shares)]
    # The other slices' shares are planned by their jobs; their sizes are near the first's.
    counts = [sum(len(stage) for step in share.steps for stage in step.stages) for share in shares]
    requests = {job.key: counts[job.number] for job in jobs}
    where = runner.describe() if runner else "one after another here"
    on = (f"one of {shares[0].slices} slices" if len(slices) == 1 else
          f"each of {len(slices)} of the {shares[0].slices} slices")
    progress(f"sim: the whole iteration, {len(shares)} blocks x {len(slices)} slice(s) as "
             f"{len(jobs)} jobs ({where}), {sum(counts):,} GPU-port requests for {on}; "
             f"running under {simulator}")
    if runner is not None:
        # Made once here, not by every worker as its first job starts.
        prepare_batch(KERNEL_CONFIG, shape, simulator=simulator)
    if job_progress is None:
        job_progress = JobProgress(len(jobs), weights=requests, stream=status)
    with whole_folder(output) as work:
        # Here, the first slice's jobs run the shares planned already.
        planned = None if runner else shares + [None] * (len(jobs) - len(shares))
        results = run_block_jobs(jobs, runner=runner, shares=planned, directory=work / "run",
                                 store=jobs_folder(output), progress=job_progress)
        return write_iteration_report(results, work, share=shares[0], wall_s=time.monotonic() - started)


def _slices_from(slices, share):
    """The slice indices to simulate (default ``share``'s own), refused unless ``share``'s
    slice is the first."""
    slices = list(slices or (share.setup.slice_index,))
    if slices[0] != share.setup.slice_index:
        raise ValueError(f"the slices to simulate start with the share's own, "
                         f"{share.setup.slice_index}, not {slices[0]}")
    return slices


def jobs_folder(output):
    """Where a whole-iteration run into ``output`` keeps its finished jobs until it succeeds."""
    output = pathlib.Path(output)
    return output.with_name(output.name + ".jobs")


def report_path(output):
    return pathlib.Path(output) / FILES["report_markdown"]
