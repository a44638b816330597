"""Memory's answers to one port's writes, buffered so that the port never holds memory's
write-response channel (docs/fpga.md, "The expander top").

Several ports share memory's B channel: if one port's answer waited for its GPU to take a
B response, every answer behind it would wait too (the other ports' and the engine's), and
with them the memory controller's writes. So each port's answers enter a buffer of
``depth`` entries that always has room for them: the port's writes pass only while it has
a *credit*; a credit is spent as a write leaves toward memory and returned as its answer
leaves the buffer toward the port's write bridge. A port without credit holds only its own
requests (in order: its reads behind the write wait too); the other ports flow on.

A port's write throughput is at most ``depth`` writes per round trip of memory.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from ..layouts import MemoryPortSignature
from ..stream import Queue
from .write_bridge import write_completion_layout


__all__ = ["MAX_WRITE_ANSWERS", "checked_write_answers", "WriteAnswerBuffer"]


MAX_WRITE_ANSWERS = 1024


def checked_write_answers(depth):
    """``depth``, or the error that names what is wrong with it."""
    if not isinstance(depth, int) or isinstance(depth, bool):
        raise TypeError(f"write_answers must be an int, not {depth!r}")
    if not 1 <= depth <= MAX_WRITE_ANSWERS:
        raise ValueError(f"write_answers must be in 1..{MAX_WRITE_ANSWERS}, not {depth}")
    return depth


class WriteAnswerBuffer(wiring.Component):
    """Ports: ``gpu`` (target) and ``mem`` (initiator), one memory port passed through,
    its writes held while it has no credit; ``answers`` (memory's answers to the port's
    writes, in order; never refused while the port's writes are in flight) and
    ``completions`` (the same, toward the port's write bridge)."""

    def __init__(self, config, depth=32):
        self.config = config
        self.depth = checked_write_answers(depth)
        super().__init__({
            "gpu": In(MemoryPortSignature(config)),
            "mem": Out(MemoryPortSignature(config)),
            "answers": In(stream.Signature(write_completion_layout())),
            "completions": Out(stream.Signature(write_completion_layout())),
        })

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        m.submodules.buffer = buffer = Queue(write_completion_layout(), depth)
        connect(m, flipped(self.answers), buffer.i)
        connect(m, buffer.o, flipped(self.completions))
        connect(m, flipped(self.mem.resp), flipped(self.gpu.resp))

        # A credit goes only as a write leaves: while a write is offered its credit cannot
        # go, so an offer, once made, stays made.
        credits = Signal(range(depth + 1), init=depth)
        request = self.gpu.req
        admitted = ~request.payload.write | (credits != 0)
        m.d.comb += [
            self.mem.req.valid.eq(request.valid & admitted),
            self.mem.req.payload.eq(request.payload),
            request.ready.eq(self.mem.req.ready & admitted),
        ]
        spent = self.mem.req.valid & self.mem.req.ready & request.payload.write
        returned = self.completions.valid & self.completions.ready
        with m.If(spent & ~returned):
            m.d.sync += credits.eq(credits - 1)
        with m.Elif(returned & ~spent):
            m.d.sync += credits.eq(credits + 1)
        return m
