"""Numbers with their units, as every command and report prints them.

Bytes are binary (``1 KiB = 1024 B``: memory sizes and traffic are counted in pages and
sectors); time, energy and power use SI prefixes. Each function returns a short string
with three significant digits, e.g. ``format_bytes(2.07e10) == '19.3 GiB'``.
"""

import math


__all__ = ["format_bytes", "format_seconds", "format_joules", "format_watts", "format_si"]


_BINARY = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""),
       (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"))


def _digits(value):
    """Three significant digits without an exponent."""
    return f"{value:.3g}" if abs(value) < 1e3 else f"{value:.0f}"


def format_bytes(count):
    """``1536`` → ``'1.50 KiB'``; whole bytes below 1 KiB (``'512 B'``)."""
    if not math.isfinite(count):
        return f"{count} B"
    value, unit = float(count), 0
    while abs(value) >= 1024 and unit < len(_BINARY) - 1:
        value /= 1024
        unit += 1
    if unit == 0:
        return f"{count:.0f} B"
    return f"{value:.3g} {_BINARY[unit]}" if abs(value) < 1000 else f"{value:.0f} {_BINARY[unit]}"


def format_si(value, unit):
    """``value`` with the SI prefix that puts it in 1..1000: ``format_si(0.0123, 's')`` is
    ``'12.3 ms'``. Zero and values that are not finite keep the plain unit."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g} {unit}"
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{_digits(value / scale)} {prefix}{unit}"
    scale, prefix = _SI[-1]
    return f"{_digits(value / scale)} {prefix}{unit}"


def format_seconds(seconds):
    """Seconds with an SI prefix: ``'10.3 s'``, ``'12.5 ms'``, ``'3.2 µs'``."""
    return format_si(seconds, "s")


def format_joules(joules):
    """Joules with an SI prefix: ``'30 J'``, ``'550 mJ'``."""
    return format_si(joules, "J")


def format_watts(watts):
    """Watts with an SI prefix: ``'420 W'``."""
    return format_si(watts, "W")
