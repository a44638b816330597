"""The shapes of the library's problems: their dims, how many elements each kind of tensor
has, the checks a kernel makes of a problem, how many partials its reductions use, and the
argument values and scratchpad regions the kernels reducing along rows share.

A reduction into one scratchpad address waits for the atomic latency between updates, so
the library splits each accumulator into K *partials*, consecutive sectors updating
different ones; the finalizer adds the partials in ascending order (docs/kernels.md,
"Reductions and determinism").
"""

from matndp.host.kernels.library.spec import (LANES, SECTOR_BYTES, DType, LibraryError, Region,
                                              Role, TensorSpec)


__all__ = ["ELEMENTS", "CHANNELS", "ROWS", "per_element", "matrix", "per_channel",
           "per_column", "per_row", "fp32", "rows_of", "IN", "OUT", "STATE", "multiple",
           "both", "at_least", "channel_partials", "row_partials", "partial_shift",
           "row_partials_bytes", "ROW_VALUES", "row_partials_region", "columns_region",
           "ROW_REDUCE", "channel_groups", "column_groups", "one_per_row", "init_channel_groups",
           "init_column_groups", "init_channel_partials", "init_row_partials", "init_rows"]


ELEMENTS = ("elements",)
CHANNELS = ("rows", "channels")      # channels innermost: rows = N·H·W (or tokens)
ROWS = ("rows", "columns")           # the op reduces along a row of `columns`

IN, OUT, STATE = Role.INPUT, Role.OUTPUT, Role.STATE


def per_element(problem):
    return problem["elements"]


def matrix(problem):
    return problem["rows"] * (problem["channels"] if "channels" in problem else problem["columns"])


def per_channel(problem):
    return problem["channels"]


def per_column(problem):
    return problem["columns"]


def per_row(problem):
    return problem["rows"]


def fp32(name, role, extent=per_element, layout="like the trigger", internal=False):
    return TensorSpec(name, role, DType.FP32, extent, layout, internal)


def rows_of(name, role, sectors, layout):
    """An internal tensor of ``sectors`` broadcast sectors per row."""
    return TensorSpec(name, role, DType.FP32, lambda problem: problem["rows"] * LANES * sectors,
                      layout, True, sectors)


# Checks ------------------------------------------------------------------------------------

def multiple(dim, of):
    def check(problem):
        if problem[dim] % of:
            raise LibraryError(f"{dim} = {problem[dim]} must be a multiple of {of}: a sector "
                               f"holds {of} consecutive elements of one row")
    return check


def both(*checks):
    def check(problem):
        for one in checks:
            one(problem)
    return check


def at_least(dim, minimum, why):
    def check(problem):
        if problem[dim] < minimum:
            raise LibraryError(f"{dim} = {problem[dim]} must be at least {minimum} ({why})")
    return check


# Partials ----------------------------------------------------------------------------------

# At least this many distinct addresses per statistic of a channel reduction, and at most
# this many partials of a row.
_SPREAD = 8
_ROW_SPREAD = 4


def channel_partials(problem, lanes=LANES):
    groups = problem["channels"] // lanes
    return max(1, -(-_SPREAD // groups))


def row_partials(problem, lanes=LANES):
    partials = 1
    while partials * 2 <= min(_ROW_SPREAD, problem["columns"] // lanes):
        partials *= 2
    return partials


# The µthreads a finalizer runs as: one per sector of per-channel (per-column) FP32 values,
# or one per row.

def channel_groups(problem):
    return problem["channels"] // LANES


def column_groups(problem):
    return problem["columns"] // LANES


def one_per_row(problem):
    return problem["rows"]


# The µthreads an initializer runs as, given the problem and the partials K: one per sector
# it clears or copies — of per-channel (per-column) FP32 values, of one statistic's
# partials (the µthread clears that sector of each statistic), or of per-row values.

def init_channel_groups(problem, partials):
    return channel_groups(problem)


def init_column_groups(problem, partials):
    return column_groups(problem)


def init_channel_partials(problem, partials):
    return channel_groups(problem) * partials


def init_row_partials(problem, partials):
    return problem["rows"] * partials


def init_rows(problem, partials):
    return problem["rows"]


def partial_shift(kernel, partials):
    """log2 of the bytes of a row's ``partials`` (a row's partial is chosen by masking
    OFFSET, so their number is a power of two)."""
    if partials & (partials - 1):
        raise LibraryError(f"{kernel}: row reductions need a power-of-two number of partials, "
                           f"not {partials}")
    return (partials * SECTOR_BYTES).bit_length() - 1


def row_partials_bytes(problem, partials):
    """Bytes of one statistic's partials over every row."""
    return problem["rows"] * SECTOR_BYTES * partials


# What the kernels reducing along rows (layer norm, softmax) share -------------------------------

def _partial_shift(b):
    return partial_shift(b.launch.kernel.name, b.partials)


ROW_VALUES = {
    "ROWS": lambda b: b.row_descriptor("columns"),
    "ROW_COUNT": lambda b: b.problem["rows"],
    "ROW_BYTES": lambda b: 4 * b.problem["columns"],
    "PARTIAL_SHIFT": _partial_shift,
    "PARTIAL_MASK": lambda b: (1 << _partial_shift(b)) - 1,
    "PARTIALS_BYTES": lambda b: row_partials_bytes(b.problem, b.partials),
}


def row_partials_region(name):
    """A scratchpad region of one statistic's partials of every row."""
    return Region(name, row_partials_bytes)


def columns_region(name, count=1):
    """A scratchpad region of ``count`` FP32 values per column."""
    return Region(name, lambda problem, partials: 4 * count * problem["columns"])


# How a row reduction's finalizer combines a row, as the kernels' orders state it.
ROW_REDUCE = ("finalizer per row: partials added in ascending order, then the lanes "
              "pairwise ((0+1), (2+3), …, then those pairwise)")
