"""The soak's parameters, in one object."""

from dataclasses import dataclass, fields


__all__ = ["SoakSettings"]


@dataclass(frozen=True)
class SoakSettings:
    """What a soak draws from.

    stages_per_round:   stages in one run of the harness (between two resets).
    launches:           the most library-kernel launches in a stage (at least one).
    max_elements:       the largest element-wise problem; rows of reductions scale with it.
    fault_probability:  the chance that a stage has a faulting entry (its kind drawn in
                        turn, so that every kind comes in every len(FAULT_KERNELS) faults).
    decoy_probability:  the chance that a stage arms an extra entry between two chunks and
                        disarms it between two later ones.
    unrelated:          the most unrelated GPU accesses per triggering one.
    error_share:        of the unrelated accesses, the share sent to unmapped or failing
                        memory.
    max_chunks:         the most chunks (phases) a stage's stream is split into.
    max_gap:            the most idle cycles before a request (besides the rare long gaps).
    long_gap:           the length of the rare long idle gaps (1 % of the requests).
    max_latency:        memory's longest read latency drawn (cycles).
    max_pause:          the highest per-cycle pause probability drawn for a stream.
    watchdog:           the µthreads' watchdog (cycles); a stage whose kernel spins waits
                        for it.
    """

    stages_per_round: int = 48
    launches: int = 3
    max_elements: int = 4096
    fault_probability: float = 0.5
    decoy_probability: float = 0.5
    unrelated: int = 6
    error_share: float = 0.02
    max_chunks: int = 4
    max_gap: int = 8
    long_gap: int = 2000
    max_latency: int = 200
    max_pause: float = 0.6
    watchdog: int = 1 << 14

    def __post_init__(self):
        limits = {"stages_per_round": (1, 1 << 16), "launches": (1, 8), "max_elements": (8, 1 << 16),
                  "unrelated": (0, 64), "max_chunks": (1, 64), "max_gap": (0, 1000),
                  "long_gap": (0, (1 << 16) - 1), "max_latency": (1, (1 << 16) - 1),
                  "watchdog": (64, (1 << 24) - 1)}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name in limits:
                low, high = limits[item.name]
                if isinstance(value, bool) or not isinstance(value, int):
                    raise TypeError(f"SoakSettings.{item.name} must be an int, not {value!r}")
                if not low <= value <= high:
                    raise ValueError(f"SoakSettings.{item.name} must be in {low}..{high}, not {value}")
            else:
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise TypeError(f"SoakSettings.{item.name} must be a number, not {value!r}")
                high = 1.0 if item.name.endswith("probability") or item.name == "error_share" else 0.95
                if not 0.0 <= value <= high:
                    raise ValueError(f"SoakSettings.{item.name} must be in [0, {high}], not {value}")
