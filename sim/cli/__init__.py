"""The ``matndp`` command line.

It lives in :mod:`matndp.sim` because it reaches all three packages: the RTL flow and the
simulators (``sim``), and the host models (``host``), which must not import ``sim``.
"""

import argparse
import importlib
import sys


# One module per sub-command group. Each defines ``register(subparsers)``, which adds its
# parser(s) and sets ``func`` to ``func(args) -> int`` (the exit code), and imports heavy
# dependencies (simulators, plotting) inside its commands, so ``--help`` stays fast.
COMMAND_MODULES = [
    "matndp.sim.cli.doctor",
    "matndp.sim.cli.csr",
    "matndp.sim.cli.kernel",
    "matndp.sim.cli.model",
    "matndp.sim.cli.gpu",
    "matndp.sim.cli.tier",
    "matndp.sim.cli.hardware",
    "matndp.sim.cli.synth",
    "matndp.sim.cli.fp",
    "matndp.sim.cli.sweep",
]


__all__ = ["main", "UsageError", "emit_text"]


class UsageError(Exception):
    """Bad input from the command line or a configuration file: exit code 2."""


def emit_text(text, output=None):
    """Write a generated document to ``output`` (saying so), or to standard output."""
    if output:
        from matndp.host.output import write_text
        print(f"wrote {write_text(output, text)}")
    else:
        sys.stdout.write(text)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="matndp",
        description="Memory-access-triggered near-data processing for DNN training: "
                    "RTL flow, co-simulation and host models.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except BrokenPipeError:
        # The reader went away (`matndp ... | head`): not an error of ours.
        sys.stderr.close()
        return 0
    except (UsageError, ValueError, KeyError, FileNotFoundError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"matndp {args.command}: error: {message}", file=sys.stderr)
        return 2

