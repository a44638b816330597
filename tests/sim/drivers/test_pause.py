"""Pause patterns: what each produces, that a seed replays it, and the constructor errors."""

import itertools
import random

import pytest

from matndp.sim.drivers.pause import (PAUSE_PATTERNS, BurstyPause, CyclePause, NoPause, RandomPause,
                                      pause_iterator, pause_pattern)


def _take(pattern, count, seed=1):
    return list(itertools.islice(pause_iterator(pattern, seed), count))


def test_no_pause_never_pauses():
    assert not any(_take(NoPause(), 1000))


def test_cycle_pause_repeats_its_pattern():
    assert _take(CyclePause((1, 1, 0)), 7) == [True, True, False, True, True, False, True]


@pytest.mark.parametrize("pattern", [RandomPause(0.3), RandomPause(0.7), BurstyPause(6, 10), BurstyPause(1, 3),
                                     CyclePause((1, 0, 0, 0))])
def test_long_run_fraction(pattern):
    cycles = _take(pattern, 40_000)
    assert abs(sum(cycles) / len(cycles) - pattern.pause_fraction) < 0.02


def test_bursty_pauses_come_in_runs():
    cycles = _take(BurstyPause(mean_pause=8, mean_active=8), 40_000)
    runs = [len(list(group)) for paused, group in itertools.groupby(cycles) if paused]
    assert abs(sum(runs) / len(runs) - 8) < 1
    # Independent pauses of the same fraction would average runs of 2 cycles.
    random_runs = [len(list(group)) for paused, group in itertools.groupby(_take(RandomPause(0.5), 40_000))
                   if paused]
    assert sum(random_runs) / len(random_runs) < 2.2


@pytest.mark.parametrize("pattern", [RandomPause(0.4), BurstyPause(3, 5)])
def test_a_seed_replays_and_another_does_not(pattern):
    assert _take(pattern, 500, seed=4) == _take(pattern, 500, seed=4)
    assert _take(pattern, 500, seed=4) != _take(pattern, 500, seed=5)


def test_patterns_draw_only_from_the_generator_given():
    pattern = RandomPause(0.5)
    first = list(itertools.islice(pattern.cycles(random.Random(9)), 200))
    random.seed(123)
    assert list(itertools.islice(pattern.cycles(random.Random(9)), 200)) == first


def test_named_patterns():
    assert set(PAUSE_PATTERNS) == {"none", "random", "bursty", "cycle"}
    assert pause_pattern("random") == PAUSE_PATTERNS["random"]
    with pytest.raises(ValueError, match="unknown pause pattern 'sometimes'; choose one of none, random"):
        pause_pattern("sometimes")


@pytest.mark.parametrize("build, error, message", [
    (lambda: RandomPause(1.0), ValueError, r"RandomPause.probability must be in \[0, 1\), not 1.0"),
    (lambda: RandomPause(-0.1), ValueError, r"must be in \[0, 1\)"),
    (lambda: RandomPause("0.3"), TypeError, "RandomPause.probability must be a number"),
    (lambda: RandomPause(True), TypeError, "RandomPause.probability must be a number"),
    (lambda: BurstyPause(0.5, 4), ValueError, "BurstyPause.mean_pause must be at least 1 cycle"),
    (lambda: BurstyPause(4, 0), ValueError, "BurstyPause.mean_active must be at least 1 cycle"),
    (lambda: BurstyPause(4, None), TypeError, "BurstyPause.mean_active must be a number"),
    (lambda: CyclePause(()), ValueError, "CyclePause.pattern must be a non-empty tuple"),
    (lambda: CyclePause([1, 0]), ValueError, "CyclePause.pattern must be a non-empty tuple"),
    (lambda: CyclePause((1, 2)), ValueError, "holds 0s and 1s"),
    (lambda: CyclePause((1, True)), ValueError, "pauses in every cycle"),
    (lambda: pause_iterator(0.3, 1), TypeError, "expected a PausePattern, not 0.3"),
])
def test_constructor_errors(build, error, message):
    with pytest.raises(error, match=message):
        build()
