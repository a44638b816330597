"""Run bit-pattern vectors through the FP32 units' RTL in batch mode.

:func:`run_fp_vectors` is the checking interface of the FP units: operands go in as
``uint32`` bit-pattern arrays, result bit patterns come back in order. Under Verilator and
Icarus the records stream through ``sim/harnesses/fp_harness.v`` with no Python per cycle; the
``"amaranth"`` choice runs Amaranth's own simulator (slow; for small sets and unit tests).

:data:`FP_OPS` is the op table of hw/fp/units.py: each operation name with the unit that
computes it, its code and its operands.
"""

import enum
import functools
import json
import pathlib
import tempfile

import numpy as np

from matndp.hw.export import export_verilog
from matndp.hw.fp.interface import operand_layout
from matndp.hw.fp.opcodes import OP_BITS
from matndp.hw.fp.units import FP_OPERATIONS
from matndp.sim.flows.fp_amaranth import pack_records, run_unit
from matndp.sim.harnesses import harness_file
from matndp.sim.runner import build_root, run_cocotb, write_if_changed


__all__ = ["FP_OPS", "FP_SIMULATORS", "BACK_PRESSURE", "run_fp_vectors", "run_fp_unit",
           "fp_unit_verilog"]


FP_OPS = FP_OPERATIONS

FP_SIMULATORS = ("verilator", "icarus", "amaranth")

# Per-cycle hold probabilities (source, sink) in 1/256 for each back-pressure mode.
BACK_PRESSURE = {"none": (0, 0), "random": (77, 77)}

# Records per harness run; the harness memories hold this many.
_CHUNK = 65536


def _check_operand(op, name, value, input_bits, length):
    if not isinstance(value, np.ndarray):
        raise ValueError(f"operand {name} of {op!r} must be a numpy uint32 array, "
                         f"not {type(value).__name__}")
    if value.dtype != np.uint32:
        raise ValueError(f"operand {name} of {op!r} must have dtype uint32, not {value.dtype}")
    if value.ndim != 1:
        raise ValueError(f"operand {name} of {op!r} must be one-dimensional, not shape {value.shape}")
    if length is not None and len(value) != length:
        raise ValueError(f"operand {name} of {op!r} has {len(value)} elements, operand a has {length}")
    if input_bits < 32 and len(value) and int(value.max()) >> input_bits:
        raise ValueError(f"operand {name} of {op!r} takes {input_bits}-bit patterns in the "
                         f"low bits; found {int(value.max()):#x}")


def run_fp_vectors(op, a, b=None, c=None, *, simulator="verilator", back_pressure="random",
                   seed=1, with_cycles=False):
    """Result bit patterns (``uint32`` array, in order) of ``op`` on the bit patterns
    ``a`` (and ``b``, ``c`` by arity); with ``with_cycles``, ``(results, cycles)``: the
    simulated cycles from the first record offered to the last result stored (Verilator
    and Icarus only).

    op:            a name of :data:`FP_OPS` (``fma`` is ``a * b + c``; ``f32_to_bf16``
                   returns 16-bit patterns in the low bits; ``bf16_to_f32`` takes them
                   there; the comparisons return 1 or 0).
    simulator:     ``"verilator"``, ``"icarus"`` or ``"amaranth"``.
    back_pressure: ``"random"`` (both streams throttled pseudo-randomly) or ``"none"``.
    seed:          seed of the back-pressure pattern.

    Raises ValueError naming the problem for an unknown op, simulator or back-pressure
    mode, a missing or surplus operand, an operand that is not a 1-D uint32 array,
    operands of different lengths, or ``with_cycles`` under Amaranth's simulator.
    """
    if op not in FP_OPS:
        raise ValueError(f"unknown FP op {op!r}; known: {', '.join(FP_OPS)}")
    if simulator not in FP_SIMULATORS:
        raise ValueError(f"unknown simulator {simulator!r}; choose one of {', '.join(FP_SIMULATORS)}")
    if back_pressure not in BACK_PRESSURE:
        raise ValueError(f"unknown back-pressure mode {back_pressure!r}; "
                         f"choose one of {', '.join(BACK_PRESSURE)}")
    if with_cycles and simulator == "amaranth":
        raise ValueError("with_cycles: the cycles are counted by the Verilator and Icarus "
                         "harness, not under Amaranth's simulator")
    spec = FP_OPS[op]
    operands = {"a": a, "b": b, "c": c}
    names = "abc"
    length = None
    for index, name in enumerate(names):
        value = operands[name]
        if index < spec.arity:
            if value is None:
                raise ValueError(f"{op!r} takes {spec.arity} operand(s); operand {name} is missing")
            _check_operand(op, name, value, spec.input_bits, length)
            length = len(value) if length is None else length
        elif value is not None:
            raise ValueError(f"{op!r} takes {spec.arity} operand(s); operand {name} was given")
    zeros = np.zeros(length, dtype=np.uint32)
    a, b, c = (operands[name] if operands[name] is not None else zeros for name in names)
    return run_fp_unit(spec.unit, spec.code, a, b, c, simulator=simulator,
                       back_pressure=back_pressure, seed=seed, with_cycles=with_cycles)


def _code_value(code):
    if isinstance(code, enum.Enum):
        return code.value
    if isinstance(code, (int, np.integer)) and not isinstance(code, bool) \
            and 0 <= code < 1 << OP_BITS:
        return int(code)
    raise ValueError(f"op code must be a member of a unit's enum (hw/fp/opcodes.py) or an "
                     f"integer in [0, {1 << OP_BITS}), not {code!r}")


def run_fp_unit(unit_class, code, a, b, c, *, simulator="verilator", back_pressure="random",
                seed=1, with_cycles=False):
    """The result words of FP unit ``unit_class`` on three equal-length ``uint32`` operand
    arrays with the ``op`` field ``code`` (a member of the unit's enum, or any
    ``OP_BITS``-bit integer, for codes a unit does not assign), in order; with
    ``with_cycles``, ``(results, cycles)``: the harness's simulated cycles, None under
    Amaranth's simulator. The unit may be one outside :data:`FP_OPS`. No checking of the
    operands: see :func:`run_fp_vectors` for the checked interface."""
    code = _code_value(code)
    if len(a) == 0:
        results, cycles = np.zeros(0, dtype=np.uint32), 0
    elif simulator == "amaranth":
        results, cycles = run_unit(unit_class(), code, a, b, c,
                                   pause=BACK_PRESSURE[back_pressure], seed=seed,
                                   cycles_per_record=unit_class.CYCLES_PER_RESULT), None
    else:
        results, cycles = _run_harness(unit_class, code, a, b, c, simulator, back_pressure, seed)
    return (results, cycles) if with_cycles else results


@functools.lru_cache(maxsize=None)
def _exported(unit_class):
    return export_verilog(unit_class(), "fp_unit")


def _unit_name(unit_class):
    return f"{unit_class.__module__}.{unit_class.__qualname__}".replace(".", "_")


def fp_unit_verilog(unit_class):
    """Path of the exported Verilog (module ``fp_unit``) of FP unit ``unit_class``,
    written under the build directory (exported once per process)."""
    return write_if_changed(build_root() / "fp" / f"{_unit_name(unit_class)}.v",
                            _exported(unit_class))


def _write_records(path, layout, code, a, b, c):
    # One record per line in hex, as the unit's operand layout packs it.
    digits = (layout.size + 3) // 4
    lines = [f"{record:0{digits}x}" for record in pack_records(layout, code, a, b, c)]
    path.write_text("\n".join(lines) + "\n")


def _read_results(path, count):
    # Simulators may interleave "// 0x..." address comments.
    words = [line.split("//")[0].strip() for line in path.read_text().splitlines()]
    words = [word for word in words if word]
    if len(words) != count:
        raise RuntimeError(f"expected {count} results in {path}, found {len(words)}")
    return np.array([int(word, 16) for word in words], dtype=np.uint32)


def _run_harness(unit_class, code, a, b, c, simulator, back_pressure, seed):
    """The results and the harness's cycles, summed over its jobs."""
    sources = [fp_unit_verilog(unit_class),
               harness_file("fp_harness.v")]
    unit_name = unit_class.__qualname__
    scratch_root = build_root() / "fp" / "vectors"
    scratch_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=scratch_root) as scratch:
        scratch = pathlib.Path(scratch)
        jobs = []
        for start in range(0, len(a), _CHUNK):
            stop = min(start + _CHUNK, len(a))
            operand_file = scratch / f"operands{len(jobs)}.hex"
            _write_records(operand_file, operand_layout(unit_class.OPS), code,
                           a[start:stop], b[start:stop], c[start:stop])
            jobs.append([str(operand_file), str(scratch / f"results{len(jobs)}.hex"), stop - start])
        source_pause, sink_pause = BACK_PRESSURE[back_pressure]
        run_cocotb(sources=sources, toplevel="fp_harness", test_module="matndp.sim.tb.fp_tb",
                   simulator=simulator, fast=True, build_name=f"fp-{unit_name}",
                   extra_env={"MATNDP_FP_JOBS": json.dumps(jobs),
                              "MATNDP_FP_SEED": max(1, int(seed)) & 0xFFFFFFFF,
                              "MATNDP_FP_PAUSE": f"{source_pause},{sink_pause}",
                              "MATNDP_FP_CYCLES": unit_class.CYCLES_PER_RESULT})
        results = np.concatenate([_read_results(pathlib.Path(result_file), count)
                                  for _, result_file, count in jobs])
        cycles = sum(int(pathlib.Path(result_file + ".cycles").read_text())
                     for _, result_file, _ in jobs)
        return results, cycles
