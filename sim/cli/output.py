"""The conventions every ``matndp`` command follows for its output.

- Output paths are checked as arguments (:func:`output_file`, :func:`output_folder`,
  :func:`figure_file`): a path that cannot be written ends the command with exit code 2
  before any work starts. Files are then written under a temporary name and renamed into
  place when complete (:mod:`matndp.host.output`), so an interrupted run leaves no
  half-written file and no empty folder.
- A figure is written to the name given; a name without a suffix gets ``.png``, and the
  command reports the name it wrote.
- ``--json`` prints JSON on standard output; files are written with ``--output``.
- Simulators and compilers write to a log file under ``build/logs/`` (:func:`tool_output`):
  its path is printed once, and the whole log when the tools fail; ``-v`` shows their
  output as it comes instead.
- Ctrl-C ends a command with exit code 130 and one line (in :func:`matndp.sim.cli.main`).
"""

import argparse
import contextlib
import os
import pathlib
import sys


__all__ = ["UsageError", "output_file", "output_folder", "figure_file", "add_result_options",
           "write_result", "tool_output", "warn", "tool_failure"]


class UsageError(Exception):
    """Bad input from the command line or a configuration file: exit code 2."""


def warn(command, message):
    """One warning line on standard error, named by the command that gives it."""
    print(f"matndp {command}: warning: {message}", file=sys.stderr)


def _can_create_in(folder):
    """Whether a file can be created in the existing folder ``folder``, found by trying:
    permission bits do not tell (a read-only or virtual file system, or root)."""
    probe = folder / f".matndp-probe-{os.getpid()}"
    try:
        probe.touch(exist_ok=False)
    except OSError:
        return False
    probe.unlink()
    return True


def check_writable(path, *, folder=False):
    """``path`` as a :class:`pathlib.Path` if the command can write it (a file, or with
    ``folder`` a folder to write files into); else an error message naming the reason.
    Nothing is created."""
    path = pathlib.Path(path)
    if path.exists():
        if folder != path.is_dir():
            return None, f"{path} is {'a file' if folder else 'a folder'}, not {'a folder' if folder else 'a file'}"
        target = path if folder else path.parent
        if not _can_create_in(target):
            return None, f"{path} is not writable"
        return path, None
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return None, f"cannot create {path}: {ancestor} is a file"
    if not _can_create_in(ancestor):
        return None, f"cannot create {path}: {ancestor} is not writable"
    return path, None


def _argument_type(folder):
    def parse(text):
        path, problem = check_writable(text, folder=folder)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return path
    return parse


def output_file(text):
    """An argparse type: a file path the command can write."""
    return _argument_type(False)(text)


def output_folder(text):
    """An argparse type: a folder the command can create or write into."""
    return _argument_type(True)(text)


def figure_file(text):
    """An argparse type: a writable figure path (PNG, PDF or SVG; ``.png`` added to a name
    without a suffix)."""
    from matndp.host.output import figure_path
    try:
        path = figure_path(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return output_file(str(path))


def add_result_options(parser, what, figure=None):
    """``--json`` (``what`` as JSON on standard output), ``--output FILE`` (the same JSON to
    a file) and, when ``figure`` says what it shows, ``--plot FILE``."""
    parser.add_argument("--json", action="store_true",
                        help=f"print {what} as JSON on standard output")
    parser.add_argument("--output", type=output_file, metavar="FILE",
                        help=f"write {what} as JSON to this file")
    if figure:
        parser.add_argument("--plot", type=figure_file, metavar="FILE",
                            help=f"write {figure} to this image (.png, .pdf or .svg; .png "
                                 f"added to a name without a suffix)")


def write_result(args, document):
    """Print ``document`` as JSON with ``--json``, and write it to ``--output`` (saying so
    on standard error, so that standard output stays JSON). Returns whether it was printed."""
    import json
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    if args.output:
        from matndp.host.output import write_text
        print(f"wrote {write_text(args.output, text)}", file=sys.stderr)
    if args.json:
        sys.stdout.write(text)
    return args.json


class ToolOutput:
    """Where a command's own progress lines go while the tools' output goes to a log."""

    def __init__(self, log, status):
        self.log = log
        self.status = status

    def step(self, text):
        """A progress line on the terminal (the log gets the tools' output)."""
        print(text, file=self.status, flush=True)


@contextlib.contextmanager
def tool_output(name, verbose=False):
    """Send everything written to the standard streams in the block, by this process and by
    the simulators and compilers it starts, to ``build/logs/<name>.log``; the path is
    printed once, and the log in full if the block raises anything but an interrupt.
    With ``verbose`` the output is left on the terminal."""
    if verbose:
        yield ToolOutput(None, sys.stderr)
        return
    from matndp.sim.runner import build_root
    log_path = build_root() / "logs" / f"{name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    status = os.fdopen(os.dup(saved[2]), "w")
    print(f"tool output: {_shown(log_path)} (-v shows it here)", file=status, flush=True)
    try:
        with open(log_path, "w") as log:
            for fd in (1, 2):
                os.dup2(log.fileno(), fd)
            try:
                yield ToolOutput(log_path, status)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                for fd, copy in saved.items():
                    os.dup2(copy, fd)
    except KeyboardInterrupt:
        raise
    except BaseException:
        text = log_path.read_text(errors="replace")
        print(f"--- {_shown(log_path)} ---\n{text}--- end of {_shown(log_path)} ---",
              file=sys.stderr)
        raise
    finally:
        for copy in saved.values():
            os.close(copy)
        status.close()


def _shown(path):
    """``path`` relative to the working folder when it lies below it."""
    try:
        return pathlib.Path(path).resolve().relative_to(pathlib.Path.cwd())
    except ValueError:
        return path


def tool_failure(error):
    """``(exit code, message)`` for a failure of the simulators or compilers, or None for
    any other exception (a bug, which keeps its traceback). A missing tool is bad set-up
    (exit 2); a failed simulation exit 1, its log having been shown."""
    from matndp.sim.batch.check import CheckFailed
    from matndp.sim.runner import SimulationFailed, ToolMissing
    from matndp.sim.fpga_flow.synth import SynthesisFailed
    if isinstance(error, ToolMissing):
        return 2, f"error: {error}"
    if isinstance(error, (SimulationFailed, SynthesisFailed)):
        return 1, f"failed: {error}"
    if isinstance(error, CheckFailed):
        return 1, f"a check failed: {error}"
    return None
