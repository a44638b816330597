"""What the GTKWave save files of the flows show of the NDP slice: its ports in groups, the
trigger's events into the engine and the engine's memory requests inside it, and every
stream payload as its fields (docs/waveforms.md)."""

from amaranth.hdl import Shape

from matndp.hw.arbiter import with_id_width
from matndp.hw.layouts import request_layout, response_layout, trigger_event_layout


__all__ = ["PORT_GROUPS", "ENGINE_GROUPS", "DECIMAL_FIELDS", "payload_fields"]


# The slice's own ports, by group: (title, port-name prefixes).
PORT_GROUPS = [
    ("gpu", ["gpu__"]),
    ("mem", ["mem__", "mem_write_error"]),
    ("trigger", ["events__", "irq"]),
    ("csr", ["csr__"]),
    ("clock and reset", ["clk", "rst"]),
]

# Inside a slice with an engine: (title, instance, port names).
ENGINE_GROUPS = (
    ("trigger events into the engine", "engine", ("events__valid", "events__ready", "events__payload")),
    ("engine memory requests", "arbiter", ("ndp__req__valid", "ndp__req__ready", "ndp__req__payload",
                                           "ndp__resp__valid")),
)

# Fields shown in decimal; the other multi-bit fields are in hex.
DECIMAL_FIELDS = ("entry", "id", "status")


def _fields(layout):
    return [(name, Shape.cast(field.shape).width) for name, field in layout]


def payload_fields(config):
    """``{port: [(field, width)]}`` of every stream payload the groups show, the ports of
    an instance named ``instance.port``."""
    memory_side = with_id_width(config, config.mem_id_width)
    fields = {"gpu__req__payload": _fields(request_layout(config)),
              "gpu__resp__payload": _fields(response_layout(config)),
              "mem__req__payload": _fields(request_layout(memory_side)),
              "mem__resp__payload": _fields(response_layout(memory_side))}
    events = _fields(trigger_event_layout(config))
    if config.engine is None:
        fields["events__payload"] = events
    else:
        fields["engine.events__payload"] = events
        fields["arbiter.ndp__req__payload"] = _fields(request_layout(
            with_id_width(config, config.ndp_id_width)))
    return fields
