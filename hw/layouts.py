"""Payload layouts and stream signatures of the GPU and memory ports (docs/trigger.md)."""

from amaranth.hdl import unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out


__all__ = ["ResponseStatus", "request_layout", "response_layout", "trigger_event_layout",
           "MemoryPortSignature"]


class ResponseStatus(enum.Enum, shape=2):
    """How memory answered an access. The codes are AXI's ``RRESP``/``BRESP`` values, so an
    AXI bridge passes them through unchanged; bit 1 set means the access failed."""

    OKAY = 0
    #: Never produced here: no request is exclusive. Listed so that every code has a name.
    EXCLUSIVE_OKAY = 1
    SLAVE_ERROR = 2
    DECODE_ERROR = 3


def request_layout(config):
    return data.StructLayout({
        "addr":  unsigned(config.addr_width),
        "write": unsigned(1),
        "data":  unsigned(config.data_width),
        "mask":  unsigned(config.sector_bytes),
        "id":    unsigned(config.id_width),
    })


def response_layout(config):
    """A read response: the sector, the read's id and how memory answered (the data of a
    failed read carries no meaning)."""
    return data.StructLayout({
        "data":   unsigned(config.data_width),
        "id":     unsigned(config.id_width),
        "status": ResponseStatus,
    })


def trigger_event_layout(config):
    """What the NDP engine receives per triggering access.

    For a write the data and mask are the request's; for a read they are the returned
    sector and the request's byte enables.
    """
    return data.StructLayout({
        "entry":  unsigned(config.trigger.entry_bits),
        "addr":   unsigned(config.addr_width),
        "offset": unsigned(config.addr_width),
        "data":   unsigned(config.data_width),
        "mask":   unsigned(config.sector_bytes),
        "write":  unsigned(1),
    })


class MemoryPortSignature(wiring.Signature):
    """A memory port as seen by its initiator: requests out, read responses in."""

    def __init__(self, config):
        super().__init__({
            "req":  Out(stream.Signature(request_layout(config))),
            "resp": In(stream.Signature(response_layout(config))),
        })
