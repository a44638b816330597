"""The memory model: its storage and configuration checks in Python, its timing and
data behaviour under both simulators behind a FIFO per direction of a memory port
(testbench: sim/tb/memory_model_tb.py)."""

import numpy as np
import pytest

from matndp.sim.drivers.pause import NoPause, RandomPause
from matndp.sim.drivers.memory_model import MemoryTiming, SectorStore
from matndp.sim.runner import SIMULATORS
from tests.sim.drivers.port import run_port_testbench


@pytest.mark.parametrize("simulator", SIMULATORS)
def test_memory_model(simulator):
    run_port_testbench("matndp.sim.tb.memory_model_tb", simulator, seed=3)


def test_sector_store_masks_and_zero_fill():
    store = SectorStore(4)
    assert store.read(0x40) == 0
    store.write(0x40, 0x4433_2211, 0b1111)
    store.write(0x40, 0xDDCC_BBAA, 0b0101)
    assert store.read(0x40) == 0x44CC_22AA
    store.write(0x40, 0xFFFF_FFFF, 0)
    assert store.read(0x40) == 0x44CC_22AA
    assert store.read(0x44) == 0


def test_sector_store_load_pads_the_last_sector():
    store = SectorStore(8)
    values = np.arange(3, dtype=np.uint32) + 0x1000
    store.load(0x100, values)
    assert store.read(0x100) == 0x1001 << 32 | 0x1000
    assert store.read(0x108) == 0x1002
    assert store.read(0x110) == 0


@pytest.mark.parametrize("call", [lambda s: s.read(0x42), lambda s: s.write(0x42, 0, 0xF)])
def test_sector_store_rejects_misaligned_addresses(call):
    with pytest.raises(ValueError, match="not sector-aligned"):
        call(SectorStore(4))


def test_memory_timing_defaults():
    timing = MemoryTiming()
    assert timing.bytes_per_cycle is None
    assert timing.request_pause == NoPause() and timing.response_pause == NoPause()


@pytest.mark.parametrize("arguments, error, message", [
    (dict(latency=0), ValueError, "latency must be at least 1"),
    (dict(latency=2.5), TypeError, "latency must be an int"),
    (dict(latency=True), TypeError, "latency must be an int"),
    (dict(bytes_per_cycle=0), ValueError, "bytes_per_cycle must be positive"),
    (dict(bytes_per_cycle=-3.0), ValueError, "bytes_per_cycle must be positive"),
    (dict(bytes_per_cycle="fast"), TypeError, "bytes_per_cycle must be a number or None"),
    (dict(request_pause=0.3), TypeError, "request_pause must be a PausePattern"),
    (dict(response_pause="random"), TypeError, "response_pause must be a PausePattern"),
    (dict(reorder=1), TypeError, "reorder must be a bool"),
])
def test_memory_timing_rejects(arguments, error, message):
    with pytest.raises(error, match=message):
        MemoryTiming(**arguments)


def test_memory_timing_takes_any_pause_pattern():
    timing = MemoryTiming(request_pause=RandomPause(0.25))
    assert timing.request_pause.pause_fraction == 0.25
