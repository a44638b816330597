"""The mutation tooling (tools/mutate, docs/testing.md), without running a mutation run:
the RTL catalog applies to the tree as it is, mutants land in copies only, a host sample is
reproducible and leaves out the mutants earlier runs drew, a mutant keeps its identity
when its function changes elsewhere, and the record of runs, the kill rates and the
generated report add up."""

import json
import pathlib

import pytest

from tests.paths import DOCS, REPOSITORY
from tools.mutate import history, host, identity, report, rtl
from tools.mutate.__main__ import HISTORY, _parser
from tools.mutate.results import EQUIVALENT, KILLED, SURVIVED, Outcome, Run, load_run
from tools.mutate.rtl_mutants import MUTANTS, Mutant, part_of_file


def test_every_rtl_mutant_applies_exactly_once_to_the_tree():
    for mutant in MUTANTS:
        text = (REPOSITORY / mutant.file).read_text()
        assert text.count(mutant.snippet) == 1, f"{mutant.id}: snippet found {text.count(mutant.snippet)} times"


def test_rtl_mutants_have_unique_ids_and_name_tests_that_exist():
    assert len({mutant.id for mutant in MUTANTS}) == len(MUTANTS)
    for mutant in MUTANTS:
        paths = [argument.split("::")[0] for argument in mutant.tests
                 if argument.startswith("tests/")]
        assert paths, f"{mutant.id} names no test file"
        for path in paths:
            assert (REPOSITORY / path).exists(), f"{mutant.id}: no {path}"
        for argument in mutant.tests:
            if "::" in argument:
                function = argument.split("::")[1].split("[")[0]
                assert f"def {function}(" in (REPOSITORY / argument.split("::")[0]).read_text()


def test_the_catalog_covers_the_parts_it_promises():
    parts = {mutant.part for mutant in MUTANTS}
    assert {"trigger", "bus", "fp", "stream", "arbiter", "engine", "ndp_slice"} <= parts
    assert part_of_file("hw/fp/fma.py") == "fp" and part_of_file("hw/stream.py") == "stream"


def test_a_mutant_lands_in_the_copy_and_the_copy_is_what_is_imported(tmp_path):
    mutant = next(m for m in MUTANTS if m.id == "sticky-not-sticky")
    original = (REPOSITORY / mutant.file).read_text()
    copy = rtl.copy_tree(REPOSITORY, tmp_path / "copy")
    rtl.apply(copy, mutant)
    mutated = (copy / "matndp" / mutant.file).read_text()
    assert mutant.replacement in mutated and mutant.snippet not in mutated
    assert (REPOSITORY / mutant.file).read_text() == original
    rtl._check_copy_is_imported(copy)


@pytest.mark.parametrize("snippet", ["no such text anywhere", "import"])
def test_a_snippet_that_does_not_occur_exactly_once_is_refused(tmp_path, snippet):
    copy = tmp_path / "copy"
    (copy / "matndp" / "hw").mkdir(parents=True)
    (copy / "matndp" / "hw" / "x.py").write_text("import a\nimport b\n")
    mutant = Mutant("probe", "hw/x.py", snippet, "changed", ("tests/hw",))
    with pytest.raises(ValueError, match="the snippet occurs"):
        rtl.apply(copy, mutant)


def test_a_mutant_must_change_something_and_name_tests():
    with pytest.raises(ValueError, match="changes nothing"):
        Mutant("same", "hw/x.py", "a", "a", ("tests/hw",))
    with pytest.raises(ValueError, match="names no test"):
        Mutant("untested", "hw/x.py", "a", "b", ())


def test_the_host_sample_depends_on_the_seed_alone():
    names = [f"matndp.host.m{index}.x_f__mutmut_{index}" for index in range(1000)]
    first = host.sample(names, 50, seed=3)
    assert first == host.sample(list(reversed(names)), 50, seed=3) == sorted(first)
    assert len(set(first)) == 50 and set(first) <= set(names)
    assert host.sample(names, 50, seed=4) != first
    assert host.sample(names, None, seed=3) == sorted(names) == host.sample(names, 5000, seed=3)


def test_a_draw_leaves_out_the_mutants_earlier_runs_drew():
    fingerprints = {f"matndp.host.m.x_f__mutmut_{index}": f"{index:016x}" for index in range(100)}
    seen = {f"{index:016x}" for index in range(0, 100, 2)}          # the even ones
    drawn = host.draw(fingerprints, 30, seed=5, seen=seen)
    assert len(drawn) == 30 and drawn == sorted(drawn)
    assert all(int(name.rpartition("_")[2]) % 2 == 1 for name in drawn)
    assert host.draw(fingerprints, 30, seed=5, seen=seen) == drawn
    assert host.draw(fingerprints, 30, seed=6, seen=seen) != drawn
    # asking for more than are left draws all that are left; --all runs seen ones too
    assert len(host.draw(fingerprints, 80, seed=5, seen=seen)) == 50
    assert host.draw(fingerprints, None, seed=None, seen=seen) == sorted(fingerprints)


def test_a_run_draws_a_new_seed_unless_one_is_given():
    assert _parser().parse_args(["host"]).seed is None
    assert _parser().parse_args(["host", "--seed", "7"]).seed == 7
    with pytest.raises(SystemExit):
        _parser().parse_args(["host", "--rerun", "--collect"])


def test_the_changed_lines_of_a_function():
    original = "def f(x):\n    y = x + 1\n    return y\n"
    assert identity.changed_lines(original, original.replace("x + 1", "x - 1")) == \
        (["y = x + 1"], ["y = x - 1"])
    assert identity.changed_lines(original, original.replace("    y = x + 1\n", "")) == \
        (["y = x + 1"], [])


def _generated(repository, tmp_path, name):
    """The fingerprints of the mutants mutmut makes of ``repository`` (a ``host/`` and a
    pyproject.toml), staged in ``tmp_path/name``."""
    pytest.importorskip("mutmut")
    for folder in ("tests", "docs"):
        (repository / folder).mkdir(exist_ok=True)
    (repository / "Makefile").touch()
    (repository / "pyproject.toml").write_text('[project]\nname = "probe"\n')
    stage = host.stage(repository, tmp_path / name)
    names = host.mutant_names(stage)
    fingerprints = identity.fingerprints(stage)
    assert sorted(fingerprints) == names
    return fingerprints


def test_a_mutant_keeps_its_fingerprint_when_its_function_changes_elsewhere_or_moves(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    (before / "host").mkdir(parents=True)
    (after / "host" / "moved").mkdir(parents=True)
    (before / "host" / "a.py").write_text(
        "def f(x):\n    return x + 1\n\n\nclass C:\n    def g(self, y):\n        return y * 2\n")
    # f gains a line before the one mutated, so mutmut numbers the mutants of that line
    # anew; C moves to another module
    (after / "host" / "a.py").write_text("def f(x):\n    x = x - 3\n    return x + 1\n")
    (after / "host" / "moved" / "b.py").write_text(
        "class C:\n    def g(self, y):\n        return y * 2\n")
    old = _generated(before, tmp_path, "old")
    new = _generated(after, tmp_path, "new")
    assert len(set(old.values())) == len(old) and len(set(new.values())) == len(new)
    kept = {name for name, print_ in new.items() if print_ in set(old.values())}
    # every mutant of `return x + 1` and of C.g is the same mutant; the new line's are new
    assert {name.rpartition(".")[2].partition("__")[0] for name in kept} == {"x_f", "xǁCǁg"}
    assert sum(name.startswith("matndp.host.a.x_f") for name in kept) \
        == sum(name.startswith("matndp.host.a.x_f") for name in old)
    assert sum(name.startswith("matndp.host.moved.b.") for name in kept) \
        == sum(name.startswith("matndp.host.a.xǁCǁg") for name in old)
    renumbered = {name for name in kept if name.startswith("matndp.host.a.x_f")} \
        - set(old)
    assert renumbered, "the new line's mutants come first, so the old ones are renumbered"


def test_an_equivalence_holds_only_for_the_change_it_was_argued_for():
    name, (change, argument) = next(iter(host.EQUIVALENT_MUTANTS.items()))
    diff = f"--- a.py\n+++ a.py\n@@ -1,1 +1,1 @@\n-something else\n+    {change}"
    assert host.equivalence(name, diff) == argument
    assert host.equivalence(name, diff.replace(change, change + " + 1")) is None
    assert host.equivalence("matndp.host.nothing.x_f__mutmut_1", diff) is None


def test_host_parts_are_sub_packages():
    assert host.part_of("matndp.host.tier.policies.tm.x_plan__mutmut_2") == "host/tier"
    assert host.part_of("matndp.host.energy.x__flop_pj__mutmut_1") == "host"
    assert host.part_of("matndp.host.kernels.iss.xǁISSǁstep__mutmut_7") == "host/kernels"
    assert host.outcome_of("timeout") == KILLED and host.outcome_of("no tests") == SURVIVED


def test_the_staging_tree_holds_host_as_matndp_host(tmp_path):
    staged = host.stage(REPOSITORY, tmp_path / "stage")
    assert (staged / "matndp" / "host" / "runtime.py").exists()
    assert (staged / "tests" / "host").is_dir() and (staged / "docs").is_dir()
    assert 'source_paths = ["matndp/host"]' in (staged / "pyproject.toml").read_text()


def _run():
    outcomes = [Outcome("a", "x", KILLED), Outcome("b", "x", KILLED), Outcome("c", "x", SURVIVED, "p → q", "why"),
                Outcome("d", "y", EQUIVALENT, "r → s", "cannot differ"), Outcome("e", "y", KILLED)]
    return Run("rtl", "python -m tools.mutate rtl", 9, outcomes)


def test_the_kill_rate_leaves_equivalent_mutants_out():
    run = _run()
    assert run.kill_rate() == 3 / 4 and run.kill_rate("x") == 2 / 3 and run.kill_rate("y") == 1.0
    entry = history.entry(run)
    assert report.kill_rate(entry) == 3 / 4 and report.kill_rate(entry, "x") == 2 / 3
    assert not report.meets_target(entry)
    with pytest.raises(ValueError, match="outcome of z must be one of"):
        Outcome("z", "x", "lost")


def test_results_round_trip_and_the_report_section_is_replaced_in_place(tmp_path):
    run = _run()
    run.save(tmp_path / "rtl.json")
    assert load_run(tmp_path / "rtl.json") == run
    document = tmp_path / "testing.md"
    document.write_text("# Testing\n\nProse before.\n")
    report.write(document, [history.entry(run)])
    report.write(document, [history.entry(run)])
    text = document.read_text()
    assert text.startswith("# Testing\n\nProse before.\n") and text.count(report.BEGIN) == 1
    assert "| `x` | 3 | 2 | 1 | 0 | 66.7 % |" in text and "| all | 5 | 3 | 1 | 1 | 75.0 % |" in text
    assert "| `c` | `p → q` | why |" in text and "| `d` | `r → s` | cannot differ |" in text


def test_every_host_equivalent_names_a_host_mutant_its_change_and_argues_it():
    for name, (change, argument) in host.EQUIVALENT_MUTANTS.items():
        assert name.startswith("matndp.host.") and "__mutmut_" in name, name
        assert host.part_of(name).startswith("host")
        assert change.strip() and "\n" not in change, name
        assert len(argument.split()) >= 8, name


def _host_run(seen_names=()):
    outcomes = [Outcome(f"matndp.host.m.x_f__mutmut_{index}", "host", outcome,
                        "" if outcome == KILLED else f"--- a\n+++ a\n-old {index}\n+new {index}",
                        "why not" if outcome == EQUIVALENT else "", f"{index:016x}",
                        f"matndp.host.m.x_f__mutmut_{index}" in seen_names)
                for index, outcome in enumerate([KILLED] * 7 + [SURVIVED, SURVIVED, EQUIVALENT])]
    draw = {"seed": 42, "sample": 10, "started": "2026-01-02T03:04:05Z", "source": "abc",
            "seen_before": 5, "drawn": sorted(o.fingerprint for o in outcomes)}
    return Run("host", "python -m tools.mutate host --seed 42", 1000, outcomes, draw)


def test_a_run_is_recorded_with_its_draw_and_counted_over_its_fresh_mutants(tmp_path):
    path = tmp_path / "runs.json"
    assert history.load(path) == [] and history.seen([]) == set()
    entry = history.append(path, _host_run())
    assert (entry["seed"], entry["population"], entry["ran"], entry["fresh"]) == (42, 1000, 10, 10)
    assert (entry["killed"], entry["survived"], entry["equivalent"]) == (7, 2, 1)
    assert entry["parts"] == {"host": [10, 7, 2, 1]}
    assert [m["name"] for m in entry["survivors"]] == ["matndp.host.m.x_f__mutmut_7",
                                                       "matndp.host.m.x_f__mutmut_8"]
    assert history.seen(history.load(path)) == {f"{index:016x}" for index in range(10)}
    assert report.kill_rate(entry) == 7 / 9 and not report.meets_target(entry)
    # the same run collected again replaces its record; another is added after it
    history.append(path, _host_run())
    later = _host_run(seen_names={"matndp.host.m.x_f__mutmut_0", "matndp.host.m.x_f__mutmut_7"})
    later.draw["started"] = "2026-01-03T00:00:00Z"
    entry = history.append(path, later)
    assert len(history.load(path)) == 2
    # mutants an earlier run drew are left out of the counts
    assert (entry["fresh"], entry["killed"], entry["survived"], entry["counted"]) == (8, 6, 1, "fresh")
    assert report.kill_rate(entry) == 6 / 7


def test_a_rerun_is_counted_over_all_it_ran_and_the_report_keeps_the_latest_fresh_sample():
    fresh = history.entry(_host_run())
    rerun = _host_run(seen_names={f"matndp.host.m.x_f__mutmut_{i}" for i in range(10)})
    rerun.draw.update(rerun=True, started="2026-02-01T00:00:00Z")
    rerun = history.entry(rerun)
    assert (rerun["fresh"], rerun["counted"], rerun["killed"]) == (0, "all", 7)
    rtl_run = history.entry(_run())
    runs = [fresh, rerun, rtl_run]
    assert report.latest(runs) == [fresh, rtl_run]
    text = report.section(runs)
    assert "seed 42, 7 killed, 2 survived, 1 equivalent of 10 run (1000 in all, 10 of them fresh)" in text
    assert "| `matndp.host.m.x_f__mutmut_7` | `new 7` |  |" in text
    assert "| 2026-02-01T00:00:00Z | `abc` | 42, rerun | 1000 | 5 | 10 | 0 | all | 7 | 2 | 1 | 77.8 % |" in text
    assert "### RTL" in text and "| `c` | `p → q` | why |" in text


def test_the_committed_record_adds_up_and_the_generated_section_is_made_from_it():
    runs = history.load(HISTORY)
    assert HISTORY.parent == DOCS and runs
    for entry in runs:
        counted = entry["killed"] + entry["survived"] + entry["equivalent"]
        assert counted == (entry["fresh"] if entry["counted"] == "fresh" else entry["ran"])
        if entry["parts"]:
            assert [sum(column) for column in zip(*entry["parts"].values())] == \
                [counted, entry["killed"], entry["survived"], entry["equivalent"]]
        assert len(entry["survivors"]) in (0, entry["survived"])
        if entry["kind"] == "host":
            assert len(entry["drawn"]) == len(set(entry["drawn"])) == entry["ran"] + entry["unchecked"]
            assert entry["fresh"] <= entry["ran"]
    # every fresh sample's mutants were new to it
    drawn = set()
    for entry in (e for e in runs if e["kind"] == "host"):
        if entry["counted"] == "fresh" and not entry.get("reconstructed"):
            assert not drawn & set(entry["drawn"])
        drawn |= set(entry["drawn"])
    text = (DOCS / "testing.md").read_text()
    assert report.section(runs) in text
