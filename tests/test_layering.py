"""The layering rules of docs/architecture.md, read from the import graph of the source:
``hw`` imports nothing else of the project; ``host`` never imports ``sim`` or cocotb;
``sim`` may import both. Every import counts, those inside functions included."""

import ast
import fnmatch
import subprocess
import tomllib

import pytest

from tests.paths import REPOSITORY


PACKAGES = ("hw", "sim", "host")
SIMULATION_ONLY = ("cocotb", "cocotb_tools", "cocotbext", "cocotb_bus")


def _module_name(path):
    relative = path.relative_to(REPOSITORY).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["matndp", *parts])


def _imports(path):
    """(line, imported module) of every import in ``path``, relative ones resolved."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            found.append((node.lineno, name))
    return found


def _sources(package):
    return sorted((REPOSITORY / package).rglob("*.py"))


def _import_graph():
    return {path: _imports(path) for package in PACKAGES for path in _sources(package)}


def _violations(package, allowed, forbidden_outside=()):
    problems = []
    for path in _sources(package):
        for line, name in _imports(path):
            top = name.split(".")[0]
            where = f"{path.relative_to(REPOSITORY)}:{line}"
            if top in PACKAGES:
                problems.append(f"{where}: bare `{name}`; import it as matndp.{name}")
            elif top == "matndp" and not any(name == prefix or name.startswith(prefix + ".")
                                             for prefix in allowed):
                problems.append(f"{where}: {package} imports {name}")
            elif top in forbidden_outside:
                problems.append(f"{where}: {package} imports {name}")
    return problems


def test_the_import_graph_is_read_at_all():
    graph = _import_graph()
    assert len(graph) > 50
    names = {name for imports in graph.values() for _, name in imports}
    # The rules below would pass vacuously if relative imports were not resolved.
    assert "matndp.hw.config" in names and "matndp.host.gpu" in names


def test_hw_imports_nothing_else_of_the_project():
    assert _violations("hw", allowed=("matndp.hw",), forbidden_outside=SIMULATION_ONLY) == []


def test_host_never_imports_sim_or_cocotb():
    assert _violations("host", allowed=("matndp.hw", "matndp.host"),
                       forbidden_outside=SIMULATION_ONLY) == []


def test_sim_imports_only_the_project():
    assert _violations("sim", allowed=("matndp.hw", "matndp.host", "matndp.sim")) == []


def test_the_checker_sees_a_violation(tmp_path, monkeypatch):
    source = REPOSITORY / "host" / "zz_layering_probe.py"
    monkeypatch.setattr("tests.test_layering._sources",
                        lambda package: [source] if package == "host" else [])
    original = _imports
    monkeypatch.setattr("tests.test_layering._imports", lambda path: (
        [(1, "matndp.sim.runner"), (2, "cocotb"), (3, "hw.config")] if path == source
        else original(path)))
    problems = _violations("host", allowed=("matndp.hw", "matndp.host"),
                           forbidden_outside=SIMULATION_ONLY)
    assert len(problems) == 3


def test_every_package_folder_is_packaged():
    declared = set(tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
                   ["tool"]["setuptools"]["packages"])
    found = {_module_name(init) for package in PACKAGES
             for init in (REPOSITORY / package).rglob("__init__.py")}
    assert found == declared


@pytest.mark.parametrize("package", PACKAGES)
def test_a_bare_folder_import_is_refused(package):
    with pytest.raises(ImportError, match=f"import matndp.{package}"):
        __import__(package)


def test_every_data_file_of_a_package_is_packaged():
    """Every file of a package folder that is not Python (kernel sources, templates,
    harnesses) matches its package's package-data, so that a wheel carries it."""
    setuptools = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                             *PACKAGES], cwd=REPOSITORY, check=True, capture_output=True,
                            text=True).stdout.split()
    for name in listed:
        path = REPOSITORY / name
        if path.suffix == ".py" or not path.exists():
            continue
        folder = path.parent
        while not (folder / "__init__.py").exists():
            folder = folder.parent
        package = _module_name(folder / "__init__.py")
        patterns = setuptools["package-data"].get(package, [])
        relative = path.relative_to(folder).as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), (
            f"{name} is not in the package-data of {package} ({patterns})")
