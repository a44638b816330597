"""A proof run by a test, its depth and time recorded with the test's result (pytest's
``record_property``: the JUnit report and ``--durations`` readers see them)."""

import time

import pytest

from matndp.sim.formal import prove


@pytest.fixture
def timed_proof(record_property):
    def run(harness, depth):
        started = time.perf_counter()
        prove(harness, depth=depth)
        record_property("proof_depth", depth)
        record_property("proof_seconds", round(time.perf_counter() - started, 1))
    return run
