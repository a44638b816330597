"""The ``matndp`` command line.

It lives in :mod:`matndp.sim` because it reaches all three packages: the RTL flow and the
simulators (``sim``), and the host models (``host``), which must not import ``sim``.
Every command follows the conventions of :mod:`matndp.sim.cli.output`.
"""

import argparse
import importlib
import re
import sys

from matndp.sim.cli.output import UsageError


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
    "matndp.sim.cli.verilog",
    "matndp.sim.cli.sim",
    "matndp.sim.cli.bench",
    "matndp.sim.cli.soak",
    "matndp.sim.cli.soc",
    "matndp.sim.cli.synth",
    "matndp.sim.cli.sweep",
    "matndp.sim.cli.docs",
]

# Exit codes: bad input, and an interrupt (the shell's 128 + SIGINT).
USAGE_EXIT = 2
INTERRUPT_EXIT = 130


__all__ = ["main", "build_parser", "UsageError", "emit_text", "parsers", "USAGE_EXIT",
           "INTERRUPT_EXIT"]


def emit_text(text, output=None):
    """Write a generated document to ``output`` (saying so), or to standard output."""
    if output:
        from matndp.host.output import write_text
        from matndp.sim.cli.output import wrote
        wrote(write_text(output, text))
    else:
        sys.stdout.write(text)


_ROLE = re.compile(r":\w+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain(text):
    """Help text without reStructuredText markup: ``:class:`x.Y``` → ``x.Y``, double
    back-quotes dropped."""
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text)) if text else text


class _HelpFormatter(argparse.HelpFormatter):
    """Plain help texts; an option's default is shown when its help does not say it."""

    def _get_help_string(self, action):
        help_text = plain(action.help or "")
        default = action.default
        if "%(default)" in help_text or "default" in help_text or not action.option_strings:
            return help_text
        if isinstance(action, argparse.BooleanOptionalAction) and default in (True, False):
            # --x / --no-x: say which is the default, False included.
            return f"{help_text} (default {'on' if default else 'off'})"
        if default in (None, False, argparse.SUPPRESS):
            return help_text
        return f"{help_text} (default %(default)s)"

    def _format_text(self, text):
        return super()._format_text(plain(text))


class _Parser(argparse.ArgumentParser):
    """A parser whose errors are one line, as every other error of the command line (the
    usage is for ``-h``), and where ``--option=--`` gives the option the value ``--``,
    which its type then judges: Python 3.11's argparse drops that ``--`` as if it ended the
    options, leaving the option an empty list in place of a value (``--gpus=--`` was
    ``[]``). Sub-command parsers are made of the same class."""

    def error(self, message):
        self.exit(USAGE_EXIT, f"{self.prog}: error: {message} (`{self.prog} -h` shows the usage)\n")

    def _get_values(self, action, arg_strings):
        if arg_strings == ["--"] and action.option_strings:
            arg_strings = ["--", "--"]          # argparse removes the first
        return super()._get_values(action, arg_strings)


def parsers(parser):
    """``parser`` and every sub-command parser below it, depth first."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from parsers(child)


def build_parser():
    parser = _Parser(
        prog="matndp",
        description="Memory-access-triggered near-data processing for DNN training: "
                    "RTL flow, co-simulation and host models.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    for each in parsers(parser):
        each.formatter_class = _HelpFormatter
        # On every command, so that it may follow the command's name; a sub-command's
        # default must not overwrite what the main parser found.
        each.add_argument("-v", "--verbose", action="store_true",
                          default=False if each is parser else argparse.SUPPRESS,
                          help="show the simulators' and compilers' output as it comes "
                               "instead of logging it under build/logs/")
    return parser


def _command_name(args):
    words = [args.command]
    for key, value in vars(args).items():
        if key.endswith("_command") and isinstance(value, str):
            words.append(value)
    return " ".join(words)


def main(argv=None):
    try:
        args = build_parser().parse_args(argv)
    except KeyboardInterrupt:
        print("matndp: interrupted", file=sys.stderr)
        return INTERRUPT_EXIT
    name = _command_name(args)
    from matndp.sim.cli.output import tool_failure
    try:
        return args.func(args) or 0
    except KeyboardInterrupt:
        # A design interrupted while it was being built is never elaborated; Amaranth's
        # warning about it at exit would follow this line and say nothing to the user.
        import warnings
        from amaranth.hdl import UnusedElaboratable
        warnings.filterwarnings("ignore", category=UnusedElaboratable)
        print(f"matndp {name}: interrupted; no output was left half-written", file=sys.stderr)
        return INTERRUPT_EXIT
    except BrokenPipeError:
        # The reader went away (`matndp ... | head`): not an error of ours.
        sys.stderr.close()
        return 0
    except (UsageError, ValueError, KeyError, OSError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        if isinstance(error, OSError) and error.filename and error.strerror:
            message = f"{error.filename}: {error.strerror}"
        print(f"matndp {name}: error: {message}", file=sys.stderr)
        return USAGE_EXIT
    except Exception as error:
        failure = tool_failure(error)
        if failure is None:
            raise
        code, message = failure
        print(f"matndp {name}: {message}", file=sys.stderr)
        return code
