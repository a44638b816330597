"""The executor's event log: one record per change of HBM state, in time order. The trace
check (:mod:`host.tier.trace_check`) reads nothing else."""

from enum import Enum
from typing import NamedTuple


__all__ = ["EventKind", "TraceEvent"]


class EventKind(Enum):
    INIT = "init"                  # weights and optimizer state present at start
    ALLOC = "alloc"                # a tensor is born (all its pages, in HBM), or its dropped pages are again
    FREE = "free"                  # a tensor dies (its resident pages leave)
    EVICT_BEGIN = "evict_begin"    # pages stop being usable; dirty ones are written out
    EVICT_END = "evict_end"        # their HBM space is free
    FETCH_BEGIN = "fetch_begin"    # space is taken for pages read from flash
    FETCH_END = "fetch_end"        # the pages are usable
    DROP = "drop"                  # pages of a dead tensor leave HBM unwritten (DeepUM)
    DEMOTE = "demote"              # pages move from host DRAM on to flash
    OP = "op"                      # an op starts


class TraceEvent(NamedTuple):
    """``pages`` of tensor ``tensor`` changed state at ``time_s`` (for an ``OP`` event:
    op ``slot`` started). ``dirty``: pages of an eviction without a valid flash copy, which
    are written out; ``valid``: at ``INIT``, the tail pages with a valid flash copy;
    ``host``: of an eviction, the dirty pages that go to host DRAM (the rest go to flash);
    of a fetch, the pages that come from host DRAM (the rest come from flash)."""

    time_s: float
    kind: EventKind
    tensor: int | None = None
    pages: int = 0
    dirty: int = 0
    valid: int = 0
    slot: int | None = None
    host: int = 0
