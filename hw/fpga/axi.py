"""AXI4 and AXI4-Lite as the FPGA top uses them: each channel's payload as a data layout,
bus signatures with AXI's own signal names (``awaddr``, ``wvalid``, ...), and the glue
between a bus's flat signals and :mod:`amaranth.lib.stream` streams.

A signature is the bus as its master sees it; a slave takes it ``In(...)``. Channels
``aw``, ``w``, ``ar`` flow from master to slave, ``b`` and ``r`` back. Response codes
are :class:`~matndp.hw.layouts.ResponseStatus`, whose values are AXI's.
"""

from amaranth.hdl import Value, unsigned
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from ..layouts import ResponseStatus


__all__ = ["Burst", "ResponseStatus", "LEN_BITS", "MAX_FIXED_BEATS", "WRAP_BEATS",
           "MEMORY_CACHE", "address_layout", "write_data_layout", "write_response_layout",
           "read_data_layout", "lite_address_layout", "lite_write_data_layout",
           "lite_write_response_layout", "lite_read_data_layout", "AXI4Signature",
           "AXI4LiteSignature", "drive_channel", "take_channel"]


class Burst(enum.Enum, shape=2):
    """``AxBURST``; the fourth code is reserved."""

    FIXED = 0
    INCR = 1
    WRAP = 2


LEN_BITS = 8                   # AxLEN: beats - 1, up to 256 beats
MAX_FIXED_BEATS = 16
WRAP_BEATS = (2, 4, 8, 16)
# AxCACHE of the memory side's requests: normal, non-cacheable, bufferable memory.
MEMORY_CACHE = 0b0011


def address_layout(addr_width, id_width):
    """AW and AR."""
    return data.StructLayout({
        "id":    unsigned(id_width),
        "addr":  unsigned(addr_width),
        "len":   unsigned(LEN_BITS),
        "size":  unsigned(3),
        "burst": unsigned(2),
        "lock":  unsigned(1),
        "cache": unsigned(4),
        "prot":  unsigned(3),
        "qos":   unsigned(4),
    })


def write_data_layout(data_width):
    return data.StructLayout({
        "data": unsigned(data_width),
        "strb": unsigned(data_width // 8),
        "last": unsigned(1),
    })


def write_response_layout(id_width):
    return data.StructLayout({"id": unsigned(id_width), "resp": ResponseStatus})


def read_data_layout(data_width, id_width):
    return data.StructLayout({
        "id":   unsigned(id_width),
        "data": unsigned(data_width),
        "resp": ResponseStatus,
        "last": unsigned(1),
    })


def lite_address_layout(addr_width):
    return data.StructLayout({"addr": unsigned(addr_width), "prot": unsigned(3)})


def lite_write_data_layout(data_width):
    return data.StructLayout({"data": unsigned(data_width), "strb": unsigned(data_width // 8)})


def lite_write_response_layout():
    return data.StructLayout({"resp": ResponseStatus})


def lite_read_data_layout(data_width):
    return data.StructLayout({"data": unsigned(data_width), "resp": ResponseStatus})


def _channel_members(channel, layout, forward):
    """Flat members of one channel: its payload fields, ``valid`` and ``ready``, named
    ``<channel><field>`` as AXI names them."""
    flow, back = (Out, In) if forward else (In, Out)
    members = {f"{channel}{name}": flow(field.shape) for name, field in layout}
    members[f"{channel}valid"] = flow(1)
    members[f"{channel}ready"] = back(1)
    return members


def _check_width(kind, name, value, low):
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{kind}: {name} must be an int of at least {low}, not {value!r}")


class AXI4Signature(wiring.Signature):
    """An AXI4 bus (``channels``: the write half ``aw``, ``w``, ``b`` and/or the read half
    ``ar``, ``r``) with ``data_width``-bit data, ``addr_width``-bit byte addresses and
    ``id_width``-bit ids."""

    HALVES = {"write": ("aw", "w", "b"), "read": ("ar", "r")}

    def __init__(self, *, addr_width, data_width, id_width, halves=("write", "read")):
        _check_width("AXI4Signature", "addr_width", addr_width, 12)
        _check_width("AXI4Signature", "id_width", id_width, 1)
        if data_width not in (32, 64, 128, 256, 512, 1024):
            raise ValueError(f"AXI4Signature: data_width must be one of AXI's 32 ... 1024 "
                             f"bits, not {data_width!r}")
        unknown = set(halves) - set(self.HALVES)
        if unknown or not halves:
            raise ValueError(f"AXI4Signature: halves must name 'write' and/or 'read', not {halves!r}")
        self.addr_width, self.data_width, self.id_width = addr_width, data_width, id_width
        self.halves = tuple(halves)
        layouts = {
            "aw": (address_layout(addr_width, id_width), True),
            "w":  (write_data_layout(data_width), True),
            "b":  (write_response_layout(id_width), False),
            "ar": (address_layout(addr_width, id_width), True),
            "r":  (read_data_layout(data_width, id_width), False),
        }
        self.layouts = {channel: layouts[channel][0]
                        for half in self.halves for channel in self.HALVES[half]}
        members = {}
        for channel in self.layouts:
            members.update(_channel_members(channel, *layouts[channel]))
        super().__init__(members)

    def __eq__(self, other):
        return (isinstance(other, AXI4Signature) and
                (other.addr_width, other.data_width, other.id_width, other.halves) ==
                (self.addr_width, self.data_width, self.id_width, self.halves))

    def __repr__(self):
        return (f"AXI4Signature(addr_width={self.addr_width}, data_width={self.data_width}, "
                f"id_width={self.id_width}, halves={self.halves!r})")


class AXI4LiteSignature(wiring.Signature):
    """An AXI4-Lite bus with 32-bit data and ``addr_width``-bit byte addresses."""

    DATA_WIDTH = 32

    def __init__(self, *, addr_width):
        _check_width("AXI4LiteSignature", "addr_width", addr_width, 2)
        self.addr_width = addr_width
        width = self.DATA_WIDTH
        self.layouts = {
            "aw": lite_address_layout(addr_width),
            "w":  lite_write_data_layout(width),
            "b":  lite_write_response_layout(),
            "ar": lite_address_layout(addr_width),
            "r":  lite_read_data_layout(width),
        }
        members = {}
        for channel, layout in self.layouts.items():
            members.update(_channel_members(channel, layout, channel in ("aw", "w", "ar")))
        super().__init__(members)

    def __eq__(self, other):
        return isinstance(other, AXI4LiteSignature) and other.addr_width == self.addr_width

    def __repr__(self):
        return f"AXI4LiteSignature(addr_width={self.addr_width})"


def drive_channel(m, bus, channel, source):
    """Drive ``bus``'s ``channel`` (one that flows out of this side) from the stream
    ``source``, whose payload has the channel's field names."""
    m.d.comb += [
        getattr(bus, f"{channel}valid").eq(source.valid),
        source.ready.eq(getattr(bus, f"{channel}ready")),
    ]
    for name, _ in source.payload.shape():
        m.d.comb += getattr(bus, f"{channel}{name}").eq(Value.cast(source.payload[name]))


def take_channel(m, bus, channel, sink):
    """Feed ``bus``'s ``channel`` (one that flows into this side) into the stream ``sink``."""
    m.d.comb += [
        sink.valid.eq(getattr(bus, f"{channel}valid")),
        getattr(bus, f"{channel}ready").eq(sink.ready),
    ]
    for name, _ in sink.payload.shape():
        m.d.comb += Value.cast(sink.payload[name]).eq(getattr(bus, f"{channel}{name}"))
