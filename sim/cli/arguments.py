"""Argument types of the command line that refuse bad values where they are parsed.

Each is an ``argparse`` type: a bad value ends the command with exit code 2 and the
message ``argument --batch: must be an integer >= 1, got '0'`` (no traceback). Names are
checked against a registry of the host models (:class:`matndp.host.registry.Registry`),
whose list is the command's ``choices`` and whose message names the known ones.
"""

import argparse
import math
import sys


__all__ = ["integer", "number", "fraction", "name_in", "names_in", "numbers", "SEED", "SEED_RANGE"]


# Seeds are what numpy's and Python's generators both take: 32-bit unsigned values.
SEED_RANGE = (0, 2**32 - 1)


def integer(minimum, maximum=None):
    """An integer in ``minimum..maximum`` (no upper bound when ``maximum`` is None)."""
    bounds = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer {bounds}, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"must be an integer {bounds}, got {text!r}")
        return value
    return parse


def number(what="", *, above=0.0, at_most=None, unit="", warn_above=None):
    """A finite number greater than ``above`` (and at most ``at_most``); ``what`` and
    ``unit`` name it in messages (``HBM size must be > 0 GB``). ``warn_above`` is
    ``(limit, reason)``: a value above ``limit`` is taken, with a warning giving the reason."""
    subject = f"{what} must be" if what else "must be"
    unit = f" {unit}" if unit else ""
    bounds = f"> {above:g}{unit}" if at_most is None else f"in ({above:g}, {at_most:g}]{unit}"

    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{subject} a number, got {text!r}") from None
        if not (math.isfinite(value) and value > above and (at_most is None or value <= at_most)):
            raise argparse.ArgumentTypeError(f"{subject} {bounds}, got {value}")
        if warn_above is not None and value > warn_above[0]:
            print(f"matndp: warning: {what or 'value'} {value:g}{unit} {warn_above[1]}",
                  file=sys.stderr)
        return value
    return parse


def fraction(*, below=1.0):
    """A number in ``0 <= value < below`` (a probability, a share)."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number in [0, {below:g}), got {text!r}") from None
        if not 0.0 <= value < below:
            raise argparse.ArgumentTypeError(f"must be a number in [0, {below:g}), got {text!r}")
        return value
    return parse


SEED = integer(*SEED_RANGE)


def numbers(parse_one):
    """Comma-separated values, each checked by ``parse_one``."""
    def parse(text):
        return [parse_one(item.strip()) for item in text.split(",")]
    return parse


def name_in(registry, *, fold_case=False):
    """A name registered in ``registry`` (in any letter case with ``fold_case``)."""
    def parse(text):
        key = text.lower() if fold_case else text
        if key not in registry:
            raise argparse.ArgumentTypeError(str(registry.unknown(text)))
        return key
    return parse


def names_in(registry, *, every=None):
    """Comma-separated names registered in ``registry``; the word ``every`` stands for
    all of them."""
    one = name_in(registry)

    def parse(text):
        if every is not None and text == every:
            return registry.names
        return tuple(one(item.strip()) for item in text.split(","))
    return parse
