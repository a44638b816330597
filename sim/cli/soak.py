"""``matndp soak``: the slice with its engine under a seeded random mix of kernels, faults,
traffic and timing for as many cycles as asked, checked in bulk (docs/testing.md, "Soak")."""

import json
import secrets

from matndp.sim.cli.arguments import SEED, SEED_RANGE, integer


DEFAULT_CYCLES = 1_000_000


def run_soak_command(args):
    from matndp.sim.cli.output import tool_output
    from matndp.sim.flows.soak import SoakSettings, run_soak
    seed = secrets.randbelow(SEED_RANGE[1] + 1) if args.seed is None else args.seed
    # The seed goes out first, so that even an interrupted soak can be replayed.
    if not args.json:
        print(f"soak: seed {seed}", flush=True)
    directory = args.output / f"seed-{seed}"
    with tool_output("soak", args.verbose) as tools:
        report = run_soak(seed, args.cycles, settings=SoakSettings(), directory=directory,
                          rounds=None if args.round is None else [args.round], keep=args.keep,
                          progress=tools.step)
    values = report.as_dict()
    if args.json:
        print(json.dumps(values, indent=2))
        return 0 if report.passed else 1
    faults = sum(report.faults.values())
    print(f"soak: seed {seed}: {report.cycles:,} cycles in {report.rounds} rounds "
          f"({report.stages} stages), {report.cycles_per_second:,.0f} cycles/s "
          f"({report.cycles_per_cpu_second:,.0f} per CPU second); "
          f"{report.gpu_requests:,} GPU requests, {report.launches} kernel launches bit-exact, "
          f"{faults} faults reported ({len(report.faults)} kinds), {report.decoys} entries "
          f"armed and disarmed between chunks")
    if not report.passed:
        print(f"soak: FAIL: {report.failure['message']}")
        print(f"soak: reproducer: {report.failure['reproducer']}; replay: "
              f"{report.failure['replay']}")
        return 1
    print("PASS")
    return 0


def register(subparsers):
    from matndp.sim.cli.output import output_folder
    soak = subparsers.add_parser(
        "soak", help="soak the slice with its engine under random kernels, faults, traffic "
                     "and timing, checked in bulk",
        description="Run the batch harness round after round, each round a random mix drawn "
                    "from the seed: library kernels on random filter entries, kernels that "
                    "fault, entries disarmed and re-armed between chunks, GPU traffic inside "
                    "and outside the ranges and into unmapped and failing memory (answered "
                    "DECODE_ERROR and SLAVE_ERROR), random back-pressure and memory timing. "
                    "Every GPU access, event, kernel output and fault is "
                    "checked. Exit code 0 when everything holds, 1 on the first failure "
                    "(with a reproducer file).")
    soak.add_argument("--seed", type=SEED, metavar="S",
                      help="the soak's seed (default: a fresh random one, printed)")
    soak.add_argument("--cycles", type=integer(1, 1 << 40), default=DEFAULT_CYCLES, metavar="N",
                      help="run whole rounds until at least N cycles have run "
                           "(default %(default)s)")
    soak.add_argument("--round", type=integer(0, 1 << 31), metavar="R",
                      help="run only round R of the seed, whatever --cycles says (to replay "
                           "a failure)")
    soak.add_argument("--output", type=output_folder, default="build/soak", metavar="FOLDER",
                      help="where the runs and a failure's reproducer go, under "
                           "FOLDER/seed-S/ (default %(default)s)")
    soak.add_argument("--keep", action="store_true",
                      help="keep every round's run folder (logs), not only a failing one's")
    soak.add_argument("--json", action="store_true", help="print the report as JSON")
    soak.set_defaults(func=run_soak_command)
