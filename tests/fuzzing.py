"""Fuzzing the readers of user input (docs/testing.md, "Fuzzing the input formats").

Every reader is fed inputs made two ways: valid inputs mutated at random (characters and
lines cut, repeated, swapped or replaced, words of the format inserted; for JSON and TOML
also the parsed tree: a value replaced by a random one, a key dropped or added) and random
bytes. The outcome must be a result that passes the format's own check of it, or the
documented error with a message naming the input; anything else — another exception, a
run longer than :data:`HANG_SECONDS`, a result that fails its check — fails the test, and
hypothesis shrinks it to a smallest input.

Each format has two tests of the same check: one in the default suite at a small budget,
one marked ``slow`` at :data:`LARGE_EXAMPLES` cases. Both are seeded (``derandomize``: the
cases follow from the test's source), so a failure replays.
"""

import contextlib
import json
import math
import pathlib
import re
import signal
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st


__all__ = ["HANG_SECONDS", "LARGE_EXAMPLES", "Hang", "time_limit", "outcome", "read_file",
           "refused", "write_input", "fuzz_tests", "mutated_text", "mutated_tree", "json_values",
           "random_bytes", "words_of", "toml_text"]


# A reader given a few kilobytes answers in milliseconds; one that computes this long is
# hung. CPU seconds, so that a loaded machine does not make a slow reader look hung.
HANG_SECONDS = 20
LARGE_EXAMPLES = 10_000

_COMMON = dict(derandomize=True, deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.filter_too_much])


class Hang(BaseException):
    """A reader ran past :data:`HANG_SECONDS`. A BaseException, so that no reader's
    ``except Exception`` can take it for its own error."""


@contextlib.contextmanager
def time_limit(seconds=HANG_SECONDS):
    """Raise :class:`Hang` in the block once it has used ``seconds`` of CPU time."""
    def expire(signum, frame):
        raise Hang(f"no answer within {seconds} s of CPU time")
    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def outcome(call, errors, *, names=(), check=None):
    """``call()``'s result, or the documented error (one of ``errors``) it raised, whose
    message must name each of ``names`` (the file read, typically); a result is passed to
    ``check``, the test's judgement of it. Any other exception propagates and fails the
    test; so does a hang."""
    with time_limit():
        try:
            result = call()
        except errors as error:
            message = str(error)
            assert message.strip(), f"{type(error).__name__} without a message"
            for name in names:
                assert str(name) in message, f"the message does not name {name}: {message}"
            return error
    if check is not None:
        check(result)
    return result


def read_file(read, name, content, errors, check=None):
    """:func:`outcome` of ``read(path)`` of ``content`` written to a temporary file
    ``name``, whose path the error must name."""
    with tempfile.TemporaryDirectory() as folder:
        path = write_input(pathlib.Path(folder) / name, content)
        return outcome(lambda: read(path), errors, names=[path], check=check)


def write_input(path, content):
    """Write ``content`` (text, or bytes) to ``path``; returns ``path``."""
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    return path


def refused(read, path, content, error, where=None):
    """Whether ``read(path)`` of ``content`` raises ``error`` naming ``where`` (``path``
    by default) — a finding's regression case."""
    write_input(path, content)
    with pytest.raises(error, match=re.escape(str(path if where is None else where))):
        read(path)


def fuzz_tests(check, strategy, examples):
    """The two tests of ``check(case)`` over ``strategy``: the default suite's, at
    ``examples`` cases, and the slow one at :data:`LARGE_EXAMPLES`."""
    small = settings(max_examples=examples, **_COMMON)(given(strategy)(check))
    large = pytest.mark.slow(settings(max_examples=LARGE_EXAMPLES, **_COMMON)(given(strategy)(check)))
    return small, large


# Strategies ------------------------------------------------------------------------------

def random_bytes(max_size=2048):
    return st.binary(max_size=max_size)


def words_of(*groups):
    """A flat tuple of the words a format's mutations insert."""
    return tuple(word for group in groups for word in group)


# Words that break readers in general: numbers at and past every limit, signs, quotes,
# separators, non-ASCII letters and digits, control characters.
_HOSTILE = ("0", "-1", "-0", "1e999", "-1e999", "nan", "inf", "NaN", "Infinity", "1e-999",
            "4294967296", "18446744073709551616", "9" * 50, "0x", "0b2", "1_", "_1", "1.2.3",
            "٣", "１", "\u00a0", "\t", "\r", "\x00", "\x0c", "\"", "'", "\\", ",", ":", ";", "#",
            "[", "]", "{", "}", "=", ".", "-", "+", "é", "\U0001F600", "\n")


@st.composite
def mutated_text(draw, valid, words=(), max_mutations=4):
    """One of the texts ``valid``, mutated 1 to ``max_mutations`` times."""
    text = draw(st.sampled_from(valid))
    vocabulary = tuple(words) + _HOSTILE
    for _ in range(draw(st.integers(1, max_mutations))):
        kind = draw(st.sampled_from(("delete", "repeat", "insert", "replace", "random",
                                     "swap lines", "truncate")))
        n = len(text)
        at = draw(st.integers(0, n))
        if kind == "delete" and n:
            text = text[:at] + text[at + draw(st.integers(1, 16)):]
        elif kind == "repeat" and n:
            end = min(n, at + draw(st.integers(1, 64)))
            text = text[:end] + text[at:end] * draw(st.integers(1, 3)) + text[end:]
        elif kind == "insert":
            text = text[:at] + draw(st.sampled_from(vocabulary)) + text[at:]
        elif kind == "replace" and n:
            text = text[:at] + draw(st.sampled_from(vocabulary)) + text[at + draw(st.integers(1, 8)):]
        elif kind == "random":
            text = text[:at] + draw(st.text(max_size=8)) + text[at:]
        elif kind == "swap lines":
            lines = text.split("\n")
            i, j = (draw(st.integers(0, len(lines) - 1)) for _ in range(2))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif kind == "truncate":
            text = text[:at]
    return text


def json_values(keys=()):
    """Any JSON value: numbers at every limit (NaN and infinities, as Python's JSON reader
    takes them), strings (among them ``keys``), lists and objects of them."""
    scalars = (st.none() | st.booleans()
               | st.integers() | st.sampled_from([0, 1, -1, 2**31, 2**63, 10**400])
               | st.floats() | st.sampled_from([0.5, -0.0, 1e308, 5e-324, math.inf, -math.inf, math.nan])
               | st.text(max_size=12) | (st.sampled_from(keys) if keys else st.nothing()))
    names = st.text(max_size=8) | (st.sampled_from(keys) if keys else st.nothing())
    return st.recursive(scalars, lambda children: st.lists(children, max_size=4)
                        | st.dictionaries(names, children, max_size=4), max_leaves=8)


def _places(tree, path=()):
    """Every (path) to a value in ``tree``, the root included."""
    yield path
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _places(value, path + (key,))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            yield from _places(value, path + (index,))


def _at(tree, path):
    for step in path:
        tree = tree[step]
    return tree


@st.composite
def mutated_tree(draw, valid, keys=(), max_mutations=3):
    """One of the JSON-like trees ``valid`` (a deep copy), with 1 to ``max_mutations`` of
    its values replaced by random ones, dropped, repeated, or given a new key."""
    tree = json.loads(json.dumps(draw(st.sampled_from(valid))))
    values = json_values(keys)
    for _ in range(draw(st.integers(1, max_mutations))):
        places = list(_places(tree))
        path = draw(st.sampled_from(places))
        kind = draw(st.sampled_from(("replace", "drop", "add", "repeat", "nudge")))
        if not path:
            if kind == "replace" and draw(st.integers(0, 9)) == 0:
                tree = draw(values)
            continue
        parent, key = _at(tree, path[:-1]), path[-1]
        if kind == "replace":
            parent[key] = draw(values)
        elif kind == "drop":
            del parent[key]
        elif kind == "add":
            target = _at(tree, path)
            if isinstance(target, dict):
                target[draw(st.text(max_size=8) | (st.sampled_from(keys) if keys else st.nothing()))] = draw(values)
            elif isinstance(target, list):
                target.insert(draw(st.integers(0, len(target))), draw(values))
            else:
                parent[key] = draw(values)
        elif kind == "repeat":
            if isinstance(parent, list):
                parent.insert(key, json.loads(json.dumps(parent[key])))
            else:
                parent[key] = [parent[key], parent[key]]
        elif kind == "nudge":
            value = parent[key]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                parent[key] = draw(st.sampled_from(_neighbours(value)))
            elif isinstance(value, str):
                parent[key] = draw(st.sampled_from(["", value.upper(), value + "x", value[:-1],
                                                    " " + value]))
    return tree


def _neighbours(number):
    """Numbers near and far from ``number``, of either type."""
    found = [0, -1, 2**64, -number, number + 1, number - 1, number * 2**40]
    with contextlib.suppress(OverflowError):
        found += [number / 3, float(number)]
    return found


# TOML -------------------------------------------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")


def _toml_key(key):
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def _toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def toml_text(content):
    """``content`` (a dict of TOML's values; None values left out) as a TOML file: its plain
    values first, then a ``[table]`` per dict value, whose values are written inline.
    Anything else (a tree a mutation left without a table at its root) becomes one key."""
    if not isinstance(content, dict):
        return f"value = {_toml_value(content)}\n"
    plain = [f"{_toml_key(key)} = {_toml_value(value)}" for key, value in content.items()
             if value is not None and not isinstance(value, dict)]
    tables = [line for key, value in content.items() if isinstance(value, dict)
              for line in [f"[{_toml_key(key)}]"] + [f"{_toml_key(k)} = {_toml_value(v)}"
                                                      for k, v in value.items() if v is not None]]
    return "\n".join(plain + tables) + "\n"
