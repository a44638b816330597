# amaranth: UnusedElaboratable=no
"""Bounded proofs that the engine's ordering station passes an entry's atomics in trigger
order and each µthread's ops in program order (sim/formal/ordering.py); that the catalog's
mutants of the station fail them; and that the depth reaches the orders that matter."""

import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.sim.formal import FormalFailure, prove
from matndp.sim.formal.mutants import mutated_module
from matndp.sim.formal.ordering import ORDERING_WITNESSES, OrderingHarness
from tools.mutate.rtl_mutants import MUTANTS


# Two µthreads of two entries, two queued atomics each, two-lane data: every order the
# station decides between, at a size the solver proves in seconds.
CONFIG = NDPConfig(addr_width=16, sector_bytes=8, id_width=2, counter_width=8,
                   trigger=TriggerConfig(filter_entries=2, event_queue_depth=2),
                   engine=EngineConfig(sub_cores=1, slots=2, ordered_atomics=2,
                                       scratchpad_bytes=256, instruction_words=64,
                                       argument_blocks=2, in_flight=1,
                                       memory_first=False))
# Deep enough for both witnesses below (an atomic of the second µthread of an entry
# passing after the first handed the turn on; one passing while another µthread's atomics
# wait queued): the default suite proves the station to it in seconds; the slow suite to
# DEEP, which takes minutes.
DEPTH = 8
DEEP = 12

# The proof's two µthreads are a power of two: the station then has no wrap of its round
# robin to break (tests/hw/engine/test_ordering.py kills that mutant on twelve).
OUTSIDE_THE_PROOF = {"ordering-round-robin-wraps-at-the-bit-width"}
STATION_MUTANTS = [mutant for mutant in MUTANTS if mutant.file == "hw/engine/ordering.py"
                   and mutant.id not in OUTSIDE_THE_PROOF]


@pytest.mark.parametrize("depth", [DEPTH, pytest.param(DEEP, marks=pytest.mark.slow)])
def test_the_station_keeps_the_orders(depth, timed_proof):
    timed_proof(OrderingHarness(CONFIG), depth)


@pytest.mark.parametrize("mutant", STATION_MUTANTS, ids=lambda mutant: mutant.id)
def test_a_mutated_station_fails_the_proof(mutant):
    station = mutated_module("matndp.hw.engine.ordering", mutant.snippet, mutant.replacement)
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(OrderingHarness(CONFIG, station_class=station.AtomicOrder), depth=DEPTH)


def test_the_catalog_has_mutants_of_the_station():
    assert len(STATION_MUTANTS) >= 3
    catalog = {mutant.id for mutant in MUTANTS if mutant.file == "hw/engine/ordering.py"}
    assert OUTSIDE_THE_PROOF <= catalog
    threads = CONFIG.engine.sub_cores * CONFIG.engine.slots
    assert threads & (threads - 1) == 0         # why those are outside the proof


@pytest.mark.parametrize("witness", ORDERING_WITNESSES)
def test_the_depth_reaches(witness):
    with pytest.raises(FormalFailure, match="assertion fails"):
        prove(OrderingHarness(CONFIG, witness=witness), depth=DEPTH)


def test_an_unknown_witness_is_refused_by_name():
    with pytest.raises(ValueError, match="witness must be one of second_turn, "
                                         "passed_while_others_wait"):
        OrderingHarness(CONFIG, witness="deadlock")


def test_a_snippet_that_does_not_occur_once_is_refused():
    with pytest.raises(ValueError, match="occurs 0 times"):
        mutated_module("matndp.hw.engine.ordering", "no such text", "")
