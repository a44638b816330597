"""``matndp tier validate-g10`` on a stand-in G10 checkout: each of the five workloads a
small synthetic trace in G10's layout, and a published table of hand-picked cycle counts."""

import re
import shutil

import pytest

from matndp.host.tier.g10_validation import (G10_WORKLOADS, g10_batch_sizes, g10_validation,
                                             published_g10_batch_sizes, published_g10_times,
                                             published_g10_traffic)
from matndp.host.workload.synthetic import write_synthetic_g10
from tests.paths import DOCS


LAYERS, SKIPS, SECONDS = 10, 2, 0.25
# Cycles of G10's 1.2 GHz clock: ideal 0.5 s, Base UVM 2 s, G10 0.625 s.
PUBLISHED = "ideal | lru | prefetch_lru\n" + "".join(
    f"{name}|table\n6e8 2.4e9 7.5e8\n" for name, _, _ in G10_WORKLOADS)
# Pages moved (SSD to GPU, GPU to SSD, host to GPU, GPU to host): Base UVM 2 M in all,
# DeepUM 1 M, G10 0.4 M.
TRAFFIC = "lru | deepUM | prefetch_lru\n" + "".join(
    f"{name}|table\n" + "5e5 2.5e5 1e5\n" * 4 for name, _, _ in G10_WORKLOADS)

# G10's time breakdown (compute, overlap, stall; units its own): Base UVM 50 / 25 / 25 %,
# FlashNeuron failing (an infinite stall), DeepUM 25 / 25 / 50 %, G10 75 / 25 / 0 %.
BREAKDOWN = {"compute": "2 1 1 3", "overlap": "1 1 1 1", "stall": "1 inf 2 0"}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    root = tmp_path_factory.mktemp("G10")
    for seed, (_, folder, batch) in enumerate(G10_WORKLOADS):
        trace = write_synthetic_g10(root / "trace" / folder, layers=LAYERS, skips=SKIPS,
                                    batch=batch, activation_bytes=1e6, weight_bytes=1e5,
                                    seconds=SECONDS, seed=seed)
        statistics = root / "results" / folder / f"{batch}-run" / "statistics"
        statistics.mkdir(parents=True)
        shutil.move(trace / "kernels.config", statistics / "kernels.config")
        shutil.move(trace / f"cudnn{batch}.txt", root / "results" / folder / f"cudnn{batch}.txt")
    table = root / "example_results" / "overall_performance" / "all.base.txt"
    table.parent.mkdir(parents=True)
    table.write_text(PUBLISHED)
    traffic = root / "example_results" / "overall_traffic" / "traffic.txt"
    traffic.parent.mkdir(parents=True)
    traffic.write_text(TRAFFIC)
    breakdown = root / "example_results" / "overall_breakdown"
    breakdown.mkdir(parents=True)
    for part, values in BREAKDOWN.items():
        (breakdown / f"{part}.txt").write_text("lru | FlashNeuron | deepUM | prefetch_lru\n" + "".join(
            f"{name}|table\n{values}\n" for name, _, _ in G10_WORKLOADS))
    sizes = root / "example_results" / "overall_batchsize"
    sizes.mkdir(parents=True)
    for (name, _, batch), filename in zip(G10_WORKLOADS, ("bert", "vit", "inception", "resnet",
                                                          "senet")):
        # The batch the trace has (ideal 0.5 s, Base UVM 2 s, FlashNeuron fails, G10
        # 0.625 s) and a batch without a trace.
        (sizes / f"{filename}.txt").write_text(
            "lru | FlashNeuron | prefetch_lru | ideal\n\n"
            f"{batch}\n2.4e9 inf 7.5e8 6e8\n\n{2 * batch}\n4.8e9 inf 1.5e9 1.2e9\n")
    return root


def test_the_published_table_is_read_in_seconds(checkout):
    assert published_g10_times(checkout)["ViT"] == pytest.approx(
        {"ideal": 0.5, "lru": 2.0, "prefetch_lru": 0.625})
    assert published_g10_traffic(checkout)["ViT"] == pytest.approx(
        {"lru": 2e6, "deepUM": 1e6, "prefetch_lru": 4e5})


def _rows(text):
    return [[cell.strip() for cell in line.strip()[1:-1].split("|")]
            for line in text.splitlines() if line.startswith("| ") and "---" not in line]


def test_both_tables_have_a_row_per_workload(checkout, capsys):
    text = g10_validation(checkout, progress=True)
    assert "G10 workloads" in capsys.readouterr().err
    rows = _rows(text)
    sizes, ratios, traffic = rows[1:6], rows[7:12], rows[13:18]
    for (name, _, batch), row in zip(G10_WORKLOADS, sizes):
        assert row[:3] == [f"{name} ({batch})", str(4 * LAYERS + 3), str(7 * LAYERS + SKIPS + 2)]
        # The traces fit in the HBM of G10's setup: nothing moves.
        assert row[4] == " / ".join(["0"] * 7)
        assert float(row[5]) == pytest.approx(SECONDS, abs=1e-5)
        assert row[6] == "0.500000"
    for (name, _, batch), row in zip(G10_WORKLOADS, ratios):
        # Ours: every policy as fast as ideal; G10's: 0.5 / 2 and 0.5 / 0.625, no others.
        assert row == [f"{name} ({batch})", "0.250 / 1.000 / +0.750", "— / 1.000",
                       "— / 1.000", "— / 1.000", "— / 1.000",
                       "0.800 / 1.000 / +0.200", "1.000"]
    for (name, _, batch), row in zip(G10_WORKLOADS, traffic):
        # Nothing moves here; G10's table says 2, 1 and 0.4 million pages.
        assert row == [f"{name} ({batch})", "2.00 / 0.00 / -100 %", "— / 0.00",
                       "1.00 / 0.00 / -100 %", "— / 0.00", "— / 0.00",
                       "0.40 / 0.00 / -100 %", "0.00"]


def test_the_time_breakdown_sets_g10s_shares_beside_ours(checkout):
    """Nothing moves in our runs: all compute. G10's shares from the stand-in table."""
    text = g10_validation(checkout)
    lines = text.splitlines()
    caption = lines.index("Time breakdown, compute / overlap / stall in % of the iteration, "
                          "G10's published figure; ours:")
    assert lines[caption + 2:caption + 4] == [
        "| workload (batch) | Base UVM (`uvm`) | FlashNeuron (`flashneuron`) | DeepUM (`deepum`) "
        "| G10 (`g10`) | `tm` |", "|---|---|---|---|---|---|"]
    for (name, _, batch), line in zip(G10_WORKLOADS, lines[caption + 4:caption + 9]):
        assert line == (f"| {name} ({batch}) | 50 / 25 / 25; 100 / 0 / 0 | fails; 100 / 0 / 0 | "
                        "25 / 25 / 50; 100 / 0 / 0 | 75 / 25 / 0; 100 / 0 / 0 | 100 / 0 / 0 |")


def test_the_batch_size_figure_is_read_and_run_where_traces_exist(checkout):
    published = published_g10_batch_sizes(checkout)
    name, _, batch = G10_WORKLOADS[3]
    assert published[name][batch] == pytest.approx(
        {"lru": 2.0, "FlashNeuron": float("inf"), "prefetch_lru": 0.625, "ideal": 0.5})
    text = g10_batch_sizes(checkout)
    rows = _rows(text)
    assert rows[0][:3] == ["workload", "batch", "Base UVM (`uvm`)"]
    for (name, _, batch), row in zip(G10_WORKLOADS, rows[1:]):
        # Ours: every policy as fast as ideal (the trace fits); G10's: 0.25, fails, 0.8.
        assert row == [name, str(batch), "0.250 / 1.000", "fails / 1.000", "0.800 / 1.000", "1.000"]
    assert "No trace (G10's front end not run at that batch): " + ", ".join(
        f"{name} {2 * batch}" for name, _, batch in G10_WORKLOADS) in text


def _framing(text):
    """The lines of a report that are not a workload's row: headers, rules and captions."""
    workloads = tuple(f"| {name}" for name, _, _ in G10_WORKLOADS)
    return [line for line in text.splitlines()
            if line.strip() and not line.startswith(workloads) and not line.startswith("- ")]


def test_the_tables_are_framed_as_in_the_validation_document(checkout):
    """docs/validation.md shows the command's output on G10's own traces: the stand-in
    checkout's tables carry the same headers, rules and captions."""
    document = set((DOCS / "validation.md").read_text().splitlines())
    framing = [line for line in _framing(g10_validation(checkout))
               if not line.startswith(("| `", "| TM-"))]
    assert len(framing) >= 12 and [line for line in framing if line not in document] == []


def test_what_is_not_a_g10_checkout_is_named(tmp_path):
    with pytest.raises(ValueError, match=f"^G10 checkout not found at {re.escape(str(tmp_path / 'none'))}: "
                                         "clone https://github.com/platformxlab/G10 and give the "
                                         "path of the clone$"):
        g10_validation(tmp_path / "none")
    with pytest.raises(ValueError, match=re.escape(
            f"{tmp_path / 'example_results/overall_performance/all.base.txt'}: missing; is "
            f"{tmp_path} a G10 checkout?")):
        g10_validation(tmp_path)
    assert published_g10_traffic(tmp_path) is None and published_g10_batch_sizes(tmp_path) is None
    with pytest.raises(ValueError, match=re.escape(
            f"{tmp_path / 'example_results/overall_batchsize'}: missing; is {tmp_path} a G10 "
            "checkout?")):
        g10_batch_sizes(tmp_path)


def test_a_workload_without_its_front_end_output_is_named_with_the_steps(checkout, tmp_path):
    partial = tmp_path / "G10"
    shutil.copytree(checkout, partial)
    shutil.rmtree(partial / "results" / "VIT" / "1280-run")
    with pytest.raises(ValueError, match=re.escape(
            f"no kernels.config for VIT at batch 1280 under {partial}/results/VIT/1280-*/"
            "statistics/: run G10's front end on that workload first (docs/validation.md, "
            "'G10's workloads', lists the steps)")):
        g10_validation(partial)


def test_malformed_published_tables_name_the_block(checkout, tmp_path):
    partial = tmp_path / "G10"
    shutil.copytree(checkout, partial)
    table = partial / "example_results" / "overall_performance" / "all.base.txt"
    table.write_text("ideal | lru | prefetch_lru\nBERT|table\n6e8 2.4e9\n")
    with pytest.raises(ValueError, match=re.escape(f"{table}: BERT: expected 1 lines of 3 values")):
        published_g10_times(partial)
    sizes = partial / "example_results" / "overall_batchsize" / "vit.txt"
    sizes.write_text("lru | ideal\n\nlarge\n2.4e9 6e8\n")
    with pytest.raises(ValueError, match=re.escape(
            f"{sizes}: block 1: expected a batch size and 2 values")):
        published_g10_batch_sizes(partial)


def test_policies_that_fail_and_the_footprint_are_shown_in_every_table(checkout, monkeypatch):
    """FlashNeuron and DeepUM cannot place a tensor on any workload, and each ideal run
    reports a footprint of 1.05 × 10⁹ bytes: 1.05 GB, shown to one decimal. Every table
    shows the failure where a figure of ours would be, beside G10's figure where it has
    one (its traffic table has a DeepUM column but no FlashNeuron one), and the failures
    are listed with the reason."""
    from matndp.host.tier import g10_validation as module
    from matndp.host.tier.plan import InfeasibleError
    run_tier = module.run_tier

    def run(setup, graph):
        if setup.policy in ("flashneuron", "deepum"):
            raise InfeasibleError("no contiguous run of 7 pages")
        metrics = run_tier(setup, graph)
        return metrics | {"footprint_bytes": 1_050_000_000} if setup.policy == "ideal" \
            else metrics

    monkeypatch.setattr(module, "run_tier", run)
    text = g10_validation(checkout)
    rows = _rows(text)
    sizes, ratios, traffic = rows[1:6], rows[7:12], rows[13:18]
    for row in sizes:
        assert row[3:5] == ["1.1", "0 / fails / fails / 0 / 0 / 0 / 0"]
    for row in ratios:
        assert row[2:4] == ["— / fails", "— / fails"]
    for row in traffic:
        assert row[2:4] == ["— / fails", "1.00 / fails"]
    lines = text.splitlines()
    caption = lines.index("Time breakdown, compute / overlap / stall in % of the iteration, "
                          "G10's published figure; ours:")
    for (name, _, batch), line in zip(G10_WORKLOADS, lines[caption + 4:caption + 9]):
        assert line == (f"| {name} ({batch}) | 50 / 25 / 25; 100 / 0 / 0 | fails; fails | "
                        "25 / 25 / 50; fails | 75 / 25 / 0; 100 / 0 / 0 | 100 / 0 / 0 |")
    for name, _, _ in G10_WORKLOADS:
        for policy in ("flashneuron", "deepum"):
            assert f"- {name}, `{policy}`: no contiguous run of 7 pages\n" in text
