"""What each instruction does, for a group of µthreads at once.

:class:`Threads` holds the registers and special registers of µthreads that the simulator
runs together; :data:`EXECUTE` maps every opcode to a function ``f(threads, instruction,
selected)`` that executes the instruction for the µthreads at indices ``selected`` (all at
the same pc). Scalars are ``uint64`` arrays, vectors ``uint32`` arrays of shape
``(µthreads, lanes)``; a constant operand has length 1 and broadcasts. A function reports
the µthreads it cannot complete with :meth:`Threads.fault` and, for branches, returns which
of the selected µthreads take the branch.
"""

import numpy as np

from matndp.hw.engine.isa import (REGISTER_COUNT, ErrorCause, OperandKind, Opcode, ScalarSpecial,
                                  VectorSpecial)
from matndp.host.kernels import fp32


__all__ = ["Threads", "EXECUTE", "OrderViolation"]


_MASK32 = np.uint64(0xFFFFFFFF)


class OrderViolation(Exception):
    """Scratchpad atomics met in an order other than trigger order: the simulator must run
    these µthreads one after the other instead."""


class Threads:
    """µthreads run together. ``ids`` are trigger numbers (for race reports and ordering);
    ``main`` says whether they are ``.main`` µthreads (the only ones tracked and ordered)."""

    def __init__(self, machine, *, ids, entries, starts, lo, hi, args, main, specials, data,
                 mask_bytes):
        n, lanes = len(ids), machine.lanes
        self.machine, self.n, self.lanes, self.main = machine, n, lanes, main
        self.ids, self.entries = ids, entries
        self.pc, self.lo, self.hi = starts.astype(np.int64), lo, hi
        self.args = args                     # (ARGUMENT_WORDS, n) uint64
        self.specials = specials             # {ScalarSpecial: (n,) uint64}
        self.data = data                     # (n, lanes) uint32
        self.mask_bytes = mask_bytes         # (n, sector_bytes) bool
        self.lanemask = np.where(mask_bytes.reshape(n, lanes, 4).all(axis=2),
                                 np.uint32(0xFFFFFFFF), np.uint32(0))
        self.x = np.zeros((REGISTER_COUNT, n), dtype=np.uint64)
        self.v = np.zeros((REGISTER_COUNT, n, lanes), dtype=np.uint32)
        self.active = np.ones(n, dtype=bool)
        self.finished = np.zeros(n, dtype=bool)
        self.executed = np.zeros(n, dtype=np.int64)
        self.faults = []                     # (thread index, cause, global pc, detail)

    # Operands ---------------------------------------------------------------------------

    def take(self, array, selected):
        """``array[selected]``, without a copy when every µthread is selected (``selected``
        is then ``arange(n)``: indices are unique and sorted)."""
        return array if len(selected) == self.n else array[selected]

    def put(self, array, selected, value):
        if len(selected) == self.n:
            array[...] = value
        else:
            array[selected] = value

    def scalar(self, instruction, name, selected):
        operand = instruction.operand(name)
        if operand.kind is OperandKind.REGISTER:
            return self.take(self.x[operand.index], selected)
        if operand.kind is OperandKind.SPECIAL:
            return self.take(self.specials[ScalarSpecial(operand.index)], selected)
        if operand.kind is OperandKind.ARGUMENT:
            return self.take(self.args[operand.index], selected)
        return np.array([instruction.signed_imm], dtype=np.int64).view(np.uint64)

    def vector(self, instruction, name, selected):
        operand = instruction.operand(name)
        if operand.kind is OperandKind.REGISTER:
            return self.take(self.v[operand.index], selected)
        if operand.kind is OperandKind.SPECIAL:
            special = VectorSpecial(operand.index)
            if special is VectorSpecial.DATA:
                return self.take(self.data, selected)
            if special is VectorSpecial.LANE:
                return np.arange(self.lanes, dtype=np.uint32)[None, :]
            return self.take(self.lanemask, selected)
        if operand.kind is OperandKind.ARGUMENT:
            return (self.take(self.args[operand.index], selected) & _MASK32).astype(np.uint32)[:, None]
        return np.full((1, self.lanes), instruction.imm, dtype=np.uint32)

    def set_scalar(self, instruction, selected, value):
        if instruction.rd:
            self.put(self.x[instruction.rd], selected, value)

    def set_vector(self, instruction, selected, value):
        self.put(self.v[instruction.rd], selected, value)

    def address(self, instruction, selected):
        total = np.array([instruction.signed_imm], dtype=np.int64).view(np.uint64)
        for name in instruction.spec.address:
            total = total + self.scalar(instruction, name, selected)
        return np.broadcast_to(total, (len(selected),))

    # Faults -----------------------------------------------------------------------------

    def fault(self, selected, cause, detail):
        """Stop µthreads ``selected`` (indices) at their pc with ``cause``."""
        for index in np.asarray(selected).tolist():
            self.faults.append((index, cause, int(self.pc[index]), detail))
        self.active[selected] = False


# Scalar ----------------------------------------------------------------------------------

def _scalar_binary(function):
    def execute(threads, instruction, selected):
        a = threads.scalar(instruction, "a", selected)
        b = threads.scalar(instruction, "b", selected)
        threads.set_scalar(instruction, selected, function(a, b))
    return execute


def _signed(x):
    return x.view(np.int64)


def _shift(x):
    return x & np.uint64(63)


def _divc(a, b):
    return ((a & _MASK32) * (b & _MASK32)) >> ((b >> np.uint64(32)) & np.uint64(63))


def _remc(a, b):
    return (a & _MASK32) - _divc(a, b) * ((b >> np.uint64(40)) & np.uint64(0xFFFFFF))


_SCALAR = {
    Opcode.ADD: lambda a, b: a + b,
    Opcode.SUB: lambda a, b: a - b,
    Opcode.AND: lambda a, b: a & b,
    Opcode.OR: lambda a, b: a | b,
    Opcode.XOR: lambda a, b: a ^ b,
    Opcode.SHL: lambda a, b: a << _shift(b),
    Opcode.SHR: lambda a, b: a >> _shift(b),
    Opcode.SRA: lambda a, b: (_signed(a) >> _shift(b).astype(np.int64)).view(np.uint64),
    Opcode.SLT: lambda a, b: (_signed(a) < _signed(b)).astype(np.uint64),
    Opcode.SLTU: lambda a, b: (a < b).astype(np.uint64),
    Opcode.MUL: lambda a, b: (a & _MASK32) * (b & _MASK32),
    Opcode.DIVC: _divc,
    Opcode.REMC: _remc,
}

_CONDITIONS = {
    Opcode.BEQ: lambda a, b: a == b,
    Opcode.BNE: lambda a, b: a != b,
    Opcode.BLT: lambda a, b: _signed(a) < _signed(b),
    Opcode.BGE: lambda a, b: _signed(a) >= _signed(b),
    Opcode.BLTU: lambda a, b: a < b,
    Opcode.BGEU: lambda a, b: a >= b,
}


def _branch(condition):
    def execute(threads, instruction, selected):
        a = threads.scalar(instruction, "a", selected)
        b = threads.scalar(instruction, "b", selected)
        return np.broadcast_to(condition(a, b), (len(selected),))
    return execute


def _jump(threads, instruction, selected):
    return np.ones(len(selected), dtype=bool)


def _nothing(threads, instruction, selected):
    pass


# Vector ----------------------------------------------------------------------------------

def _vector_op(function, arity):
    def execute(threads, instruction, selected):
        operands = [threads.vector(instruction, name, selected) for name in "abc"[:arity]]
        threads.set_vector(instruction, selected, function(*operands))
    return execute


def _int_lanes(function):
    def apply(a, b):
        with np.errstate(over="ignore"):
            return function(a, b).astype(np.uint32)
    return apply


def _lane_shift(b):
    return b & np.uint32(31)


def _broadcast_lanes(values, lanes):
    return np.repeat(values[:, None], lanes, axis=1)


def _reduce(function):
    def apply(a):
        return _broadcast_lanes(fp32.pairwise_tree(function, a), a.shape[-1])
    return apply


def _bf16_elements(a, threads, selected):
    a = np.ascontiguousarray(np.broadcast_to(a, (len(selected), threads.lanes)), dtype="<u4")
    return a.view("<u2").astype(np.uint32)


def _convert(high):
    def execute(threads, instruction, selected):
        elements = _bf16_elements(threads.vector(instruction, "a", selected), threads, selected)
        half = elements[:, threads.lanes:] if high else elements[:, :threads.lanes]
        threads.set_vector(instruction, selected, fp32.from_bf16(half))
    return execute


def _pack_bf16(threads, instruction, selected):
    shape = (len(selected), threads.lanes)
    a = np.broadcast_to(threads.vector(instruction, "a", selected), shape)
    b = np.broadcast_to(threads.vector(instruction, "b", selected), shape)
    elements = np.concatenate([fp32.to_bf16(a), fp32.to_bf16(b)], axis=1).astype("<u2")
    threads.set_vector(instruction, selected, np.ascontiguousarray(elements).view("<u4"))


def _splat(threads, instruction, selected):
    a = np.broadcast_to(threads.scalar(instruction, "a", selected), (len(selected),))
    threads.set_vector(instruction, selected,
                       _broadcast_lanes((a & _MASK32).astype(np.uint32), threads.lanes))


def _get(threads, instruction, selected):
    shape = (len(selected), threads.lanes)
    a = np.broadcast_to(threads.vector(instruction, "a", selected), shape)
    b = np.broadcast_to(threads.scalar(instruction, "b", selected), (len(selected),))
    lane = (b % np.uint64(threads.lanes)).astype(np.int64)
    threads.set_scalar(instruction, selected, a[np.arange(len(selected)), lane].astype(np.uint64))


_VECTOR = {
    Opcode.VADD: (fp32.add, 2), Opcode.VSUB: (fp32.sub, 2), Opcode.VMUL: (fp32.mul, 2),
    Opcode.VFMA: (fp32.fma, 3),
    Opcode.VFMS: (lambda a, b, c: fp32.fma(a, b, c ^ np.uint32(0x80000000)), 3),
    Opcode.VFNMA: (lambda a, b, c: fp32.fma(a ^ np.uint32(0x80000000), b, c), 3),
    Opcode.VMIN: (fp32.minimum, 2), Opcode.VMAX: (fp32.maximum, 2),
    Opcode.VCMPEQ: (fp32.equal, 2), Opcode.VCMPLT: (fp32.less, 2),
    Opcode.VCMPLE: (fp32.less_equal, 2),
    Opcode.VSEL: (lambda a, b, c: np.where(c & np.uint32(1), a, b), 3),
    Opcode.VABS: (fp32.absolute, 1), Opcode.VNEG: (fp32.negative, 1),
    Opcode.VDIV: (fp32.div, 2), Opcode.VSQRT: (fp32.sqrt, 1), Opcode.VRSQRT: (fp32.rsqrt, 1),
    Opcode.VREDSUM: (_reduce(fp32.add), 1), Opcode.VREDMAX: (_reduce(fp32.maximum), 1),
    Opcode.VIADD: (_int_lanes(lambda a, b: a + b), 2),
    Opcode.VISUB: (_int_lanes(lambda a, b: a - b), 2),
    Opcode.VIAND: (_int_lanes(lambda a, b: a & b), 2),
    Opcode.VIOR: (_int_lanes(lambda a, b: a | b), 2),
    Opcode.VIXOR: (_int_lanes(lambda a, b: a ^ b), 2),
    Opcode.VISHL: (_int_lanes(lambda a, b: a << _lane_shift(b)), 2),
    Opcode.VISHR: (_int_lanes(lambda a, b: a >> _lane_shift(b)), 2),
    Opcode.VISRA: (_int_lanes(lambda a, b: (a.view(np.int32) >> _lane_shift(b).astype(np.int32))
                              .view(np.uint32)), 2),
}


# Memory and scratchpad -------------------------------------------------------------------

def _checked(threads, instruction, selected, nbytes, scratchpad):
    """(µthreads that may go on, their byte offsets in the memory image or scratchpad)."""
    machine = threads.machine
    address = threads.address(instruction, selected)
    misaligned = (address % np.uint64(nbytes)) != 0
    if scratchpad:
        outside = address > np.uint64(machine.scratchpad.size - nbytes)
        cause, detail = ErrorCause.SCRATCHPAD_RANGE, "scratchpad address beyond the scratchpad"
    else:
        low, high = machine.window
        outside = ((address >> np.uint64(machine.addr_width)) != 0) | (address < np.uint64(low)) \
            | (address > np.uint64(high - nbytes))
        cause, detail = ErrorCause.OUT_OF_WINDOW, "memory address outside the window"
    if misaligned.any():
        threads.fault(selected[misaligned], ErrorCause.MISALIGNED,
                      f"address not aligned to {nbytes} bytes")
    bad = outside & ~misaligned
    if bad.any():
        threads.fault(selected[bad], cause, detail)
    good = ~(misaligned | outside)
    base = 0 if scratchpad else machine.memory.base
    return selected[good], (address[good] - np.uint64(base)).astype(np.int64), good


def _sector_load(scratchpad):
    def execute(threads, instruction, selected):
        machine = threads.machine
        sector = machine.sector_bytes
        selected, offsets, _ = _checked(threads, instruction, selected, sector, scratchpad)
        sectors = offsets // sector
        words = machine.scratchpad_sectors if scratchpad else machine.memory_sectors
        if threads.main:
            machine.tracker(scratchpad).load(sectors, threads.ids[selected], machine.image_pc(threads, selected))
        threads.set_vector(instruction, selected, words[sectors])
    return execute


def _sector_store(scratchpad, masked=False):
    def execute(threads, instruction, selected):
        machine = threads.machine
        sector = machine.sector_bytes
        value = threads.vector(instruction, "c", selected)
        selected, offsets, good = _checked(threads, instruction, selected, sector, scratchpad)
        value = np.broadcast_to(value, (len(good), threads.lanes))[good]
        sectors = offsets // sector
        if threads.main:
            machine.tracker(scratchpad).store(sectors, threads.ids[selected], machine.image_pc(threads, selected))
        if masked:
            target = machine.memory_bytes
            machine.undo.save(target, sectors)
            old = target[sectors]
            new = np.ascontiguousarray(value, dtype="<u4").view(np.uint8).reshape(old.shape)
            target[sectors] = np.where(threads.mask_bytes[selected], new, old)
        else:
            target = machine.scratchpad_sectors if scratchpad else machine.memory_sectors
            machine.undo.save(target, sectors)
            target[sectors] = value
    return execute


def _word_load(threads, instruction, selected):
    machine = threads.machine
    selected, offsets, _ = _checked(threads, instruction, selected, 4, False)
    if threads.main:
        machine.tracker(False).load(offsets // machine.sector_bytes, threads.ids[selected],
                                    machine.image_pc(threads, selected))
    threads.set_scalar(instruction, selected, machine.memory_words[offsets // 4].astype(np.uint64))


def _word_store(threads, instruction, selected):
    machine = threads.machine
    value = np.broadcast_to(threads.scalar(instruction, "c", selected), (len(selected),))
    selected, offsets, good = _checked(threads, instruction, selected, 4, False)
    if threads.main:
        machine.tracker(False).store(offsets // machine.sector_bytes, threads.ids[selected],
                                     machine.image_pc(threads, selected))
    words = offsets // 4
    machine.undo.save(machine.memory_words, words)
    machine.memory_words[words] = (value[good] & _MASK32).astype(np.uint32)


def _atomic(opcode):
    def execute(threads, instruction, selected):
        machine = threads.machine
        lanes = threads.lanes
        value = threads.vector(instruction, "c", selected)
        factor = threads.vector(instruction, "b", selected) if opcode is Opcode.SAMOFMA else None
        selected, offsets, good = _checked(threads, instruction, selected, machine.sector_bytes, True)
        if not len(selected):
            return
        value = np.broadcast_to(value, (len(good), lanes))[good]
        sectors = offsets // machine.sector_bytes
        if threads.main:
            ids = threads.ids[selected]
            last = machine.atomic_last[sectors]
            if (last > ids).any():
                raise OrderViolation
            machine.undo.save(machine.atomic_last, sectors)
            np.maximum.at(machine.atomic_last, sectors, ids)
            machine.tracker(True).atomic(sectors, ids, threads.entries[selected],
                                         machine.image_pc(threads, selected))
        words = (sectors[:, None] * lanes + np.arange(lanes)).reshape(-1)
        store = machine.scratchpad_words
        machine.undo.save(store, words)
        if opcode is Opcode.SAMOADD:
            # ufunc.at applies repeated indices one after the other, in index order, each
            # addition rounded to binary32 (tests/host/kernels check this against a loop).
            with np.errstate(all="ignore"):
                np.add.at(store.view(np.float32), words, value.reshape(-1).view(np.float32))
            store[words] = fp32.canonical(store[words])
        else:
            touched, inverse = np.unique(sectors, return_inverse=True)
            rows = machine.scratchpad_sectors
            if opcode is Opcode.SAMOMAX:
                rows[touched] = fp32.maximum_accumulate(rows[touched], inverse.reshape(-1), value)
            else:
                factor = np.broadcast_to(factor, (len(good), lanes))[good]
                rows[touched] = fp32.fma_accumulate(rows[touched], inverse.reshape(-1), factor, value)
    return execute


EXECUTE = {
    Opcode.NOP: _nothing,
    Opcode.EXIT: _nothing,
    **{opcode: _scalar_binary(function) for opcode, function in _SCALAR.items()},
    **{opcode: _branch(condition) for opcode, condition in _CONDITIONS.items()},
    Opcode.JUMP: _jump,
    **{opcode: _vector_op(function, arity) for opcode, (function, arity) in _VECTOR.items()},
    Opcode.VCVTLO: _convert(high=False),
    Opcode.VCVTHI: _convert(high=True),
    Opcode.VPACKBF: _pack_bf16,
    Opcode.VSPLAT: _splat,
    Opcode.VGET: _get,
    Opcode.VLD: _sector_load(scratchpad=False),
    Opcode.VST: _sector_store(scratchpad=False),
    Opcode.VSTM: _sector_store(scratchpad=False, masked=True),
    Opcode.LW: _word_load,
    Opcode.SW: _word_store,
    Opcode.SLD: _sector_load(scratchpad=True),
    Opcode.SST: _sector_store(scratchpad=True),
    Opcode.SAMOADD: _atomic(Opcode.SAMOADD),
    Opcode.SAMOMAX: _atomic(Opcode.SAMOMAX),
    Opcode.SAMOFMA: _atomic(Opcode.SAMOFMA),
}
