"""The copy of the repository a mutation run works in: one package of the project under
``matndp/`` (its import name), with the tests and docs beside it."""

import pathlib
import shutil


__all__ = ["copy_package"]


def copy_package(repository, directory, package, files):
    """Copy ``package`` (``hw`` or ``host``) to ``directory/matndp/``, ``tests/``, ``docs/``
    and ``tools/`` (the mutant catalog, which tests import) beside it, and ``files`` of the repository's top level; ``directory`` is
    emptied first. Returns it."""
    repository, directory = pathlib.Path(repository), pathlib.Path(directory)
    if directory.exists():
        shutil.rmtree(directory)
    (directory / "matndp").mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(repository / package, directory / "matndp" / package, ignore=ignore)
    for folder in ("tests", "docs", "tools"):
        shutil.copytree(repository / folder, directory / folder, ignore=ignore)
    for name in files:
        shutil.copy2(repository / name, directory / name)
    return directory
