"""Speed of the instruction-set simulator on per-sector kernels over 1 M FP32 elements."""

import time

import numpy as np

from matndp.host.kernels.assembler import assemble
from matndp.host.kernels.iss import FilterEntry, InstructionSetSimulator, TriggerEvents
from matndp.host.kernels.memory import Memory


__all__ = ["bench_iss", "BENCH_KERNELS"]


# Kernels shaped like the library's: an element-wise op on the written data, one with an
# extra operand and a longer body, and a scratchpad reduction.
BENCH_KERNELS = {
    "relu": """.kernel relu
.arg OUT 0
.main
    vmax   v1, DATA, 0.0
    vst.x  [OFFSET + OUT], v1
""",
    "axpy_clamped": """.kernel axpy_clamped
.arg Y 0
.arg ALPHA 1
.main
    add    x1, OFFSET, Y
    vld    v1, [x1]
    vfma   v1, DATA, ALPHA, v1
    vmax   v2, v1, -1.0
    vmin   v2, v2, 1.0
    vcmplt v3, v1, 0.0
    vsel   v1, v2, v1, v3
    vmul   v2, v1, v1
    vadd   v1, v1, v2
    vabs   v4, v1
    vsub   v1, v1, v4
    vst.x  [x1], v1
""",
    "sum_squares": """.kernel sum_squares
.init
    sst    [0], v0
    sst.x  [32], v0
.main
    samoadd     [0], DATA
    samofma.r.x [32], DATA, DATA
""",
}


def _run(name, source, elements, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(elements).astype(np.float32)
    memory = Memory(2 * x.nbytes)
    base = memory.place("x", x)
    out = memory.place("y", rng.standard_normal(elements).astype(np.float32))
    alpha = int(np.float32(0.5).view(np.uint32))
    image = assemble(source)
    simulator = InstructionSetSimulator(memory, [FilterEntry(base, x.nbytes, image, (out, alpha),
                                                             expected=elements // 8)])
    events = TriggerEvents.sectors(0, base, x)
    started = time.perf_counter()
    result = simulator.run(events)
    wall = time.perf_counter() - started
    return {"kernel": name, "elements": elements, "uthreads": len(events),
            "instructions_per_uthread": round(result.instructions / len(events), 2),
            "wall_s": round(wall, 6), "uthreads_per_s": round(len(events) / wall),
            "instructions_per_s": round(result.instructions / wall),
            "sequential_batches": result.sequential_batches}


def bench_iss(quick=False):
    elements = 1 << (17 if quick else 20)
    return {"runs": [_run(name, source, elements, seed) for seed, (name, source)
                     in enumerate(BENCH_KERNELS.items())]}
