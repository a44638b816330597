"""K GPU-side memory ports merged into one (docs/ndpxnet-rtl.md, "Port merge").

Requests from the ports are merged round robin among the ports that offer one; a port's
requests keep their order. The port's index is appended above each request's id, so the
merged id is ``id_width + ceil(log2 K)`` bits and read responses return to their port by
those top bits, with the port's own id restored.

A port that withholds ``ready`` on its responses must not hold the others': the merged
response stream is shared, so one refused response would block every port behind it (and
the engine's loads that share memory's response stream below). So the merged port never
refuses a response. Each port has a response buffer of ``response_depth`` entries and as
many *credits*: a read is let through only while its port has a credit, the credit is
spent as the read leaves toward memory and returned as its response leaves the buffer
toward the GPU. Every response in flight therefore has its place reserved in its port's
buffer. A port without credit holds only its own reads; its writes, and the other ports,
flow on.

What it costs: ``K × response_depth`` response entries (one sector, an id and a status
each), and two cycles of read latency (the buffer's registered read). A port's read
throughput is at most ``response_depth`` per round trip of memory.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from ..arbiter import with_id_width
from ..layouts import MemoryPortSignature, request_layout, response_layout
from ..stream import Queue, RoundRobinMerge


__all__ = ["PortMerge", "port_index_bits", "merged_config", "checked_ports", "MAX_PORTS"]


MAX_PORTS = 16


def _checked_positive(name, value, maximum):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {value!r}")
    if not 1 <= value <= maximum:
        raise ValueError(f"{name} must be in 1..{maximum}, not {value}")
    return value


def checked_ports(ports, response_depth):
    """``(ports, response_depth)``, or the error that names what is wrong with them."""
    _checked_positive("ports", ports, MAX_PORTS)
    if ports < 2:
        raise ValueError(f"ports must be at least 2 (a single port needs no merge), not {ports}")
    _checked_positive("response_depth", response_depth, 1024)
    return ports, response_depth


def port_index_bits(ports):
    """Bits that name one of ``ports`` ports: ceil(log2 ports)."""
    return (ports - 1).bit_length()


def merged_config(config, ports):
    """``config`` with ids wide enough for a port's id and its port index above it."""
    width = config.id_width + port_index_bits(ports)
    try:
        return with_id_width(config, width)
    except ValueError as error:
        raise ValueError(f"{ports} ports need {port_index_bits(ports)} id bits above the "
                         f"ports' {config.id_width}: {error}") from None


class PortMerge(wiring.Component):
    """Ports: ``gpu[0]`` … ``gpu[K − 1]`` (targets, ids of ``config.id_width`` bits) and
    ``mem`` (initiator, ids of :func:`merged_config`'s width)."""

    def __init__(self, config, ports, *, response_depth=8):
        self.ports, self.response_depth = checked_ports(ports, response_depth)
        self.config = config
        self.merged = merged_config(config, ports)
        super().__init__({
            "gpu": In(MemoryPortSignature(config)).array(ports),
            "mem": Out(MemoryPortSignature(self.merged)),
        })

    def elaborate(self, platform):
        m = Module()
        config, ports, depth = self.config, self.ports, self.response_depth
        mem = self.mem

        # --- requests ---------------------------------------------------------------------
        m.submodules.requests = merge = RoundRobinMerge(request_layout(config), ports)
        # A credit is spent as a read leaves toward memory and only then: while a port's
        # read is offered its credit cannot go, so an offer, once made, stays made.
        credits = [Signal(range(depth + 1), init=depth, name=f"credits{port}")
                   for port in range(ports)]
        for port in range(ports):
            request = self.gpu[port].req
            admitted = request.payload.write | (credits[port] != 0)
            m.d.comb += [
                merge.i[port].valid.eq(request.valid & admitted),
                merge.i[port].payload.eq(request.payload),
                request.ready.eq(merge.i[port].ready & admitted),
            ]
        merged = merge.o.payload
        m.d.comb += [
            mem.req.valid.eq(merge.o.valid),
            mem.req.payload.addr.eq(merged.addr),
            mem.req.payload.write.eq(merged.write),
            mem.req.payload.data.eq(merged.data),
            mem.req.payload.mask.eq(merged.mask),
            mem.req.payload.id.eq(Cat(merged.id, merge.index)),
            merge.o.ready.eq(mem.req.ready),
        ]
        read_leaves = mem.req.valid & mem.req.ready & ~merged.write

        # --- responses --------------------------------------------------------------------
        route = mem.resp.payload.id[config.id_width:]
        m.d.comb += mem.resp.ready.eq(1)        # every response has its place reserved
        for port in range(ports):
            buffer = Queue(response_layout(config), depth)
            m.submodules[f"responses{port}"] = buffer
            m.d.comb += [
                buffer.i.valid.eq(mem.resp.valid & (route == port)),
                buffer.i.payload.data.eq(mem.resp.payload.data),
                buffer.i.payload.id.eq(mem.resp.payload.id[:config.id_width]),
                buffer.i.payload.status.eq(mem.resp.payload.status),
            ]
            connect(m, buffer.o, flipped(self.gpu[port].resp))
            spent = read_leaves & (merge.index == port)
            returned = self.gpu[port].resp.valid & self.gpu[port].resp.ready
            with m.If(spent & ~returned):
                m.d.sync += credits[port].eq(credits[port] - 1)
            with m.Elif(returned & ~spent):
                m.d.sync += credits[port].eq(credits[port] + 1)
        return m
