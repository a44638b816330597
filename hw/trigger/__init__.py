"""The memory-access trigger: the filter table's range matcher and the pass-through stage
that turns matching GPU accesses into trigger events."""

from .filter_match import FilterMatcher, filter_entry_layout
from .trigger import Trigger


__all__ = ["FilterMatcher", "filter_entry_layout", "Trigger"]
