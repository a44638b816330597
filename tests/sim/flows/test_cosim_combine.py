"""The slices' partial reductions combined in a report: a batch-norm's statistics split by
hand over three slices and combined (the host model's combine beside them, worked out by
hand), a corrupted partial caught, the slices taken in slice order whatever order they
come in; and a convolution with its batch-norm on two slices through the RTL, its forward
and backward reductions combined bit for bit (and, slow, the whole iteration so)."""

from types import SimpleNamespace

import numpy as np
import pytest

from matndp.host.zoo.builder import GraphBuilder
from matndp.sim.batch.check import CheckFailed
from matndp.sim.cli.sim import _cosim_summary
from matndp.sim.flows.cosim.combine import combine_report
from matndp.sim.flows.cosim.iteration import share_iteration
from matndp.sim.flows.cosim.run import run_cosim
from matndp.sim.flows.cosim.setup import CosimSetup
from matndp.sim.golden.kernels import GOLDENS

from .test_cosim_slices import iteration_on_slices


pytestmark = pytest.mark.xdist_group("engine_slice")

SETUP = CosimSetup(block="c", slices=3, policy="ideal", hbm_fraction=0.9)
PARAMS = {"eps": 1e-5, "momentum": 0.1}


def convbn(batch=2):
    """A convolution, its batch-norm and ReLU (block ``c``: 32 rows of 8 channels), then a
    classifier."""
    builder = GraphBuilder("convbn", batch=batch, dtype="fp32", optimizer="sgd_momentum")
    x = builder.input("x", (batch, 8, 4, 4))
    labels = builder.input("labels", (batch,), "int64")
    y = builder.relu("c.relu", builder.batchnorm("c.bn", builder.conv2d("c.conv", x, 8, 3, padding=1)))
    logits = builder.linear("fc", builder.adaptive_avgpool("pool", y, 1, 1), 4, flatten=True)
    return builder.finish(builder.cross_entropy("loss", logits, labels), {"logits": logits})


def _hex(values):
    return np.asarray(values, dtype="<f4").tobytes().hex()


def _bn_stats_partials(x, slices):
    """(slice, [its bn_stats partial]) of each of ``slices`` slices holding rows s, s + slices, …"""
    found = []
    for index in range(slices):
        rows = x[index::slices]
        channels = x.shape[1]
        inputs = {"x": rows.reshape(-1), "weight": np.ones(channels, np.float32),
                  "bias": np.zeros(channels, np.float32), "running_mean": np.zeros(channels, np.float32),
                  "running_var": np.ones(channels, np.float32)}
        out = GOLDENS["bn_stats"](inputs, PARAMS, {"rows": len(rows), "channels": channels})
        statistics = {name: _hex(out[name]) for name in ("mean", "invstd")}
        found.append((index, [{"op": "c.bn", "phase": "bn_stats", "rows": len(rows), "params": PARAMS,
                               "rtl": dict(statistics), "golden": dict(statistics)}]))
    return found


@pytest.fixture(scope="module")
def share():
    return share_iteration(SETUP, graph=convbn())


def test_three_slices_bn_stats_combined_with_the_host_models_combine_worked_out_by_hand(share):
    x = np.random.default_rng(3).normal(0, 1, (32, 8)).astype(np.float32)
    combine = combine_report(_bn_stats_partials(x, 3), share, ["c.bn"])
    (row,) = combine["reductions"]
    assert (row["op"], row["phase"], row["slices"], row["rows"], row["groups"]) == \
        ("c.bn", "bn_stats", [0, 1, 2], 32, 8)
    assert row["bit_exact"] is True and combine["bit_exact"] == 1
    # 8 channels x 3 slices x (mean, invstd) x 4 B read; 8 x 6 x 4 B written.
    gpu = share.plan.memory
    assert (row["host"]["read_bytes"], row["host"]["written_bytes"]) == (192, 192)
    assert row["host"]["time_us"] == pytest.approx((gpu.launch_overhead_s + 384 / gpu.usable_bps) * 1e6)
    assert combine["host_combine_steps"] == 1
    assert combine["iteration_s_with_combines"] > combine["iteration_s"]


def test_a_corrupted_partial_fails_the_check_and_the_slices_are_taken_in_slice_order(share):
    x = np.random.default_rng(4).normal(0, 1, (32, 8)).astype(np.float32)
    partials = _bn_stats_partials(x, 3)
    in_order = combine_report(partials, share, ["c.bn"])
    assert combine_report(partials[::-1], share, ["c.bn"]) == in_order
    mean = np.frombuffer(bytes.fromhex(partials[1][1][0]["rtl"]["mean"]), dtype="<f4").copy()
    mean.view(np.uint32)[5] ^= 1
    partials[1][1][0]["rtl"]["mean"] = _hex(mean)
    with pytest.raises(CheckFailed, match=r"c.bn \(bn_stats\): the combined mean.* over slices 0, 1, 2"):
        combine_report(partials, share, ["c.bn"])


def test_one_slice_has_nothing_to_combine(share):
    x = np.random.default_rng(5).normal(0, 1, (32, 8)).astype(np.float32)
    combine = combine_report(_bn_stats_partials(x, 1), share, ["c.bn"])
    assert combine["reductions"][0]["bit_exact"] is None and combine["bit_exact"] == 0


def _quiet(*args):
    pass


def test_a_batch_norms_reductions_on_two_slices_through_the_rtl_combine_bit_for_bit(tmp_path, share):
    report = run_cosim(tmp_path / "cosim", share=share, window=None, slices=[0, 2], progress=_quiet,
                       job_progress=_quiet)
    combine = report["combine"]
    assert combine["slices"] == [0, 2] and combine["of"] == 3
    # 32 rows over 3 slices: slice 0 holds 11, slice 2 holds 10.
    assert [(row["op"], row["phase"], row["rows"], row["groups"], row["bit_exact"])
            for row in combine["reductions"]] == [("c.bn", "bn_stats", 21, 8, True),
                                                  ("c.bn.backward", "bn_bwd_stats", 21, 8, True)]
    assert all(row["host"]["holders"] == 3 for row in combine["reductions"])
    assert "## Partial reductions across slices" in (tmp_path / "cosim" / "report.md").read_text()
    assert "2 reductions combined across them bit-exact" in _cosim_summary(report, tmp_path / "cosim")


@pytest.mark.slow
def test_the_whole_iterations_reductions_on_two_slices_combine_bit_for_bit(tmp_path):
    # At batch 8 every slice holds some of the loss's logits (4 sectors over 3 slices).
    _, report = iteration_on_slices(tmp_path / "cosim", convbn(8), [0, 2], SETUP)
    combine = report["combine"]
    assert [(row["op"], row["slices"], row["rows"], row["bit_exact"]) for row in combine["reductions"]] == \
        [("c.bn", [0, 2], 43 + 42, True), ("c.bn.backward", [0, 2], 43 + 42, True)]
    assert combine["host_combine_steps"] == 2
    assert "## Partial reductions across slices" in (tmp_path / "cosim" / "report.md").read_text()
