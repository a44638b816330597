"""A host mutant's identity that survives edits elsewhere in the source.

mutmut numbers the mutants of a function in the order it makes them
(``x_fma__mutmut_62``), so the same number names another change once the function gains
or loses a line, and a module that moves renames all of its mutants. A *fingerprint* is
what the mutant does instead: the function it lives in (class and name, not module, so a
moved function keeps its mutants), the lines it removes and the lines it adds (stripped of
indentation), and, for the rare change made identically at two places of one function,
which of them it is. Two runs share a mutant when they share its fingerprint.
"""

import difflib
import hashlib
import json
import pathlib


__all__ = ["fingerprint", "fingerprints", "changed_lines"]


def changed_lines(original, mutant):
    """The lines ``mutant`` (a function's source) removes from ``original`` and the lines
    it adds, each stripped, in order."""
    before, after = original.splitlines(), mutant.splitlines()
    removed, added = [], []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += [line.strip() for line in before[i1:i2]]
            added += [line.strip() for line in after[j1:j2]]
    return removed, added


def fingerprint(function, removed, added, ordinal=0):
    """The fingerprint (16 hex digits) of the change ``removed`` → ``added`` in
    ``function`` (mutmut's key without its module: ``x_fma``, ``xǁExecutorǁevict``), the
    ``ordinal``-th of that function's identical changes."""
    text = "\n".join([function, *("-" + line for line in removed), *("+" + line for line in added),
                      f"#{ordinal}"])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _module_of(source, root):
    """mutmut's module name for a source file under ``root`` (``matndp/host/x.py`` →
    ``matndp.host.x``; a package's ``__init__`` is the package)."""
    parts = list(source.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def fingerprints(directory):
    """``{mutant name: fingerprint}`` of every mutant mutmut generated in the staging tree
    ``directory`` (read from its ``mutants/`` files and their line-span indexes)."""
    root = pathlib.Path(directory) / "mutants"
    result = {}
    for meta in sorted((root / "matndp" / "host").rglob("*.py.meta")):
        mutated = meta.with_suffix("")                        # x.py.meta -> x.py
        names = json.loads(meta.read_text())["exit_code_by_key"]
        if not names:
            continue
        spans = json.loads(mutated.with_name(mutated.name + ".spans").read_text())["spans"]
        lines = mutated.read_text().splitlines()
        source = lambda key: "\n".join(lines[spans[key][0] - 1:spans[key][1]])
        module = _module_of(mutated, root)
        seen = {}
        # in mutmut's order within each function, so that identical changes keep their order
        for name in sorted(names, key=_mutmut_order):
            generated = name.rpartition(".")[2]               # x_fma__mutmut_62
            function = generated.partition("__mutmut_")[0]    # x_fma
            if name.rpartition(".")[0] != module:
                raise ValueError(f"mutant {name} is not of module {module}")
            original = source(function + "__mutmut_orig").replace(function + "__mutmut_orig",
                                                                   generated)
            removed, added = changed_lines(original, source(generated))
            key = (function, tuple(removed), tuple(added))
            ordinal = seen[key] = seen.get(key, -1) + 1
            result[name] = fingerprint(function, removed, added, ordinal)
    return result


def _mutmut_order(name):
    function, _, number = name.rpartition("__mutmut_")
    return function, int(number)
