"""Tiered HBM + host DRAM + flash memory for training: a flash device model, tensor
lifetimes, four placement policies (ideal, UVM-like page-granular demand paging, G10-like
lifetime migration, TM-Training-like static planning with data splitting), the executors,
plan and trace checkers, metrics, and named setups (presets, TOML files)."""

from .config import TierConfig
from .flash import FLASH_PRESETS, FlashConfig, FlashDevice, flash_preset
from .lifetime import Lifetimes
from .plan import Chunk, Plan, PlanError
from .plan_check import check_plan
from .policies import POLICIES, TIER_POLICIES, TierPolicy, register_policy, tier_policy
from .presets import SETUP_PRESETS, TierSetup, load_setup, setup_preset
from .simulate import TierRun, simulate
from .trace_check import TraceError, check_trace


__all__ = ["TierConfig", "FLASH_PRESETS", "FlashConfig", "FlashDevice", "flash_preset",
           "Lifetimes", "Chunk", "Plan", "PlanError", "check_plan", "POLICIES",
           "TIER_POLICIES", "TierPolicy", "register_policy", "tier_policy", "TierRun",
           "simulate", "TraceError", "check_trace", "SETUP_PRESETS", "TierSetup", "load_setup",
           "setup_preset"]
