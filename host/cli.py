"""The ``matndp`` command line."""

import argparse
import importlib
import sys

from .commands import COMMAND_MODULES


__all__ = ["main", "UsageError"]


class UsageError(Exception):
    """Bad input from the command line or a configuration file: exit code 2."""


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


if __name__ == "__main__":
    sys.exit(main())
