"""Placement planners. ``ideal`` and ``lru`` need none (the executor's demand paging is
``lru``); ``g10`` is lifetime-based migration, ``tm`` static planning with data splitting."""

from .g10 import G10Config, plan_g10
from .tm import TimingMonitor, TMConfig, monitor_derate, plan_tm


__all__ = ["G10Config", "plan_g10", "TMConfig", "plan_tm", "monitor_derate", "TimingMonitor"]
