"""Divisor descriptors for ``divc`` and ``remc``: division by a constant as a multiply and a
shift, for every dividend up to a stated maximum.

For a divisor ``d`` and a shift ``k``, the multiplier ``m = ceil(2^k / d)`` overshoots
``2^k / d`` by ``e / (d · 2^k)`` with ``e = m·d − 2^k`` (0 ≤ e < d), so for ``n = q·d + r``

    n·m / 2^k = q + (r·2^k + n·e) / (d·2^k),

which rounds down to ``q`` exactly when ``r·2^k + n·e < d·2^k``. Over ``0 … N`` the left
side is largest either at ``n = N`` or at the largest ``n ≤ N`` with ``r = d − 1`` (within
the last ``d`` dividends it falls by ``2^k + e`` per step except where ``r`` wraps), so
checking those two dividends checks them all. When ``N < d`` every quotient is 0 and the
multiplier 0 serves. Otherwise a larger multiplier only increases ``e`` and a smaller one
fails at ``n = d``, so when this ``m`` fails (or does not fit 32 bits) for every shift, no
descriptor exists for that range.
"""

from dataclasses import dataclass

from matndp.hw.engine.isa import DIVISOR_FIELDS


__all__ = ["DivisorDescriptor", "NoDescriptorError", "divisor_descriptor", "MAX_DIVIDEND"]


MAX_DIVIDEND = (1 << DIVISOR_FIELDS["multiplier"][1]) - 1   # divc/remc read a[31:0]
_MAX_DIVISOR = (1 << DIVISOR_FIELDS["divisor"][1]) - 1
_MAX_MULTIPLIER = (1 << DIVISOR_FIELDS["multiplier"][1]) - 1
_MAX_SHIFT = (1 << DIVISOR_FIELDS["shift"][1]) - 1


class NoDescriptorError(ValueError):
    """No multiplier and shift divide every dividend of the range exactly."""


@dataclass(frozen=True)
class DivisorDescriptor:
    divisor: int
    multiplier: int
    shift: int

    def quotient(self, n):
        """What ``divc`` computes for dividend ``n`` (the ISA's formula, not ``n // d``)."""
        return ((n & MAX_DIVIDEND) * self.multiplier) >> self.shift

    @property
    def word(self):
        """The 64-bit argument word (``DIVISOR_LAYOUT``)."""
        word = 0
        for name in ("multiplier", "shift", "divisor"):
            lsb, _ = DIVISOR_FIELDS[name]
            word |= getattr(self, name) << lsb
        return word

    @classmethod
    def from_word(cls, word):
        def field(name):
            lsb, width = DIVISOR_FIELDS[name]
            return (word >> lsb) & ((1 << width) - 1)
        return cls(field("divisor"), field("multiplier"), field("shift"))


def _exact_up_to(divisor, multiplier, shift, max_dividend):
    excess = multiplier * divisor - (1 << shift)
    limit = divisor << shift
    candidates = [max_dividend]
    if max_dividend >= divisor - 1:
        candidates.append(max_dividend - (max_dividend - (divisor - 1)) % divisor)
    return all((n % divisor << shift) + n * excess < limit for n in candidates)


def divisor_descriptor(divisor, max_dividend=MAX_DIVIDEND):
    """The descriptor with the smallest shift that divides every ``n`` in
    ``0 … max_dividend`` by ``divisor`` exactly; :class:`NoDescriptorError` if none does."""
    for name, value in (("divisor", divisor), ("max_dividend", max_dividend)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{name} must be an int, not {value!r}")
    if not 1 <= divisor <= _MAX_DIVISOR:
        raise ValueError(f"divisor {divisor} is outside 1 … {_MAX_DIVISOR} (the descriptor's "
                         f"divisor field)")
    if not 0 <= max_dividend <= MAX_DIVIDEND:
        raise ValueError(f"max_dividend {max_dividend} is outside 0 … {MAX_DIVIDEND} "
                         f"(divc and remc divide a[31:0])")
    if max_dividend < divisor:
        return DivisorDescriptor(divisor, 0, 0)
    for shift in range(_MAX_SHIFT + 1):
        multiplier = -(-(1 << shift) // divisor)
        if multiplier > _MAX_MULTIPLIER:
            break
        if _exact_up_to(divisor, multiplier, shift, max_dividend):
            return DivisorDescriptor(divisor, multiplier, shift)
    raise NoDescriptorError(
        f"no divisor descriptor divides every dividend 0 … {max_dividend} by {divisor} exactly "
        f"with a {DIVISOR_FIELDS['multiplier'][1]}-bit multiplier; lower the maximum dividend")
