"""Pause patterns: in which cycles a stream end holds back.

One set of patterns serves both ends of a stream: a source that pauses inserts idle
cycles (it does not start an offer), a sink that pauses withholds ``ready``
(back-pressure). A pattern is plain, immutable data; :meth:`PausePattern.cycles` turns it
into an endless iterator of booleans, one per clock cycle (``True``: pause), drawing any
randomness from the generator it is given, so that a run with a given seed replays
exactly.

:data:`PAUSE_PATTERNS` names the patterns the tests sweep over, so every test that varies
idle cycles or back-pressure varies them the same way.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass
import itertools
import random


__all__ = ["PausePattern", "NoPause", "RandomPause", "BurstyPause", "CyclePause",
           "PAUSE_PATTERNS", "pause_pattern", "pause_iterator"]


class PausePattern(ABC):
    @abstractmethod
    def cycles(self, rng):
        """An endless iterator of booleans, one per cycle: ``True`` to pause.
        ``rng``: a :class:`random.Random` the pattern may draw from."""

    @property
    @abstractmethod
    def pause_fraction(self):
        """The long-run fraction of paused cycles."""


@dataclass(frozen=True)
class NoPause(PausePattern):
    """Never pause."""

    def cycles(self, rng):
        return itertools.repeat(False)

    @property
    def pause_fraction(self):
        return 0.0


@dataclass(frozen=True)
class RandomPause(PausePattern):
    """Pause each cycle independently with ``probability``."""

    probability: float

    def __post_init__(self):
        if isinstance(self.probability, bool) or not isinstance(self.probability, (int, float)):
            raise TypeError(f"RandomPause.probability must be a number, not {self.probability!r}")
        if not 0.0 <= self.probability < 1.0:
            raise ValueError(f"RandomPause.probability must be in [0, 1), not {self.probability}")

    def cycles(self, rng):
        probability = self.probability
        draw = rng.random
        while True:
            yield draw() < probability

    @property
    def pause_fraction(self):
        return self.probability


@dataclass(frozen=True)
class BurstyPause(PausePattern):
    """Runs of paused cycles between runs of active ones, both of random length
    (geometrically distributed with the given means, in cycles): the pattern of a
    consumer that is busy for a while, then free for a while."""

    mean_pause: float
    mean_active: float

    def __post_init__(self):
        for name in ("mean_pause", "mean_active"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"BurstyPause.{name} must be a number, not {value!r}")
            if not value >= 1:
                raise ValueError(f"BurstyPause.{name} must be at least 1 cycle, not {value}")

    def cycles(self, rng):
        leave = {True: 1 / self.mean_pause, False: 1 / self.mean_active}
        draw = rng.random
        paused = False
        while True:
            if draw() < leave[paused]:
                paused = not paused
            yield paused

    @property
    def pause_fraction(self):
        return self.mean_pause / (self.mean_pause + self.mean_active)


@dataclass(frozen=True)
class CyclePause(PausePattern):
    """A fixed pattern repeated forever, e.g. ``(1, 1, 1, 0)``: three paused cycles in four."""

    pattern: tuple

    def __post_init__(self):
        if not isinstance(self.pattern, tuple) or not self.pattern:
            raise ValueError(f"CyclePause.pattern must be a non-empty tuple, not {self.pattern!r}")
        for value in self.pattern:
            if value not in (0, 1):
                raise ValueError(f"CyclePause.pattern holds 0s and 1s (or booleans), not {value!r}")
        if all(self.pattern):
            raise ValueError("CyclePause.pattern pauses in every cycle: the stream would never move")

    def cycles(self, rng):
        return itertools.cycle([bool(value) for value in self.pattern])

    @property
    def pause_fraction(self):
        return sum(map(bool, self.pattern)) / len(self.pattern)


PAUSE_PATTERNS = {
    "none":   NoPause(),
    "random": RandomPause(0.3),
    "bursty": BurstyPause(mean_pause=6, mean_active=10),
    "cycle":  CyclePause((1, 1, 1, 0)),
}


def pause_pattern(name):
    """The pattern of :data:`PAUSE_PATTERNS` called ``name``."""
    try:
        return PAUSE_PATTERNS[name]
    except KeyError:
        raise ValueError(f"unknown pause pattern {name!r}; choose one of "
                         f"{', '.join(PAUSE_PATTERNS)}") from None


def pause_iterator(pattern, seed):
    """``pattern``'s cycles drawn from a generator seeded with ``seed``."""
    if not isinstance(pattern, PausePattern):
        raise TypeError(f"expected a PausePattern, not {pattern!r}")
    return pattern.cycles(random.Random(seed))
