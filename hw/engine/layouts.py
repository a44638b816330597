"""Records that travel between the engine's parts, declared once.

A sub-core dispatches an instruction to an execution unit as a record carrying the
µthread's slot, the opcode and the operand values; the unit answers with the slot and the
result value. Which register the result goes to, and whether the µthread ends, stays with
the sub-core (a unit answers in the order it was given instructions; a shared unit has at
most one access of a µthread), so units never carry it.
"""

import dataclasses

from amaranth.hdl import unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from ..layouts import MemoryPortSignature
from .isa import ErrorCause, Opcode


__all__ = [
    "SCALAR_BITS", "vector_layout", "vector_request_layout", "vector_result_layout",
    "scalar_request_layout", "scalar_result_layout", "VectorUnitSignature", "VectorUnit",
    "ScalarUnitSignature", "ScalarUnit", "memory_op_layout", "order_bits", "scratchpad_op_layout",
    "completion_layout", "ThreadKind",
    "spawn_layout", "retire_layout", "entry_config_layout", "entry_status_layout", "ErrorCause",
    "error_layout", "ndp_id_width", "ndp_memory_port_signature",
]


SCALAR_BITS = 64


def vector_layout(config):
    return data.ArrayLayout(unsigned(32), config.lanes)


def vector_request_layout(config):
    """An instruction for a vector unit: three vector operands and one scalar (``vget``'s
    lane index, ``vsplat``'s value)."""
    return data.StructLayout({
        "slot":   unsigned(config.engine.slot_bits),
        "opcode": Opcode,
        "a":      vector_layout(config),
        "b":      vector_layout(config),
        "c":      vector_layout(config),
        "x":      unsigned(SCALAR_BITS),
    })


def vector_result_layout(config):
    """A vector unit's answer; ``vget`` puts its scalar in lane 0."""
    return data.StructLayout({
        "slot":  unsigned(config.engine.slot_bits),
        "value": vector_layout(config),
    })


def scalar_request_layout(config):
    return data.StructLayout({
        "slot":   unsigned(config.engine.slot_bits),
        "opcode": Opcode,
        "a":      unsigned(SCALAR_BITS),
        "b":      unsigned(SCALAR_BITS),
    })


def scalar_result_layout(config):
    return data.StructLayout({
        "slot":  unsigned(config.engine.slot_bits),
        "value": unsigned(SCALAR_BITS),
    })


class VectorUnitSignature(wiring.Signature):
    """An execution unit as seen from the unit: requests in, results out, in order."""

    def __init__(self, config):
        self.config = config
        super().__init__({
            "request": In(stream.Signature(vector_request_layout(config))),
            "result":  Out(stream.Signature(vector_result_layout(config))),
        })

    def __eq__(self, other):
        return isinstance(other, VectorUnitSignature) and other.config == self.config

    def __repr__(self):
        return f"VectorUnitSignature({self.config!r})"


class VectorUnit(wiring.Component):
    """Base of the vector execution units: a configuration and a :class:`VectorUnitSignature`."""

    def __init__(self, config):
        self.config = config
        super().__init__(VectorUnitSignature(config))


class ScalarUnitSignature(wiring.Signature):
    def __init__(self, config):
        self.config = config
        super().__init__({
            "request": In(stream.Signature(scalar_request_layout(config))),
            "result":  Out(stream.Signature(scalar_result_layout(config))),
        })

    def __eq__(self, other):
        return isinstance(other, ScalarUnitSignature) and other.config == self.config

    def __repr__(self):
        return f"ScalarUnitSignature({self.config!r})"


class ScalarUnit(wiring.Component):
    """Base of the scalar execution units."""

    def __init__(self, config):
        self.config = config
        super().__init__(ScalarUnitSignature(config))


def memory_op_layout(config):
    """A load or store toward memory. ``thread`` names the µthread across sub-cores (it
    becomes the memory request's id); the 32-bit word a ``lw``/``sw`` touches within the
    sector is ``addr``'s (``addr % sector_bytes // 4``). ``posted``: a store of ``entry``
    its µthread did not wait for (``EngineConfig.posted_stores``), which completes
    nothing."""
    return data.StructLayout({
        "thread": unsigned(config.engine.thread_bits),
        "opcode": Opcode,
        "addr":   unsigned(config.addr_width),
        "data":   vector_layout(config),
        "mask":   unsigned(config.sector_bytes),
        "posted": unsigned(1),
        "entry":  unsigned(config.trigger.entry_bits),
    })


def order_bits(config):
    """Bits of the sequence numbers :class:`~.ordering.AtomicOrder` compares: an ordered
    entry's µthreads that still have atomics to apply are alive, so their sequence numbers
    lie within ``sub_cores × slots`` of the turn, and this many low bits tell them apart."""
    return config.engine.thread_bits + 1


def scratchpad_op_layout(config):
    """A scratchpad access. ``ordered``: an atomic of an ordered entry's µthread ``seq``
    (low :func:`order_bits` bits) that has not handed its turn on;
    :class:`~.ordering.AtomicOrder` passes those to the scratchpad in the order of
    ``seq``, each µthread's in program order, and ``release`` (the instruction's ``.r``,
    or its end) hands the turn to the next µthread of ``entry``. ``posted``: the µthread
    does not wait for this access, so the scratchpad gives it no completion."""
    return data.StructLayout({
        "thread":  unsigned(config.engine.thread_bits),
        "opcode":  Opcode,
        "addr":    unsigned(max(1, (config.engine.scratchpad_bytes - 1).bit_length())),
        "b":       vector_layout(config),
        "c":       vector_layout(config),
        "entry":   unsigned(config.trigger.entry_bits),
        "release": unsigned(1),
        "ordered": unsigned(1),
        "posted":  unsigned(1),
        "seq":     unsigned(order_bits(config)),
    })


def ndp_id_width(config):
    """Id bits of the engine's memory requests (:attr:`~..config.NDPConfig.ndp_id_width`):
    a request's id is its µthread (``thread``)."""
    return config.ndp_id_width


def ndp_memory_port_signature(config):
    """The engine's memory port toward the slice's arbiter, seen from the engine: the
    slice's request and response records with :func:`ndp_id_width` id bits."""
    return MemoryPortSignature(dataclasses.replace(config, id_width=ndp_id_width(config)))


def completion_layout(config):
    """A shared unit's answer to one sub-core: the slot, a value (a loaded sector, or a
    loaded word in the low bits) and whether the access failed."""
    return data.StructLayout({
        "slot":  unsigned(config.engine.slot_bits),
        "value": vector_layout(config),
        "error": unsigned(1),
    })


class ThreadKind(enum.Enum, shape=2):
    """What started a µthread."""
    MAIN = 0         # a trigger event
    INIT = 1         # the entry was armed
    FINAL = 2        # the entry's completions reached the expected count


def spawn_layout(config):
    """What a µthread starts with (the special registers, for a trigger event)."""
    return data.StructLayout({
        "slot":      unsigned(config.engine.slot_bits),
        "kind":      ThreadKind,
        "pc":        unsigned(config.engine.pc_bits),
        "entry":     unsigned(config.trigger.entry_bits),
        "arg_block": unsigned(max(1, (config.engine.argument_blocks - 1).bit_length())),
        "seq":       unsigned(32),
        "ordered":   unsigned(1),
        "offset":    unsigned(config.addr_width),
        "addr":      unsigned(config.addr_width),
        "mask":      unsigned(config.sector_bytes),
        "write":     unsigned(1),
        "data":      vector_layout(config),
    })


def retire_layout(config):
    """A µthread that ended: normally (``error`` clear) or stopped by an error."""
    return data.StructLayout({
        "entry": unsigned(config.trigger.entry_bits),
        "kind":  ThreadKind,
        "error": unsigned(1),
    })


def entry_config_layout(config):
    """What the engine needs to know of one filter entry (from the register file)."""
    pc = unsigned(config.engine.pc_bits)
    return data.StructLayout({
        "main_pc":   pc,
        "init_pc":   pc,
        "final_pc":  pc,
        "has_init":  unsigned(1),
        "has_final": unsigned(1),
        "ordered":   unsigned(1),
        "arg_block": unsigned(max(1, (config.engine.argument_blocks - 1).bit_length())),
        "expected":  unsigned(config.counter_width),
        "init_threads":  unsigned(config.counter_width),  # the initializer's µthreads (0: one)
        "final_threads": unsigned(config.counter_width),  # the finalizer's µthreads (0: one)
    })


def entry_status_layout(config):
    """What the engine reports of one filter entry (to the register file)."""
    count = unsigned(config.counter_width)
    return data.StructLayout({
        "completed": count,       # main µthreads finished without error
        "drained":   count,       # events of a stopped entry, dropped
        "complete":  unsigned(1), # completions reached the expected count (and the finalizer ran)
        "stopped":   unsigned(1), # an error stopped the entry's kernels
        "busy":      unsigned(1), # an initializer or finalizer is pending or running
    })


def error_layout(config):
    return data.StructLayout({
        "entry": unsigned(config.trigger.entry_bits),
        "pc":    unsigned(config.engine.pc_bits),
        "cause": ErrorCause,
    })
