"""Named tier setups and the TOML file that sets any of their parameters.

A :class:`TierSetup` is everything a run needs besides the workload: the tiers
(:class:`~host.tier.config.TierConfig`), the flash device
(:class:`~host.tier.flash.FlashConfig`), the GPU preset that prices ops without a measured
duration, the iterations simulated and the placement policy. Presets:

- ``default``: the model's defaults — two tiers (HBM + one Z-SSD behind PCIe 4.0 ×16),
  HBM at half the footprint.
- ``g10``: G10's published setup (MICRO 2023, its ``genconfigs.py``): 40 GB GPU, 128 GB
  host DRAM, a 3.2 GB/s SSD with 12 µs reads and 16 µs writes, 15.754 GB/s PCIe, 45 µs
  fault latency, 50-page fault batches, 5 µs PCIe latency. G10 counts GB of memory as
  2**30 bytes and GB/s of bandwidth as 10**9 bytes per second (its simulator multiplies
  sizes by 1024**3 and bandwidths by 10**9), and so does this preset.

A TOML file has a ``preset`` key and sections ``[tier]``, ``[flash]`` and ``[run]`` whose
keys are the fields of those classes (SI units: bytes, seconds, bytes per second)::

    preset = "g10"
    [tier]
    host_bytes = 68719476736
    link_duplex = false
    [flash]
    devices = 4
    [run]
    gpu = "h100"
    policy = "lru"

``flash.preset`` picks a flash preset before the other flash keys apply (``flash.name``
only names the device). Overrides from the
command line are ``SECTION.KEY=VALUE`` with VALUE in TOML syntax.
"""

import dataclasses
import math
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..gpu import PRESETS as GPU_PRESETS
from ..registry import Registry
from .config import TierConfig
from .flash import FLASH_PRESETS, FlashConfig, flash_preset
from .policies import TIER_POLICIES


__all__ = ["TierSetup", "SETUP_PRESETS", "setup_preset", "load_setup", "apply_overrides",
           "setup_from_dict", "ConfigError", "GIB"]

GIB = 2 ** 30


class ConfigError(ValueError):
    """A configuration file or override names an unknown key or gives a bad value."""


@dataclass(frozen=True)
class TierSetup:
    """Everything a tier run takes: the tiers (``tier``), the flash device (``flash``), the
    GPU preset, the iterations simulated and the placement policy; ``name`` is the preset
    it started from. ``as_dict`` gives the plain-data form TOML files and JSON echoes use."""

    name: str
    tier: TierConfig
    flash: FlashConfig
    gpu: str = "a100"
    iterations: int = 3
    policy: str = "tm"

    def __post_init__(self):
        if not isinstance(self.iterations, int) or self.iterations < 1:
            raise ValueError(f"run: iterations must be an integer >= 1, got {self.iterations!r}")

    def as_dict(self):
        """The whole setup as plain data (the form a TOML file or JSON echo takes)."""
        flash = dataclasses.asdict(self.flash)
        flash.pop("source")
        return {"preset": self.name, "tier": dataclasses.asdict(self.tier), "flash": flash,
                "run": {"gpu": self.gpu, "iterations": self.iterations,
                        "policy": self.policy}}


# G10's simulator moves pages in batches: 50 pages cross the GPU's PCIe per batch interval
# (50 × 4 KiB at 15.754 GB/s, GB = 10**9 bytes in its bandwidths), of which at most
# int(50 × 3.2 / 15.754) = 10 come from the SSD and at most 10 go to it, in the same
# interval. Its SSD thus reads and writes at once, each at 10/50 of the link: 3.15 GB/s.
G10_LINK_BYTES_PER_S = 15.754e9
G10_SSD_BYTES_PER_S = G10_LINK_BYTES_PER_S * int(50 * 3.2 / 15.754) / 50
# G10's SSD: that bandwidth each way on separate read and write paths (duplex), 12 µs
# reads, 16 µs writes; energies as the Z-NAND preset, cost an assumption for a datacentre
# NVMe SSD.
_G10_SSD = replace(flash_preset("zssd"), name="g10-ssd", read_latency_s=12e-6,
                   program_latency_s=16e-6, channel_bytes_per_s=G10_SSD_BYTES_PER_S / 8,
                   duplex=True, cost_usd_per_gb=0.10,
                   source="G10 (MICRO 2023) SSD: 3.2 GB/s, 12/16 us, reads and writes at once")

SETUP_PRESETS = Registry("tier preset", (
    TierSetup("default", TierConfig(hbm_fraction=0.5), flash_preset("zssd")),
    TierSetup("g10", TierConfig(hbm_bytes=40 * GIB, host_bytes=128 * GIB,
                                link_bytes_per_s=G10_LINK_BYTES_PER_S, fault_latency_s=45e-6,
                                fault_batch_pages=50, host_latency_s=5e-6,
                                request_overhead_s=5e-6, page_bytes=4096,
                                host_demotes=False),
              _G10_SSD, iterations=2),
))


def setup_preset(name):
    """The registered tier setup ``name`` (``default`` or ``g10``), as a :class:`TierSetup`."""
    return SETUP_PRESETS.lookup(name)


_SECTIONS = {"tier": TierConfig, "flash": FlashConfig, "run": None}
_RUN_KEYS = ("gpu", "iterations", "policy")


def _known(section):
    if section == "run":
        return _RUN_KEYS
    names = [f.name for f in fields(_SECTIONS[section]) if f.name != "source"]
    return tuple(names) + (("preset",) if section == "flash" else ())


def _check_value(section, key, value, current):
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{section}.{key} must be a finite number, got {value!r}")
    if isinstance(current, bool) and not isinstance(value, bool):
        raise ConfigError(f"{section}.{key} must be true or false, got {value!r}")
    if isinstance(current, int) and not isinstance(current, bool) and isinstance(value, float):
        if value.is_integer():
            return int(value)           # 128e9 bytes written as a float
        raise ConfigError(f"{section}.{key} must be an integer, got {value!r}")
    return value


def _shown(name):
    """A name of the file's as a message shows it: quoted when it holds control characters
    (a line break), so that the message stays one line."""
    return name if name.isprintable() else repr(name)


def setup_from_dict(content, *, source="configuration"):
    """A :class:`TierSetup` from plain data: a ``preset`` name and sections of keys."""
    if not isinstance(content, dict):
        raise ConfigError(f"{source}: expected a table of sections")
    unknown = set(content) - {"preset", *_SECTIONS}
    if unknown:
        raise ConfigError(f"{source}: unknown section(s) {', '.join(sorted(map(_shown, unknown)))} "
                          f"(known: preset, {', '.join(_SECTIONS)})")
    try:
        base = SETUP_PRESETS.lookup(content.get("preset", "default"))
    except ValueError as error:
        raise ConfigError(f"{source}: {error}") from None
    values = {"tier": {}, "flash": {}, "run": {}}
    for section in _SECTIONS:
        table = content.get(section, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{source}: [{section}] must be a table")
        for key, value in table.items():
            if key not in _known(section):
                raise ConfigError(f"{source}: unknown key {section}.{_shown(key)} "
                                  f"(known: {', '.join(_known(section))})")
            values[section][key] = value
    return _build(base, values, source)


def _check_run(run):
    """The ``[run]`` values, the GPU preset (in any letter case) and the policy checked to
    be registered names, so that a misspelt one is refused with the file rather than when
    the run starts."""
    gpu, policy = run["gpu"], run["policy"]
    if not isinstance(gpu, str) or gpu.lower() not in GPU_PRESETS:
        raise ConfigError(f"run.gpu: {GPU_PRESETS.unknown(gpu)}")
    if not isinstance(policy, str) or policy not in TIER_POLICIES:
        raise ConfigError(f"run.policy: {TIER_POLICIES.unknown(policy)}")
    return run


def _build(base, values, source):
    """``base`` with ``values`` set; every problem a :class:`ConfigError` naming ``source``."""
    tier_values = dict(values["tier"])
    if "hbm_bytes" in tier_values or "hbm_fraction" in tier_values:
        tier_values.setdefault("hbm_bytes", None)
        tier_values.setdefault("hbm_fraction", None)
    flash_values = dict(values["flash"])
    flash = base.flash
    try:
        if "preset" in flash_values:
            flash = replace(FLASH_PRESETS.lookup(flash_values.pop("preset")), devices=flash.devices)
        tier = replace(base.tier, **{k: _check_value("tier", k, v, getattr(base.tier, k))
                                     for k, v in tier_values.items()})
        flash = replace(flash, **{k: _check_value("flash", k, v, getattr(flash, k))
                                  for k, v in flash_values.items()})
        run = _check_run({"gpu": base.gpu, "iterations": base.iterations,
                          "policy": base.policy} | values["run"])
        return TierSetup(base.name, tier, flash, **run)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{source}: {error}") from None


def load_setup(path, *, preset=None):
    """The setup of a TOML file; ``preset``, if given, replaces the file's own."""
    path = Path(path)
    try:
        content = tomllib.loads(path.read_text())
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a UTF-8 text file") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not TOML: {error}") from None
    if preset is not None:
        content["preset"] = preset
    return setup_from_dict(content, source=str(path))


def apply_overrides(setup, overrides):
    """``setup`` with ``SECTION.KEY=VALUE`` overrides (VALUE in TOML syntax) applied."""
    values = {"tier": {}, "flash": {}, "run": {}}
    for text in overrides:
        name, sep, raw = text.partition("=")
        section, dot, key = name.strip().partition(".")
        if not sep or not dot:
            raise ConfigError(f"override {text!r}: expected SECTION.KEY=VALUE")
        if section not in _SECTIONS:
            raise ConfigError(f"override {text!r}: unknown section {section!r} "
                              f"(known: {', '.join(_SECTIONS)})")
        if key not in _known(section):
            raise ConfigError(f"override {text!r}: unknown key {section}.{key} "
                              f"(known: {', '.join(_known(section))})")
        try:
            value = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()           # a bare word: a name such as a preset
        values[section][key] = value
    return _build(setup, values, "override")
