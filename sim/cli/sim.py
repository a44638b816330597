"""``matndp sim``: DNN training traffic through the RTL — the trigger's layer run, the
co-simulation of a training block or iteration, the engine's layer run, and NDPXNet."""

import argparse
import contextlib
import os
import pathlib
import shutil
import sys

from matndp.host.gpu import PRESETS
from matndp.host.tier.policies import TIER_POLICIES
from matndp.host.zoo import MODELS
from matndp.host.kernels.expander import MAX_GPUS
from matndp.sim.cli.arguments import SEED, integer, name_in, number
from matndp.sim.cli.output import UsageError, output_folder, tool_output


def _slices(args):
    """The slice indices ``--slices`` asks for, refused before any work when the GPU has
    fewer slices."""
    from matndp.sim.flows.cosim.interleave import spread_slices
    from matndp.sim.flows.cosim.iteration import gpu_slices
    slices = gpu_slices(args.gpu)
    count = slices if args.slices is None else args.slices
    if count > slices:
        raise UsageError(f"--slices {count}: the {args.gpu}'s memory is interleaved over {slices} "
                         f"slices; give 1..{slices} or all")
    return spread_slices(count, slices)


def _cosim_setup(args):
    from matndp.sim.flows.cosim.setup import CosimSetup
    return CosimSetup(model=args.model, block=args.block, batch=args.batch or COSIM_BATCH, gpu=args.gpu,
                      policy=args.policy, hbm_fraction=args.hbm_fraction, seed=args.seed,
                      pressure=COSIM_PRESSURE if args.pressure == "random" else 0.0,
                      overlap=args.overlap is not False)


def run_sim(args):
    from matndp.sim.flows.trigger_layer import run_trigger_layer
    from matndp.sim.runner import check_simulator
    from matndp.sim.flows.engine_layer import run_engine_layer
    check_simulator(args.simulator)
    output = pathlib.Path(args.output)
    if args.ndpxnet is not None:
        return _run_ndpxnet(args, output)
    if args.cosim is None:
        args.cosim = args.simulator == "verilator"
    share = shares = runner = None
    if args.slices != 1 and not args.cosim:
        raise UsageError(f"--slices {args.slices or 'all'}: the co-simulation is off (--no-cosim, the default under Icarus)")
    if args.overlap is not None and not args.cosim:
        raise UsageError(f"--{'' if args.overlap else 'no-'}overlap: the co-simulation is off (--no-cosim, the "
                         f"default under Icarus)")
    slices = _slices(args) if args.cosim else None
    several = slices is not None and len(slices) > 1
    if (args.workers is not None or args.ray is not None) and not (args.cosim and (args.full_iteration or several)):
        raise UsageError("--workers and --ray run the jobs of --full-iteration or --slices; add one")
    if args.cosim and args.full_iteration:
        from matndp.sim.flows.cosim.iteration import share_blocks
        runner = _runner(args)
        shares = share_blocks(_cosim_setup(args))
    elif args.cosim:
        from matndp.sim.flows.cosim.iteration import share_iteration
        # Planned first, so that a block, batch or memory that does not fit is refused
        # before anything runs.
        share = share_iteration(_cosim_setup(args))
        runner = _runner(args) if several else None
        if args.window and not args.window[1] <= len(share.steps):
            raise UsageError(f"--window {args.window[0]}:{args.window[1]}: the co-simulation "
                             f"has {len(share.steps)} steps")
    # A run of jobs keeps those that finished in the output folder, to resume from.
    with _removed_if_interrupted(output, keep=shares is not None or several), \
            tool_output("sim", args.verbose) as tools:
        run_trigger_layer(args.output, simulator=args.simulator, tiles=args.tiles, seed=args.seed,
                          pressure=args.pressure, progress=tools.step)
        cosim = engine = None
        if share is not None or shares is not None:
            from matndp.sim.flows.cosim.run import jobs_folder, run_cosim, run_cosim_iteration
            from matndp.sim.flows.cosim.shard import JobsFailed
            command = "matndp sim --full-iteration" if shares is not None else "matndp sim --slices"
            jobs = len(slices) * (len(shares) if shares is not None else 1) - (0 if shares is not None else 1)
            try:
                if share is not None:
                    cosim = run_cosim(output / "cosim", share=share, simulator=args.simulator,
                                      window=args.window, progress=tools.step, slices=slices, runner=runner,
                                      status=tools.status)
                else:
                    cosim = run_cosim_iteration(output / "cosim", shares=shares, simulator=args.simulator,
                                                runner=runner, progress=tools.step, slices=slices,
                                                status=tools.status)
            # Standard error is the run's log in this block: what the user must read goes to
            # the terminal (``tools.status``).
            except JobsFailed as failed:
                for where, error in failed.failures:
                    print(f"{command}: block {where} failed: {error}", file=tools.status)
                print(f"{command}: {len(failed.failures)} of {jobs} jobs failed; "
                      f"the others are kept in {jobs_folder(output / 'cosim')} and the same command "
                      f"runs only the failed ones again", file=tools.status, flush=True)
                return 1
            except KeyboardInterrupt:
                # The hint, then the interrupt on to the command's own line.
                if jobs:
                    tools.step(f"{command}: interrupted; the jobs that finished are kept in "
                               f"{jobs_folder(output / 'cosim')} and the same command resumes "
                               f"from them")
                raise
        if args.engine:
            tools.step("sim: the engine part: two of the layer's output tensors through the "
                       "slice with its engine, traced")
            engine = run_engine_layer(args.output, simulator=args.simulator, seed=args.seed,
                                         pressure=0.2 if args.pressure == "random" else 0.0)
    print((output / "report.md").read_text(), end="")
    if cosim is not None:
        print()
        print(_cosim_summary(cosim, output / "cosim"))
    elif not args.cosim:
        print()
        print("co-simulation: not run (--cosim runs it; under Icarus it takes days)"
              if args.simulator == "icarus" else "co-simulation: not run (--no-cosim)")
    if engine is None:
        return 0
    print()
    print((output / "engine_report.md").read_text(), end="")
    return 0 if engine["passed"] else 1


@contextlib.contextmanager
def _removed_if_interrupted(output, *, keep):
    """An interrupted run removes the output folder it made, unless ``keep``: the parts that
    finished before the interrupt would stand for a whole run without the rest."""
    made_here = not output.exists()
    try:
        yield
    except KeyboardInterrupt:
        if made_here and not keep:
            shutil.rmtree(output, ignore_errors=True)
        raise


def _runner(args):
    """Where the jobs of ``--full-iteration`` run: None (here, one after another) for one
    worker, else a local pool or the Ray cluster, refused now if it cannot be reached."""
    from matndp.sim.sweep.runners import LocalPool, RayCluster
    workers = args.workers or os.cpu_count() or 1
    if args.ray is not None:
        runner = RayCluster(args.ray, workers)
        try:
            runner.check()
        except ValueError as error:
            raise UsageError(f"--ray {args.ray}: {error}") from None
        return runner
    return LocalPool(workers) if workers > 1 else None


def _run_ndpxnet(args, output):
    from matndp.sim.flows.ndpxnet_run import NDPXNetError, NDPXNetSetup, run_ndpxnet
    from matndp.host.units import format_seconds
    try:
        setup = NDPXNetSetup(gpus=args.ndpxnet, model=args.model, batch=args.batch or NDPXNET_BATCH,
                             gpu=args.gpu, bucket_sectors=args.bucket_sectors, seed=args.seed,
                             pressure=NDPXNET_PRESSURE if args.pressure == "random" else 0.0)
    except ValueError as error:
        raise UsageError(str(error)) from None
    folder = output / "ndpxnet"
    with tool_output("sim", args.verbose) as tools:
        try:
            report = run_ndpxnet(folder, setup, simulator=args.simulator, progress=tools.step)
        except NDPXNetError as failure:
            print(f"matndp sim --ndpxnet: check failed: {failure}", file=sys.stderr)
            return 1
    rtl, whole = report["rtl"], report["whole_model"]
    print(f"NDPXNet: {setup.model} on {setup.gpus} GPUs, {rtl['gradient_writes']:,} gradient writes "
          f"through the expander slice, bit-exact; {rtl['cycles_per_reduced_sector']:.1f} cycles per "
          f"reduced sector, {rtl['cycles_last_write_to_ready']:,} cycles from the last write to ready. "
          f"Whole model: reduction + optimizer exposed {format_seconds(whole['ndpxnet_exposed_s'])} "
          f"(ring all-reduce + GPU optimizer: {format_seconds(whole['baseline_exposed_s'])}), "
          f"iteration {whole['speedup']:.3f}x; report {folder / 'report.md'} ({report['wall_s']:.0f} s)")
    return 0


def _cosim_summary(report, folder):
    from matndp.host.units import format_seconds
    setup, checks, clock = report["setup"], report["checks"], report["clock_hz"]
    if "blocks" in report:
        return (f"co-simulation: the whole {setup['model']} iteration (batch {setup['batch']}, "
                f"{setup['gpu']}, tiering {setup['policy']}), {len(report['blocks'])} blocks, "
                f"{_on_slices(report)}: {report['cycles']:,} cycles, "
                f"{checks['launches_bit_exact']} kernel launches bit-exact, every check passed; "
                f"report {folder / 'report.md'} ({report['wall_s']:.0f} s)")
    measures = report["measures"]
    return (f"co-simulation: {setup['model']} {setup['block']} (batch {setup['batch']}, "
            f"{setup['gpu']}, tiering {setup['policy']}), {_on_slices(report)}: "
            f"{measures['cycles']:,} cycles ({format_seconds(measures['cycles'] / clock)} at the "
            f"slice clock, {measures['stall_cycles']:,} of them waiting for flash), "
            f"{checks['launches_bit_exact']} kernel launches bit-exact, every check passed; "
            f"report {folder / 'report.md'} ({report['wall_s']:.0f} s)")


def _on_slices(report):
    """Which slices the co-simulation's figures are of, and with several their spread."""
    spread = report["slice_spread"]
    if len(spread["slices"]) == 1:
        return f"one of {report['slices']} slices"
    busy = spread["busy_cycles"]
    combine = report.get("combine")
    combined = (f", {combine['bit_exact']} reductions combined across them bit-exact"
                if combine and combine["bit_exact"] else "")
    return (f"{len(spread['slices'])} of {report['slices']} slices (busy cycles {busy['min']:,} to "
            f"{busy['max']:,}, slowest slice {busy['slowest_slice']}; figures below of slice "
            f"{spread['slices'][0]}){combined}")


COSIM_PRESSURE = 0.1
COSIM_BATCH = 2
NDPXNET_BATCH = 32
NDPXNET_PRESSURE = 0.2


def _count_or_all(text):
    """A positive integer, or None for ``all``."""
    if text == "all":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer or all, not {text!r}")
    return value


def _ray_address(text):
    host, colon, port = text.rpartition(":")
    if text in ("auto", "local") or "://" in text or (colon and host and port.isdigit()):
        return text
    raise argparse.ArgumentTypeError(f"must be HOST:PORT, auto or local, not {text!r}")


def _window(text):
    if text == "none":
        return None
    first, sep, end = text.partition(":")
    try:
        first, end = int(first), int(end)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be FIRST:END (step numbers) or none, not {text!r}") from None
    if not sep or not 0 <= first < end:
        raise argparse.ArgumentTypeError(f"must be FIRST:END with 0 <= FIRST < END, not {text!r}")
    return (first, end)


def register(subparsers):
    from matndp.sim.flows.trigger_layer import layer_tiles
    sim = subparsers.add_parser("sim", help="the main run: DNN training traffic through the RTL",
                                description="Run a ResNet-50 layer's output stream, mixed with other "
                                            "traffic, through the NDP slice's trigger (waveform, "
                                            "report); then the co-simulation: one slice's share of a "
                                            "training block (forward, backward, optimizer) as the "
                                            "host model plans it, through the slice with its engine, "
                                            "with the tiering model's stalls and page copies, every "
                                            "kernel checked bit for bit; report, figures, calibration "
                                            "and the waveform of a window of its steps.")
    sim.add_argument("--simulator", choices=["verilator", "icarus"], default="verilator",
                     help="the HDL simulator")
    sim.add_argument("--output", type=output_folder, default="build/sim", metavar="FOLDER",
                     help="folder for the waveform, the save file, the figure and the report")
    tiles = layer_tiles()
    sim.add_argument("--tiles", type=integer(1, tiles), default=8,
                     help=f"output tiles of the layer to run, 128x64 each, 1..{tiles} "
                          f"(default %(default)s)")
    sim.add_argument("--seed", type=SEED, default=1, help="traffic and back-pressure seed")
    sim.add_argument("--pressure", choices=["none", "random"], default="random",
                     help="random back-pressure on every stream, or none")
    sim.add_argument("--engine", action=argparse.BooleanOptionalAction, default=False,
                     help="also run the engine part: two of the layer's output tensors "
                          "through the slice with its engine, traced, into engine_report.md "
                          "and engine.fst (its first build takes minutes)")
    cosim = sim.add_argument_group("co-simulation", "one slice's share of a training block, "
                                   "planned by the host model, through the slice RTL with its "
                                   "engine (build/sim/cosim/)")
    cosim.add_argument("--cosim", action=argparse.BooleanOptionalAction, default=None,
                       help="run the co-simulation (default on under Verilator; off under Icarus, "
                            "whose harness runs about 150 cycles a second: days for the block)")
    cosim.add_argument("--model", type=name_in(MODELS), default="resnet50",
                       help=f"zoo model ({', '.join(MODELS.names)}; default %(default)s)")
    cosim.add_argument("--block", default="layer1.0",
                       help="op-name prefix of the block to run (default %(default)s)")
    cosim.add_argument("--batch", type=integer(1), default=None,
                       help=f"batch size per GPU (default {COSIM_BATCH}; {NDPXNET_BATCH} with --ndpxnet)")
    cosim.add_argument("--gpu", type=name_in(PRESETS), default="a100",
                       help=f"GPU preset ({', '.join(PRESETS.names)}; default %(default)s)")
    cosim.add_argument("--policy", type=name_in(TIER_POLICIES), default="tm",
                       help=f"tiering policy ({', '.join(TIER_POLICIES.names)}; default %(default)s)")
    cosim.add_argument("--hbm-fraction", type=number("HBM fraction", at_most=1.0), default=0.5,
                       help="HBM capacity as a fraction of the footprint (default %(default)s)")
    cosim.add_argument("--full-iteration", action="store_true",
                       help="run every block of the iteration, one after the other, instead of "
                            "--block (no waveform window; minutes)")
    cosim.add_argument("--slices", type=_count_or_all, default=1, metavar="S|all",
                       help="simulate S slices' shares of the block or iteration, spread evenly over "
                            "the GPU's slices from slice 0 (all: every slice, 160 on an A100), each "
                            "its own share of every tensor as the address interleave deals it, each "
                            "a job; the report gives the spread of their cycles and the slowest "
                            "slice (default %(default)s)")
    cosim.add_argument("--workers", type=integer(1), default=None, metavar="N",
                       help="with --full-iteration or --slices: worker processes running the jobs "
                            "at once (default the CPU count; 1 runs them here one after another); "
                            "CPUs of --ray local")
    cosim.add_argument("--ray", type=_ray_address, default=None, metavar="ADDRESS|auto|local",
                       help="with --full-iteration or --slices: run the jobs on the Ray cluster at "
                            "ADDRESS (HOST:PORT), the one this machine is part of (auto), or a Ray "
                            "instance started here with --workers CPUs (local)")
    cosim.add_argument("--overlap", action=argparse.BooleanOptionalAction, default=None,
                       help="run the steps the host model schedules at the same time (a GPU kernel "
                            "and an independent NDP op) as one stage; --no-overlap runs every step "
                            "after the one before, for comparison (default on)")
    cosim.add_argument("--window", type=_window, default="0:2", metavar="FIRST:END",
                       help="steps whose waveform is written (window.fst; a traced build), or "
                            "none (default %(default)s)")
    ndpxnet = sim.add_argument_group("NDPXNet", "K GPUs' gradients reduced and stepped by the "
                                     "memory expander's slice (build/sim/ndpxnet/); uses --model, "
                                     "--batch, --gpu, --seed, --pressure; runs instead of the parts above")
    ndpxnet.add_argument("--ndpxnet", type=integer(2, MAX_GPUS), default=None, metavar="K",
                         help=f"K data-parallel GPUs, 2..{MAX_GPUS} (each K is its own build, "
                              f"minutes the first time)")
    ndpxnet.add_argument("--bucket-sectors", type=_count_or_all, default=64, metavar="N",
                         help="sectors of each gradient bucket's share run through the RTL, or "
                              "all (default %(default)s)")
    sim.set_defaults(func=run_sim)
