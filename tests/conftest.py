"""How `make test`'s workers (pytest-xdist, ``--dist loadgroup``) share the suite's work.

A test marked ``xdist_group(name)`` goes to the worker that takes that group, so that tests
sharing a simulator build make it once, on one worker, without another worker waiting on
the build's lock. xdist tells its scheduler a test's group by appending ``@name`` to the
test's id; it sets ``item._nodeid``, which pytest 9 no longer reads (the id comes from
``item._id``), so without the hook below every test would be a unit of its own
(pytest-xdist issue #1386). The hook adds the suffix only where it is missing, so it
does nothing once xdist sets the id itself.

xdist then hands out the groups with the most tests first. The ``engine_slice`` group has
fewer tests than the FP units' groups but by far the longest run (it builds the slice with
its engine and the batch harness under Verilator, then runs the engine, batch-harness,
co-simulation and export tests on them); started late, its worker would still be building when the other has
run out of work. It is handed out first, and the other worker's short tests fill the time
beside it.

The session builds its simulations in the test profile (sim/runner.py: Verilator exposes
only the top module's signals and compiles the C++ lighter), unless
``MATNDP_SIM_PROFILE`` already names one; the variable reaches the commands the tests start.
"""

import os

import pytest
from _pytest.nodeid import coerce_node_id

from matndp.sim.runner import PROFILE_VARIABLE

os.environ.setdefault(PROFILE_VARIABLE, "test")


# Groups handed out before every other unit, in this order.
FIRST_GROUPS = ("engine_slice",)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})
        if names and "@" not in item.nodeid.rsplit("]", 1)[-1]:
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(names)}")


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class LongestGroupsFirst(LoadGroupScheduling):
        def _assign_work_unit(self, node):
            for group in reversed(FIRST_GROUPS):
                if group in self.workqueue:
                    self.workqueue.move_to_end(group, last=False)
            super()._assign_work_unit(node)

    return LongestGroupsFirst(config, log)


# What a test costs in processor time, its own and its children's (simulators, compilers),
# which unlike its wall time does not depend on what else the machine runs: with
# MATNDP_TEST_CPU_LOG set, each worker appends one JSON line per test phase to that file.
CPU_LOG_VARIABLE = "MATNDP_TEST_CPU_LOG"


def _processor_seconds():
    import resource
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    path = os.environ.get(CPU_LOG_VARIABLE)
    if not path:
        yield
        return
    import json
    import time
    started, wall = _processor_seconds(), time.monotonic()
    yield
    groups = sorted({str(mark.args[0]) for mark in item.iter_markers("xdist_group") if mark.args})
    with open(path, "a") as log:
        log.write(json.dumps({"test": item.nodeid, "groups": groups,
                              "cpu_s": round(_processor_seconds() - started, 2),
                              "wall_s": round(time.monotonic() - wall, 2)}) + "\n")
