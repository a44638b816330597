"""Run an FP op's vectors through the RTL and compare with the golden reference."""

from matndp.sim.flows.fp_vectors import run_fp_vectors
from matndp.sim.golden.fp import mismatches, reference


__all__ = ["check_fp_op"]


def check_fp_op(op, operands, **run_options):
    """Raise AssertionError listing the first differing vectors unless the RTL's results
    for ``operands`` (a list of arrays, by arity) equal :func:`matndp.sim.golden.fp.reference`."""
    expected = reference(op, *operands)
    actual = run_fp_vectors(op, *operands, **run_options)
    assert len(actual) == len(expected), f"{op}: {len(actual)} results for {len(expected)} vectors"
    problems = mismatches(expected, actual, *operands)
    assert not problems, f"{op}: {len(problems)} mismatch lines:\n" + "\n".join(problems)
    return len(expected)
