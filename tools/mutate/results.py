"""Outcomes of a mutation run as plain data, and the kill rate that docs/testing.md reports."""

from dataclasses import asdict, dataclass, field
import json
import pathlib


__all__ = ["KILLED", "SURVIVED", "EQUIVALENT", "OUTCOMES", "Outcome", "Run", "load_run"]


KILLED = "killed"
SURVIVED = "survived"
EQUIVALENT = "equivalent"
# ``killed`` includes timeouts (the mutant hung a test) ; anything else a run reports
# (no test reaches the mutant, a suspicious exit) counts against the rate as ``survived``.
OUTCOMES = (KILLED, SURVIVED, EQUIVALENT)


@dataclass(frozen=True)
class Outcome:
    """One mutant: ``name`` as the run knows it, where it is, what it changes, its outcome
    and, for survivors and equivalents, why (``note``); for a host mutant, its
    ``fingerprint`` (:mod:`.identity`) and whether an earlier run had drawn it (``seen``:
    the tests may have been written against it)."""
    name: str
    part: str
    outcome: str
    change: str = ""
    note: str = ""
    fingerprint: str = ""
    seen: bool = False

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome of {self.name} must be one of {', '.join(OUTCOMES)}, "
                             f"not {self.outcome!r}")


@dataclass
class Run:
    """A mutation run: ``kind`` (``host`` or ``rtl``), the command that reproduces it, how
    many mutants exist and how many were run (a sample, or all), and every outcome.
    ``draw`` says how a host sample was drawn (seed, requested size, how many of the
    mutants earlier runs had drawn, when and on which source); ``unchecked``: mutants drawn
    but never checked (a run stopped early)."""
    kind: str
    command: str
    population: int
    outcomes: list = field(default_factory=list)
    draw: dict = field(default_factory=dict)
    unchecked: int = 0

    def count(self, outcome, part=None, *, fresh=False):
        return sum(o.outcome == outcome and (part is None or o.part == part)
                   and not (fresh and o.seen) for o in self.outcomes)

    def parts(self):
        return sorted({o.part for o in self.outcomes})

    @property
    def fresh(self):
        """How many of the outcomes are of mutants no earlier run had drawn."""
        return sum(not o.seen for o in self.outcomes)

    def kill_rate(self, part=None, *, fresh=False):
        """Killed over non-equivalent mutants (``None`` when there are none); ``fresh``:
        over the mutants no earlier run had drawn only."""
        killed = self.count(KILLED, part, fresh=fresh)
        counted = killed + self.count(SURVIVED, part, fresh=fresh)
        return killed / counted if counted else None

    def save(self, path):
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"kind": self.kind, "command": self.command, "population": self.population,
                  "draw": self.draw, "unchecked": self.unchecked,
                  "outcomes": [asdict(o) for o in self.outcomes]}
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")


def load_run(path):
    record = json.loads(pathlib.Path(path).read_text())
    return Run(record["kind"], record["command"], record["population"],
               [Outcome(**o) for o in record["outcomes"]], record.get("draw", {}),
               record.get("unchecked", 0))
