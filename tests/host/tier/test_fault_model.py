"""G10's fault-laden kernel times: the modelled times of a faulting page from UVM's
fault service rate, measured times as G10 reads them, and the extra run time of a kernel
whose pages fault, all worked out by hand.

Fault service: 50 pages per 45 µs, so each faulting 4 KiB page costs 0.9 µs."""

from dataclasses import replace

import numpy as np
import pytest

from matndp.host.graph import IterationGraph, Op
from matndp.host.tier import TierConfig
from matndp.host.tier.fault_model import FaultTimes, fault_delay_s, fault_times
from matndp.host.tier.lifetime import Lifetimes

from .graphs import PAGE, pages, split_graph


US = 1e-6
TIER = TierConfig(hbm_bytes=PAGE, fault_batch_pages=50, fault_latency_s=45 * US)


def test_modelled_times_charge_each_faulting_page_its_share_of_the_service_rate():
    """make_x writes X and s0 (11 pages, no inputs); use_x reads X and s8 (11 pages) and
    writes y (1 page)."""
    lifetimes = Lifetimes(split_graph(), PAGE)
    times = fault_times(lifetimes, np.full(10, 1e-3), TIER)
    assert not times.measured
    assert (times.input_bytes[0], times.output_bytes[0]) == (0, 11 * PAGE)
    assert (times.input_bytes[9], times.output_bytes[9]) == (11 * PAGE, 1 * PAGE)
    assert times.outputs_s[0] == pytest.approx(1e-3 + 11 * 0.9 * US)
    assert times.every_s[0] == pytest.approx(1e-3 + 11 * 0.9 * US)
    assert times.outputs_s[9] == pytest.approx(1e-3 + 0.9 * US)
    assert times.every_s[9] == pytest.approx(1e-3 + 12 * 0.9 * US)
    assert list(times.free_s) == [1e-3] * 10


def test_without_fault_laden_times_or_fault_latency_every_time_is_the_fault_free_one():
    lifetimes = Lifetimes(split_graph(), PAGE)
    for tier, laden in ((TIER, False), (replace(TIER, fault_latency_s=0.0), True)):
        times = fault_times(lifetimes, np.full(10, 2e-3), tier, fault_laden=laden)
        assert list(times.outputs_s) == list(times.every_s) == [2e-3] * 10


def test_measured_times_are_read_and_never_below_those_with_fewer_faults():
    """Op a: 3 ms with its output faulting, 5 ms with everything; op b's measurements
    fall below its fault-free time and are raised to it, then all-faulting to at least
    outputs-faulting. A tensor read and written by one op counts as an input only."""
    graph = IterationGraph("measured", [pages(2, "x", "input"), pages(3, "y"), pages(1, "z")], [
        Op("a", "gemm", "forward", 1, ("x",), ("y",), duration_s=1e-3,
           fault_duration_s=5e-3, output_fault_duration_s=3e-3),
        Op("b", "gemm", "forward", 1, ("y", "z"), ("z",), duration_s=1e-3,
           fault_duration_s=0.5e-3, output_fault_duration_s=2e-3)], batch=1, dtype="fp32")
    lifetimes = Lifetimes(graph, PAGE)
    times = fault_times(lifetimes, [1e-3, 1e-3], TIER)
    assert times.measured
    assert list(times.outputs_s) == [3e-3, 2e-3] and list(times.every_s) == [5e-3, 2e-3]
    assert list(times.input_bytes) == [2 * PAGE, 4 * PAGE]
    assert list(times.output_bytes) == [3 * PAGE, 0]


# One kernel: 4 MB in, 1 MB out; 1 ms fault-free, 2 ms with its outputs faulting, 4 ms with
# everything: it takes in host pages at 4 MB / 2 ms = 2 GB/s, out at 1 MB / 1 ms = 1 GB/s.
KERNEL = FaultTimes(free_s=np.array([1e-3]), outputs_s=np.array([2e-3]),
                    every_s=np.array([4e-3]), input_bytes=np.array([4e6]),
                    output_bytes=np.array([1e6]), measured=True)
# The SSD's share of the host rate: 45 µs fault latency of 45 + 15 µs.
MACHINE = {"link_bytes_per_s": 10e9, "flash_bytes_per_s": 3e9, "fault_latency_s": 45 * US,
           "flash_latency_s": 15 * US}
NONE = {"input_host": 0.0, "input_flash": 0.0, "input_new": 0.0, "output_host": 0.0,
        "output_flash": 0.0, "output_new": 0.0}


@pytest.mark.parametrize("faults, machine, delay", [
    ({}, {}, 0.0),
    ({"input_host": 1e6}, {}, 1e6 / 2e9),
    ({"input_new": 1e6, "output_new": 0.5e6}, {}, 1e6 / 2e9 + 0.5e6 / 1e9),
    ({"output_host": 0.5e6}, {}, 0.5e6 / 1e9),
    # From the SSD at 3/4 of the host rate: 1.5 GB/s in, 0.75 GB/s out, added up.
    ({"input_flash": 1e6}, {}, 1e6 / 1.5e9),
    ({"input_flash": 1e6, "output_flash": 0.5e6}, {}, 1e6 / 1.5e9 + 0.5e6 / 0.75e9),
    # ... at most the SSD's bandwidth.
    ({"input_flash": 1e6}, {"flash_bytes_per_s": 1e9}, 1e6 / 1e9),
    # Without a fault latency the SSD runs at the host rate.
    ({"input_flash": 1e6}, {"fault_latency_s": 0.0}, 1e6 / 2e9),
    # SSD and host faults in parallel, the host's rate capped by the link less the SSD's
    # 1.5 GB/s: 1 GB/s on a 2.5 GB/s link.
    ({"input_flash": 1e6, "input_host": 1e6}, {"link_bytes_per_s": 2.5e9}, 1e6 / 1e9),
    ({"input_flash": 1e6, "input_host": 1e6}, {}, 1e6 / 1.5e9),
])
def test_the_extra_time_of_a_faulting_kernel(faults, machine, delay):
    assert fault_delay_s(KERNEL, 0, **(NONE | faults), **(MACHINE | machine)) == \
        pytest.approx(delay, rel=1e-12)


def test_a_kernel_that_faults_at_no_measured_cost_takes_pages_at_the_link_rate():
    """All-faulting no slower than outputs-faulting: the input rate is unbounded but for
    the link (10 GB/s)."""
    flat = replace(KERNEL, every_s=np.array([2e-3]))
    assert fault_delay_s(flat, 0, **(NONE | {"input_host": 1e6}), **MACHINE) == \
        pytest.approx(1e6 / 10e9)
