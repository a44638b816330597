"""The mutation tooling (tools/mutate, docs/testing.md), without running a mutation run:
the RTL catalog applies to the tree as it is, mutants land in copies only, the host sample
is reproducible, and the kill rate and the generated report add up."""

import pathlib

import pytest

from tests.paths import REPOSITORY
from tools.mutate import host, report, rtl
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
    assert not report.meets_target(run)
    with pytest.raises(ValueError, match="outcome of z must be one of"):
        Outcome("z", "x", "lost")


def test_results_round_trip_and_the_report_section_is_replaced_in_place(tmp_path):
    run = _run()
    run.save(tmp_path / "rtl.json")
    assert load_run(tmp_path / "rtl.json") == run
    document = tmp_path / "testing.md"
    document.write_text("# Testing\n\nProse before.\n")
    report.write(document, [run])
    report.write(document, [run])
    text = document.read_text()
    assert text.startswith("# Testing\n\nProse before.\n") and text.count(report.BEGIN) == 1
    assert "| `x` | 3 | 2 | 1 | 0 | 66.7 % |" in text and "| all | 5 | 3 | 1 | 1 | 75.0 % |" in text
    assert "| `c` | `p → q` | why |" in text and "| `d` | `r → s` | cannot differ |" in text


def test_every_host_equivalent_names_a_host_mutant_and_argues_it():
    for name, argument in host.EQUIVALENT_MUTANTS.items():
        assert name.startswith("matndp.host.") and "__mutmut_" in name, name
        assert host.part_of(name).startswith("host")
        assert len(argument.split()) >= 8, name
