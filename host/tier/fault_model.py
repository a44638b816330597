"""How long a kernel runs while its pages fault: G10's fault-laden kernel-time model.

A kernel whose pages are not in HBM when it starts runs slower than its fault-free time:
its warps stall on far faults as they touch the missing pages. G10 (Zhang et al., MICRO
2023) measures, per kernel, three times: fault-free (``t_11``), with only its outputs
faulting (``t_10``) and with every input and output page faulting (``t_00``), and
interpolates between them by the fraction of pages that actually fault, with bandwidths
capped by the PCIe link and the SSD:

- the kernel consumes faulting input pages at ``s_in / (t_00 - t_10)`` bytes per second
  and output pages at ``s_out / (t_10 - t_11)`` when they come from host memory; from the
  SSD at that rate × ``l_sys / (l_sys + l_ssd)`` (the fault latency plus the SSD's),
  at most the SSD's bandwidth; the host-memory rates are at most the link's bandwidth less
  the SSD's share;
- its extra time is ``max(SSD input + SSD output time, host time)``: SSD and host faults
  are serviced in parallel.

Where no measurement exists (zoo models, profiler traces), the fault-laden times come from
a documented model: a faulting page costs its share of UVM's far-fault service rate,
``fault_batch_pages`` pages per ``fault_latency_s`` (G10's setup: 50 pages per 45 µs,
4.55 GB/s), on top of the fault-free time — ``t_10 = t_11 + s_out / rate`` and
``t_00 = t_10 + s_in / rate``.
"""

from dataclasses import dataclass

import numpy as np


__all__ = ["FaultTimes", "fault_times", "fault_delay_s"]


@dataclass(frozen=True)
class FaultTimes:
    """Per op: fault-free, outputs-faulting and all-faulting times (s), input and output
    bytes, and whether the fault-laden times were measured (else modelled)."""

    free_s: np.ndarray
    outputs_s: np.ndarray
    every_s: np.ndarray
    input_bytes: np.ndarray
    output_bytes: np.ndarray
    measured: bool


def fault_times(lifetimes, op_times, tier, *, fault_laden=True):
    """The :class:`FaultTimes` of ``lifetimes``' graph: the ops' own fault-laden times
    when every op carries them, the model of this module's docstring otherwise. As G10
    reads its measurements, a fault-laden time is never below the one with fewer faults.

    ``fault_laden=False`` gives every op its fault-free time in all three cases: the model
    then charges faulting bytes at the link's and the SSD's bandwidths alone, which is what
    G10's artifact computes as it runs (docs/tiering.md, "uvm")."""
    graph = lifetimes.graph
    page = lifetimes.page_bytes
    free = np.asarray(op_times, dtype=float)
    index = lifetimes.index
    inputs = np.array([sum(int(lifetimes.pages[index[t]]) for t in dict.fromkeys(op.inputs))
                       for op in graph.ops], dtype=float) * page
    outputs = np.array([sum(int(lifetimes.pages[index[t]]) for t in dict.fromkeys(op.outputs)
                            if t not in op.inputs) for op in graph.ops], dtype=float) * page
    measured = all(op.fault_duration_s is not None and op.output_fault_duration_s is not None
                   for op in graph.ops)
    if not fault_laden:
        out = every = free
    elif measured:
        out = np.array([op.output_fault_duration_s for op in graph.ops], dtype=float)
        every = np.array([op.fault_duration_s for op in graph.ops], dtype=float)
    else:
        rate = tier.fault_batch_pages * page / tier.fault_latency_s if tier.fault_latency_s \
            else np.inf
        out = free + outputs / rate
        every = out + inputs / rate
    out = np.maximum(out, free)
    every = np.maximum(every, out)
    return FaultTimes(free, out, every, inputs, outputs, measured)


def fault_delay_s(times, slot, *, input_host, input_flash, input_new, output_host,
                  output_flash, output_new, link_bytes_per_s, flash_bytes_per_s,
                  fault_latency_s, flash_latency_s):
    """Extra run time of op ``slot`` when the given bytes of its inputs and outputs fault
    (from host DRAM, from flash, or not yet allocated), by G10's performance model."""
    t_every, t_out, t_free = times.every_s[slot], times.outputs_s[slot], times.free_s[slot]
    s_in, s_out = times.input_bytes[slot], times.output_bytes[slot]
    in_faults = input_host + input_flash + input_new
    out_faults = output_host + output_flash + output_new
    if in_faults <= 0 and out_faults <= 0:
        return 0.0
    host_in = s_in / (t_every - t_out) if t_every > t_out else np.inf
    host_out = s_out / (t_out - t_free) if t_out > t_free else np.inf
    share = fault_latency_s / (fault_latency_s + flash_latency_s) if fault_latency_s else 1.0
    flash_in = min(host_in * share, flash_bytes_per_s) if input_flash > 0 else 0.0
    flash_out = min(host_out * share, flash_bytes_per_s) if output_flash > 0 else 0.0
    host_cap = link_bytes_per_s - max(flash_in, flash_out)
    host_in, host_out = min(host_in, host_cap), min(host_out, host_cap)
    flash_s = (input_flash / flash_in if input_flash > 0 else 0.0) + \
              (output_flash / flash_out if output_flash > 0 else 0.0)
    host_s = ((input_host + input_new) / host_in if input_host + input_new > 0 else 0.0) + \
             ((output_host + output_new) / host_out if output_host + output_new > 0 else 0.0)
    return float(max(flash_s, host_s))
