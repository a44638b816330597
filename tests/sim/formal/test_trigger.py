"""Bounded proofs of the trigger's pass-through properties (sim/formal_trigger.py)."""

import pytest

from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.sim.formal import FormalFailure, prove
from matndp.sim.formal.trigger import TriggerHarness


# Small enough for the solver, large enough to fill the event queues and reuse ids.
CONFIG = NDPConfig(addr_width=16, sector_bytes=4, id_width=2, trigger=TriggerConfig(filter_entries=2, event_queue_depth=2))
DEPTH = 12


def test_pass_through_properties_hold():
    prove(TriggerHarness(CONFIG), depth=DEPTH)


def test_a_wrong_property_is_caught():
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(TriggerHarness(CONFIG, break_payload=True), depth=DEPTH)
