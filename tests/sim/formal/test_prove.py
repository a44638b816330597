"""The bounded-proof runner itself: a property that holds, one that fails only after
some cycles, reset values as the initial state, and assumptions restricting the inputs."""

import pytest
from amaranth.hdl import Assert, Assume, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from matndp.sim.formal import FormalFailure, prove


class _Counter(wiring.Component):
    """Counts up from ``start`` with ``step``; asserts the count never equals ``never``."""

    def __init__(self, *, start, never):
        self.start, self.never = start, never
        super().__init__({"step": In(1)})

    def elaborate(self, platform):
        m = Module()
        count = Signal(8, init=self.start)
        m.d.sync += count.eq(count + self.step)
        m.d.comb += Assert(count != self.never)
        return m


def test_a_property_that_holds_is_proven():
    log = prove(_Counter(start=5, never=4), depth=6)
    assert "SUCCESS" in log


def test_the_initial_state_is_the_reset_value():
    # From 5, 4 is out of reach for 250 steps; from an all-zero state it would not be.
    prove(_Counter(start=5, never=0), depth=6)


def test_a_failure_is_found_at_its_depth():
    prove(_Counter(start=0, never=5), depth=5)
    with pytest.raises(FormalFailure, match="assertion fails within 6 cycles"):
        prove(_Counter(start=0, never=5), depth=6)


class _Accumulator(wiring.Component):
    """Adds ``step`` each cycle; asserts the sum stays below 16 for four cycles, which holds
    only while every step is below 4, what ``assume_small_steps`` assumes."""

    def __init__(self, *, assume_small_steps):
        self.assume_small_steps = assume_small_steps
        super().__init__({"step": In(8)})

    def elaborate(self, platform):
        m = Module()
        total = Signal(8)
        m.d.sync += total.eq(total + self.step)
        m.d.comb += Assert(total < 16)
        if self.assume_small_steps:
            m.d.comb += Assume(self.step < 4)
        return m


def test_an_assumption_restricts_the_inputs():
    # Four steps below 4 sum to at most 12; without the assumption one step of 16 breaks it.
    prove(_Accumulator(assume_small_steps=True), depth=5)
    with pytest.raises(FormalFailure, match="assertion fails within 2 cycles"):
        prove(_Accumulator(assume_small_steps=False), depth=2)
