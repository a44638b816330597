"""Documents written by hand around a generated part: the part sits between two marker
lines and is replaced whole, never anything around it."""

import re


__all__ = ["replace_marked"]


def replace_marked(text, begin, end, generated, *, where):
    """``text`` with the lines between its marker lines ``begin`` and ``end`` replaced by
    ``generated`` (which ends with a newline). Raises ValueError naming ``where`` when the
    markers are missing, repeated or out of order."""
    pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.DOTALL)
    if text.count(begin) != 1 or text.count(end) != 1 or not pattern.search(text):
        raise ValueError(f"{where} needs exactly one line {begin!r} followed by one line {end!r}")
    return pattern.sub(lambda _: f"{begin}\n{generated}{end}", text)
