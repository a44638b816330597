"""Energy of one training iteration, baseline GPU and matNDP.

Parts (joules): GPU arithmetic, NDP instructions, DRAM device access, the GPU's on-chip
path from the memory controller to the SMs (paid by GPU accesses only: NDP sits at the
controller), static power of GPU and NDP over the iteration, and link transfers. Every
constant is cited in docs/energy.md.
"""

from dataclasses import dataclass, fields


__all__ = ["EnergyConstants", "EnergyBreakdown", "baseline_energy", "matndp_energy",
           "ndp_slice_static_w", "gpu_compute_j"]

PJ = 1e-12


@dataclass(frozen=True)
class EnergyConstants:
    """The per-bit, per-FLOP and per-instruction energies and static powers of the energy
    model, with their sources (docs/energy.md)."""

    # HBM2 device access (O'Connor et al., MICRO 2017).
    dram_pj_per_bit: float = 3.97
    # Measured A100 HBM-level 13.11 pJ/bit includes controller and transport (Antepara et
    # al., SC 2025); the part above the device energy is charged to GPU-side accesses.
    gpu_transport_pj_per_bit: float = 13.11 - 3.97
    # 7 nm FP32 add 0.38 pJ and multiply 1.31 pJ (Jouppi et al., ISCA 2021): one FLOP is
    # half a multiply-add.
    fp32_pj_per_flop: float = (0.38 + 1.31) / 2
    # 16-bit: the 7 nm FP32 figure scaled by the FP16/FP32 ratio of Horowitz (ISSCC 2014,
    # 45 nm): (0.4 + 1.1) / (0.9 + 3.7).
    fp16_pj_per_flop: float = (0.38 + 1.31) / 2 * (0.4 + 1.1) / (0.9 + 3.7)
    # NDP slice, per instruction: vector issue 0.0538 nJ plus three vector register file
    # accesses of 0.0176 nJ (M2NDP energy table).
    ndp_pj_per_instruction: float = 53.8 + 3 * 17.6
    # M2NDP static power 0.272 W per NDP unit of 4 sub-cores; a slice is charged its own
    # sub-cores' worth (``NDPHardware.slice``; one in ``default``).
    ndp_static_w_per_sub_core: float = 0.272 / 4
    # GPU static power as a fraction of TDP: an assumption of this model (docs/energy.md).
    gpu_static_fraction_of_tdp: float = 0.30
    # NVLink-C2C 1.3 pJ/bit (NVIDIA); CXL link 0.008 nJ/bit (M2NDP energy table).
    nvlink_pj_per_bit: float = 1.3
    cxl_pj_per_bit: float = 8.0


@dataclass(frozen=True)
class EnergyBreakdown:
    """Joules of one iteration by part: GPU and NDP arithmetic, DRAM device, GPU-side
    transport, GPU and NDP static, links."""

    gpu_compute_j: float = 0.0
    ndp_compute_j: float = 0.0
    dram_j: float = 0.0
    gpu_transport_j: float = 0.0
    gpu_static_j: float = 0.0
    ndp_static_j: float = 0.0
    link_j: float = 0.0

    @property
    def total_j(self):
        return sum(getattr(self, f.name) for f in fields(self))

    def as_dict(self):
        parts = {f.name: getattr(self, f.name) for f in fields(self)}
        return {**parts, "total_j": self.total_j}


def _flop_pj(graph, op, constants):
    return constants.fp16_pj_per_flop if graph.reads_sixteen_bit(op) else constants.fp32_pj_per_flop


def gpu_compute_j(graph, ops, constants):
    """Arithmetic energy of ``ops`` on the GPU."""
    return sum(op.flops * _flop_pj(graph, op, constants) for op in ops) * PJ


def baseline_energy(plan, constants=None):
    """The :class:`EnergyBreakdown` of ``plan``'s iteration on the plain GPU."""
    constants = constants or EnergyConstants()
    graph, gpu = plan.graph, plan.gpu
    bits = plan.dram_bytes_baseline * 8
    return EnergyBreakdown(
        gpu_compute_j=gpu_compute_j(graph, graph.ops, constants),
        dram_j=bits * constants.dram_pj_per_bit * PJ,
        gpu_transport_j=bits * constants.gpu_transport_pj_per_bit * PJ,
        gpu_static_j=gpu.tdp_w * constants.gpu_static_fraction_of_tdp * plan.baseline_s)


def ndp_slice_static_w(hardware, constants=None):
    """Static power of one NDP slice of ``hardware`` (:class:`~matndp.host.calibration.NDPHardware`):
    its sub-cores' worth of M2NDP's."""
    constants = constants or EnergyConstants()
    return hardware.slice.engine.sub_cores * constants.ndp_static_w_per_sub_core


def matndp_energy(plan, constants=None):
    """The :class:`EnergyBreakdown` of ``plan``'s iteration with the offloaded ops on the NDP."""
    constants = constants or EnergyConstants()
    graph, gpu = plan.graph, plan.gpu
    on_gpu = [op for op in graph.ops if not plan.placements[op.name].offloaded]
    slices = plan.meta["ndp_slices"]
    return EnergyBreakdown(
        gpu_compute_j=gpu_compute_j(graph, on_gpu, constants),
        ndp_compute_j=plan.ndp_instructions * constants.ndp_pj_per_instruction * PJ,
        dram_j=plan.dram_bytes_matndp * 8 * constants.dram_pj_per_bit * PJ,
        gpu_transport_j=plan.dram_bytes_gpu * 8 * constants.gpu_transport_pj_per_bit * PJ,
        gpu_static_j=gpu.tdp_w * constants.gpu_static_fraction_of_tdp * plan.matndp_s,
        ndp_static_j=slices * ndp_slice_static_w(plan.calibration.hardware, constants)
        * plan.matndp_s)
