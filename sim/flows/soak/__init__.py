"""The soak (docs/testing.md, "Soak"): the slice with its engine in the batch harness for
as many cycles as asked, round after round, each round one run of the harness (one reset)
made of stages that follow one another without a reset. Every stage draws a new mix: library
kernels on random filter entries, a kernel that faults, an entry armed and disarmed between
chunks while the GPU's reads are in flight, GPU traffic inside and outside the ranges and
into unmapped and failing memory, random idle gaps, and new random back-pressure and
memory timing for every chunk. Every round is checked in bulk once it has run.

:mod:`.layout` is the memory map, :mod:`.faults` the faulting kernels, :mod:`.settings` the
parameters, :mod:`.steps` the runtime steps a round makes between phases, :mod:`.scenario`
draws a round, :mod:`.check` checks it, :mod:`.run` runs the rounds and writes the
reproducer of a failure.
"""

from matndp.sim.flows.soak.settings import SoakSettings
from matndp.sim.flows.soak.scenario import SoakRound, draw_round
from matndp.sim.flows.soak.check import SoakFailure, check_round
from matndp.sim.flows.soak.run import SoakReport, run_soak


__all__ = ["SoakSettings", "SoakRound", "draw_round", "SoakFailure", "check_round", "SoakReport",
           "run_soak"]

