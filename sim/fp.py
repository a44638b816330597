"""Run bit-pattern vectors through the FP32 units' RTL in batch mode.

:func:`run_fp_vectors` is the checking interface of the FP units: operands go in as
``uint32`` bit-pattern arrays, result bit patterns come back in order. Under Verilator and
Icarus the records stream through ``sim/harnesses/fp_harness.v`` with no Python per cycle; the
``"amaranth"`` choice runs Amaranth's own simulator (slow; for small sets and unit tests).

:data:`FP_OPS` maps each operation name to the unit that computes it and the unit's
operation code. Units are imported when first used, so an operation whose unit does not
exist yet fails with :class:`NotImplementedError` naming the missing unit.
"""

import dataclasses
import functools
import importlib
import json
import pathlib
import tempfile

import numpy as np

from matndp.hw.export import export_verilog
from matndp.sim.runner import build_root, project_root, run_cocotb, write_if_changed


__all__ = ["FPOp", "FP_OPS", "FP_SIMULATORS", "BACK_PRESSURE", "run_fp_vectors",
           "run_fp_unit", "fp_unit_verilog"]


@dataclasses.dataclass(frozen=True)
class FPOp:
    """One operation of the FP units.

    unit:        ``"module:Class"`` of the unit (a ``wiring.Component`` with
                 ``FPUnitSignature``, constructed without arguments), or the class.
    code:        the operand record's ``op`` field for this operation.
    arity:       operands used: 1 (a), 2 (a, b) or 3 (a, b, c).
    input_bits:  width of each operand's bit pattern (16 for BF16 inputs).
    result_bits: width of the result's bit pattern (16 for BF16 results).
    cycles:      most cycles the unit may take per record (bounds simulation waits).
    """
    unit: object
    code: int
    arity: int
    input_bits: int = 32
    result_bits: int = 32
    cycles: int = 4

    @property
    def unit_name(self):
        if isinstance(self.unit, str):
            return self.unit
        return f"{self.unit.__module__}:{self.unit.__qualname__}"

    def unit_class(self):
        if not isinstance(self.unit, str):
            return self.unit
        module_name, class_name = self.unit.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            raise NotImplementedError(f"FP unit {module_name}.{class_name} is not built yet") from None
        try:
            unit_class = getattr(module, class_name)
        except AttributeError:
            raise NotImplementedError(f"FP unit {module_name}.{class_name} is not built yet") from None
        return unit_class


FP_OPS = {
    "add":         FPOp(unit="matndp.hw.fp.addsub:FPAddSub", code=0, arity=2),
    "sub":         FPOp(unit="matndp.hw.fp.addsub:FPAddSub", code=1, arity=2),
    "mul":         FPOp(unit="matndp.hw.fp.multiply:FPMultiply", code=0, arity=2),
    "fma":         FPOp(unit="matndp.hw.fp.fma:FPFusedMultiplyAdd", code=0, arity=3),
    "min":         FPOp(unit="matndp.hw.fp.minmax:FPMinMax", code=0, arity=2),
    "max":         FPOp(unit="matndp.hw.fp.minmax:FPMinMax", code=1, arity=2),
    "div":         FPOp(unit="matndp.hw.fp.divide:FPDivide", code=0, arity=2, cycles=64),
    "sqrt":        FPOp(unit="matndp.hw.fp.sqrt:FPSqrt", code=0, arity=1, cycles=64),
    "f32_to_bf16": FPOp(unit="matndp.hw.fp.convert:FPConvert", code=0, arity=1, result_bits=16),
    "bf16_to_f32": FPOp(unit="matndp.hw.fp.convert:FPConvert", code=1, arity=1, input_bits=16),
}

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
                   seed=1):
    """Result bit patterns (``uint32`` array, in order) of ``op`` on the bit patterns
    ``a`` (and ``b``, ``c`` by arity).

    op:            one of :data:`FP_OPS` (``fma`` is ``a * b + c``; ``f32_to_bf16`` returns
                   16-bit patterns in the low bits; ``bf16_to_f32`` takes them there).
    simulator:     ``"verilator"``, ``"icarus"`` or ``"amaranth"``.
    back_pressure: ``"random"`` (both streams throttled pseudo-randomly) or ``"none"``.
    seed:          seed of the back-pressure pattern.

    Raises ValueError naming the problem for an unknown op, simulator or back-pressure
    mode, a missing or surplus operand, an operand that is not a 1-D uint32 array, or
    operands of different lengths.
    """
    if op not in FP_OPS:
        raise ValueError(f"unknown FP op {op!r}; known: {', '.join(FP_OPS)}")
    if simulator not in FP_SIMULATORS:
        raise ValueError(f"unknown simulator {simulator!r}; choose one of {', '.join(FP_SIMULATORS)}")
    if back_pressure not in BACK_PRESSURE:
        raise ValueError(f"unknown back-pressure mode {back_pressure!r}; "
                         f"choose one of {', '.join(BACK_PRESSURE)}")
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
    spec.unit_class()   # fails early for units not built yet
    zeros = np.zeros(length, dtype=np.uint32)
    a, b, c = (operands[name] if operands[name] is not None else zeros for name in names)
    return run_fp_unit(spec, a, b, c, simulator=simulator, back_pressure=back_pressure,
                       seed=seed)


def run_fp_unit(spec, a, b, c, *, simulator="verilator", back_pressure="random", seed=1):
    """The result words of the unit and op code of ``spec`` (an :class:`FPOp`, also one
    outside :data:`FP_OPS`, e.g. a unit whose results are masks) on three equal-length
    ``uint32`` operand arrays, in order. No checking of the operands: see
    :func:`run_fp_vectors` for the checked interface."""
    if len(a) == 0:
        return np.zeros(0, dtype=np.uint32)
    if simulator == "amaranth":
        from matndp.sim.fp_amaranth import run_unit
        return run_unit(spec.unit_class()(), spec.code, a, b, c,
                        pause=BACK_PRESSURE[back_pressure], seed=seed,
                        cycles_per_record=spec.cycles)
    return _run_harness(spec, a, b, c, simulator, back_pressure, seed)


@functools.lru_cache(maxsize=None)
def _exported(unit_class):
    return export_verilog(unit_class(), "fp_unit")


def fp_unit_verilog(spec):
    """Path of the exported Verilog (module ``fp_unit``) of the unit of ``spec`` (an
    :class:`FPOp`), written under the build directory (exported once per process)."""
    name = spec.unit_name.replace(":", "_").replace(".", "_")
    return write_if_changed(build_root() / "fp" / f"{name}.v", _exported(spec.unit_class()))


def _write_records(path, code, a, b, c):
    # One 100-bit record per line: op, c, b, a from the most significant end.
    lines = [f"{code:x}{z:08x}{y:08x}{x:08x}" for x, y, z in zip(a.tolist(), b.tolist(), c.tolist())]
    path.write_text("\n".join(lines) + "\n")


def _read_results(path, count):
    # Simulators may interleave "// 0x..." address comments.
    words = [line.split("//")[0].strip() for line in path.read_text().splitlines()]
    words = [word for word in words if word]
    if len(words) != count:
        raise RuntimeError(f"expected {count} results in {path}, found {len(words)}")
    return np.array([int(word, 16) for word in words], dtype=np.uint32)


def _run_harness(spec, a, b, c, simulator, back_pressure, seed):
    sources = [fp_unit_verilog(spec), pathlib.Path(__file__).parent / "harnesses" / "fp_harness.v"]
    unit_name = spec.unit_name.split(":")[1]
    scratch_root = build_root() / "fp" / "vectors"
    scratch_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=scratch_root) as scratch:
        scratch = pathlib.Path(scratch)
        jobs = []
        for start in range(0, len(a), _CHUNK):
            stop = min(start + _CHUNK, len(a))
            operand_file = scratch / f"operands{len(jobs)}.hex"
            _write_records(operand_file, spec.code, a[start:stop], b[start:stop], c[start:stop])
            jobs.append([str(operand_file), str(scratch / f"results{len(jobs)}.hex"), stop - start])
        source_pause, sink_pause = BACK_PRESSURE[back_pressure]
        run_cocotb(sources=sources, toplevel="fp_harness", test_module="matndp.sim.tb.fp_tb",
                   simulator=simulator, fast=True, build_name=f"fp-{unit_name}",
                   extra_env={"MATNDP_FP_JOBS": json.dumps(jobs),
                              "MATNDP_FP_SEED": max(1, int(seed)) & 0xFFFFFFFF,
                              "MATNDP_FP_PAUSE": f"{source_pause},{sink_pause}",
                              "MATNDP_FP_CYCLES": spec.cycles})
        return np.concatenate([_read_results(pathlib.Path(result_file), count)
                               for _, result_file, count in jobs])
