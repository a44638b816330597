"""The batch harness driven by a plain Verilator C++ loop
(``sim/harnesses/slice_harness_main.cpp``), with no Python and no checking: the limit of
any testbench around the same model. It replays what a batch run recorded
(``replay.txt``) in a copy of that run's directory.
"""

import hashlib
import json
import os
import pathlib
import shutil
import subprocess

from matndp.sim.environment import put_environment_tools_on_path
from matndp.sim.runner import SimulationFailed, build_lock, build_root, check_simulator
from matndp.sim.batch.parameters import harness_parameters
from matndp.sim.batch.run import harness_sources
from matndp.sim.harnesses import harness_file


__all__ = ["build_standalone", "run_standalone", "MAIN_SOURCE"]


MAIN_SOURCE = harness_file("slice_harness_main.cpp")


def build_standalone(config, shape, *, log_file=None):
    """The stand-alone executable for the harness of ``config`` and ``shape`` (built once,
    under ``build/sim_build``)."""
    check_simulator("verilator")
    put_environment_tools_on_path()
    sources = [*harness_sources(config, "verilator"), MAIN_SOURCE]
    parameters = harness_parameters(config, shape)
    digest = hashlib.sha256()
    for source in sources:
        digest.update(pathlib.Path(source).read_bytes())
    digest.update(repr(sorted(parameters.items())).encode())
    directory = build_root() / "sim_build" / f"slice-harness-standalone-{digest.hexdigest()[:12]}"
    executable = directory / "slice_harness_main"
    with build_lock(directory):
        if executable.exists():
            return executable
        command = ["verilator", "--cc", "--exe", "--build", "-j", "2", "-O3",
                   "--x-assign", "fast", "--x-initial", "fast", "-Wno-fatal", "-Wno-lint",
                   "-Wno-style", "--top-module", "slice_harness", "-Mdir", str(directory),
                   "-o", executable.name,
                   *[f"-G{name}={value}" for name, value in parameters.items()],
                   *[str(source) for source in sources]]
        environment = dict(os.environ,
                           MAKEFLAGS="CFG_CXXFLAGS_PCH_I=-include OPT_FAST=-O3 OPT_GLOBAL=-O3")
        with open(log_file or directory / "build.log", "w") as log:
            finished = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=environment)
        if finished.returncode or not executable.exists():
            raise SimulationFailed(f"the stand-alone harness build failed (exit "
                                   f"{finished.returncode}); see {log_file or directory / 'build.log'}")
    return executable


def run_standalone(result, *, logs=False):
    """Replay batch run ``result`` (a :class:`~matndp.sim.batch.run.BatchResult`) in the stand-alone
    driver; returns its measurements (phases, cycles, wall time, cycles per second).
    ``logs``: write the harness's logs as the batch run did."""
    executable = build_standalone(result.job.config, result.job.shape)
    directory = result.directory.with_name(result.directory.name + "-standalone")
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir()
    for path in result.directory.iterdir():
        if path.suffix == ".hex" and not path.name.startswith("image_out") or path.name == "replay.txt":
            shutil.copyfile(path, directory / path.name)
    command = [str(executable), str(directory)] + ([] if logs else ["--no-logs"])
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode:
        raise SimulationFailed(f"the stand-alone harness failed (exit {finished.returncode}): "
                               f"{finished.stderr.strip()[-2000:]}")
    measured = json.loads(finished.stdout.strip().splitlines()[-1])
    measured["directory"] = str(directory)
    return measured
