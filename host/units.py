"""Numbers with their units, as every command and report prints them.

One convention everywhere: SI prefixes, decimal. Bytes too (``1 GB = 10**9 B``), as every
size and bandwidth the command line takes (``--hbm-gb``, ``--link-gbs``), the GPU presets
(``capacity_gb``, ``memory_gbs``), the figures' axes and the tables use them; JSON carries
plain bytes and seconds. Each function returns a short string with three significant
digits, e.g. ``format_bytes(2.07e10) == '20.7 GB'``. (Hardware structures sized in powers
of two, a 4 KiB page or a 32 KiB scratchpad, are named by their exact size in the docs.)
"""

import math


__all__ = ["GB", "format_bytes", "format_seconds", "format_joules", "format_watts", "format_si"]


# Bytes in a gigabyte, for the figures' and tables' axes and columns.
GB = 1e9

_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""),
       (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"))


def _digits(value):
    """Three significant digits without an exponent (999.9 rounds to 1000)."""
    text = f"{value:.3g}"
    return f"{value:.0f}" if "e" in text else text


def format_bytes(count):
    """``1536`` → ``'1.54 kB'``; bytes below 1 kB as they are (``'512 B'``)."""
    if not math.isfinite(count) or abs(count) < 1e3:
        return f"{count:g} B" if not float(count).is_integer() else f"{count:.0f} B"
    return format_si(count, "B")


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
