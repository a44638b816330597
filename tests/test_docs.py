"""The documentation a user reads: its examples run, the public API has docstrings, every
link resolves inside the repository, and nothing cites a file outside it."""

import doctest
import importlib
import inspect
import re

import pytest

from tests.paths import DOCS, REPOSITORY


EXAMPLE_PAGES = ["python-api.md", "workloads.md"]

# The modules of the Python API (docs/python-api.md): every class and function they export
# has a docstring, and so does every public method of the classes a study uses directly.
API_MODULES = [
    "matndp.host.graph", "matndp.host.zoo", "matndp.host.zoo.builder", "matndp.host.zoo.torch_import",
    "matndp.host.zoo.summary", "matndp.host.gpu", "matndp.host.report", "matndp.host.runtime",
    "matndp.host.csr_bus", "matndp.host.calibration", "matndp.host.energy", "matndp.host.offload",
    "matndp.host.tier", "matndp.host.tier.run", "matndp.host.tier.simulate", "matndp.host.tier.config",
    "matndp.host.tier.flash", "matndp.host.units", "matndp.host.output", "matndp.host.access_stream",
    "matndp.host.registry", "matndp.host.plots", "matndp.host.tier.plot",
    "matndp.hw.ndp_slice", "matndp.hw.config", "matndp.hw.export",
    "matndp.sim.runner", "matndp.sim.flows.trigger_layer", "matndp.sim.designs",
]
METHODS_OF = ["matndp.host.zoo.builder:GraphBuilder", "matndp.host.graph:IterationGraph",
              "matndp.host.graph:Tensor", "matndp.host.runtime:NDPRuntime"]

# Files of the design references kept outside the repository: the documentation stands alone.
OUTSIDE = re.compile(r"ARCHITECTURE(\.md| §)|REFERENCES(\.md)?\b|TOOLCHAIN\.md|\.\./shared|/work/")


@pytest.mark.parametrize("page", EXAMPLE_PAGES)
def test_the_examples_run(page):
    result = doctest.testfile(str(DOCS / page), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 5 and result.failed == 0


def _undocumented(obj):
    doc = inspect.getdoc(obj) or ""
    # A dataclass without a docstring gets its signature as one.
    return not doc.strip() or (inspect.isclass(obj) and doc.startswith(f"{obj.__name__}("))


def test_the_public_api_has_docstrings():
    missing = []
    for name in API_MODULES:
        module = importlib.import_module(name)
        if not (module.__doc__ or "").strip():
            missing.append(name)
        for attribute in getattr(module, "__all__", ()):
            obj = getattr(module, attribute)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and _undocumented(obj):
                missing.append(f"{name}.{attribute}")
    for path in METHODS_OF:
        module, name = path.split(":")
        cls = getattr(importlib.import_module(module), name)
        for attribute, member in vars(cls).items():
            if attribute.startswith("_") or attribute == "elaborate":
                continue
            if (inspect.isfunction(member) or isinstance(member, property)) and not (member.__doc__ or "").strip():
                missing.append(f"{name}.{attribute}")
    assert missing == []


def _documents():
    yield REPOSITORY / "README.md"
    yield from sorted(DOCS.glob("*.md"))


def _python_sources():
    for folder in ("hw", "sim", "host"):
        yield from sorted((REPOSITORY / folder).rglob("*.py"))


def test_nothing_cites_a_file_outside_the_repository():
    citing = [f"{path.relative_to(REPOSITORY)}:{number}"
              for path in [*_documents(), *_python_sources()]
              for number, line in enumerate(path.read_text().splitlines(), 1) if OUTSIDE.search(line)]
    assert citing == []


def test_links_resolve_inside_the_repository():
    broken = []
    for path in _documents():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text()):
            if re.match(r"[a-z]+://", target):
                continue
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(REPOSITORY)} -> {target}")
    assert broken == []


def test_the_readme_links_the_guides():
    readme = (REPOSITORY / "README.md").read_text()
    for guide in ("docs/python-api.md", "docs/workloads.md", "docs/waveforms.md", "docs/verilog.md",
                  "docs/benchmarks.md", "LICENSE"):
        assert f"]({guide})" in readme, guide


def test_the_license_is_the_one_the_package_declares():
    import tomllib
    declared = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]["license"]["text"]
    assert declared == "BSD-2-Clause"
    text = (REPOSITORY / "LICENSE").read_text()
    assert text.startswith("BSD 2-Clause License")
    assert "Redistributions in binary form must reproduce" in text
    assert "Neither the name" not in text         # the third clause is BSD-3's
