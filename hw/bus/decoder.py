"""The address decoder of a register bus: one bus from the host, split between the register
file and the windows of a :class:`~.map.RegisterMap`."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .map import RegisterMap
from .signature import CSRBusSignature


__all__ = ["BusDecoder"]


_WORD_OFFSET_BITS = 2


class BusDecoder(wiring.Component):
    """Routes each access on ``bus`` to one target, by address:

    - inside a window: that window's bus, ``windows.<name>``, with the address relative to
      the window (:attr:`~.map.Window.addr_width` bits), if the window's rules allow the
      access (a read of a readable, a write of a writable window) and it is word-aligned;
    - below :attr:`~.map.RegisterMap.register_addr_width` bits and in no window:
      ``registers``, toward the :class:`~.register_file.RegisterFile`, which refuses what
      is not a register;
    - anywhere else: refused here, with ``err`` a cycle after the strobe.

    The target's ``ack``, ``r_data`` and ``err`` come back to ``bus`` as it gives them, so
    the decoder adds no cycle: the register file still answers three cycles after the strobe.
    Only the target of the latest access is listened to, so an answer that comes late (after
    the host gave up on it) or unasked is dropped.

    ``windows`` names the windows that have a target; the others (a build without the
    hardware behind them) are refused like unmapped addresses. By default every window of
    the map has one.
    """

    def __init__(self, register_map, *, windows=None):
        if not isinstance(register_map, RegisterMap):
            raise TypeError(f"BusDecoder: {register_map!r} is not a RegisterMap")
        known = [window.name for window in register_map.windows]
        routed = known if windows is None else list(windows)
        for name in routed:
            if name not in known:
                raise ValueError(f"BusDecoder: the register map has no window {name!r} "
                                 f"(windows: {', '.join(known) or 'none'})")
        if len(set(routed)) != len(routed):
            raise ValueError(f"BusDecoder: a window is named twice in {routed!r}")
        self.register_map = register_map
        self.routed = tuple(name for name in known if name in routed)
        super().__init__({
            "bus":       In(CSRBusSignature(register_map.addr_width)),
            "registers": Out(CSRBusSignature(register_map.register_addr_width)),
            "windows":   Out(wiring.Signature({
                name: Out(CSRBusSignature(register_map.window(name).addr_width))
                for name in self.routed})),
        })

    def elaborate(self, platform):
        m = Module()
        bus = self.bus
        register_map = self.register_map
        width = register_map.addr_width
        register_width = register_map.register_addr_width

        targets = [self.registers, *(getattr(self.windows, name) for name in self.routed)]
        # One-hot: the target this cycle's strobe goes to (none: refused here).
        selected = Signal(len(targets))
        with m.Switch(bus.addr):
            # Windows first: a window may lie between blocks, inside the register file's span.
            for window in register_map.windows:
                high = window.base >> window.addr_width
                pattern = (f"{high:0{width - window.addr_width}b}" if width > window.addr_width else "") \
                    + "-" * (window.addr_width - _WORD_OFFSET_BITS) + "0" * _WORD_OFFSET_BITS
                with m.Case(pattern):
                    if window.name in self.routed:
                        allowed = ((bus.r_en if window.readable else 0) |
                                   (bus.w_en if window.writable else 0))
                        m.d.comb += selected[1 + self.routed.index(window.name)].eq(allowed)
            with m.Case("0" * (width - register_width) + "-" * register_width):
                m.d.comb += selected[0].eq(1)

        for index, target in enumerate(targets):
            m.d.comb += [
                target.addr.eq(bus.addr[:len(target.addr)]),
                target.w_data.eq(bus.w_data),
                target.r_en.eq(bus.r_en & selected[index]),
                target.w_en.eq(bus.w_en & selected[index]),
            ]

        pending = Signal(len(targets))
        refused = Signal()
        with m.If(bus.r_en | bus.w_en):
            m.d.sync += [pending.eq(selected), refused.eq(selected == 0)]
        with m.Elif(bus.ack):
            m.d.sync += [pending.eq(0), refused.eq(0)]

        acked = 0
        read_data = 0
        error = refused
        for index, target in enumerate(targets):
            answered = pending[index] & target.ack
            acked = acked | answered
            read_data = read_data | Mux(answered, target.r_data, 0)
            error = error | (answered & target.err)
        m.d.comb += [
            bus.ack.eq(refused | acked),
            bus.r_data.eq(read_data),
            bus.err.eq(error),
        ]
        return m
