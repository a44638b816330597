"""A register file generated from a :class:`~hw.csr_map.RegisterMap`."""

from amaranth.hdl import Module, Signal, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from .csr_bus import CSRBusSignature


__all__ = ["RegisterFile", "FieldPort"]


class FieldPort:
    """The hardware side of one field.

    ``rw``:  ``value`` is the stored value.
    ``ro``:  drive ``value``.
    ``ext``: drive ``value``; ``w_stb`` pulses with ``w_data`` when the bus writes it.
    """

    def __init__(self, register, field):
        self.field = field
        prefix = f"{register.name.replace('.', '_')}__{field.name}"
        self.value = Signal(field.width, init=field.reset, name=prefix)
        if field.access == "ext":
            self.w_stb = Signal(name=f"{prefix}__w_stb")
            self.w_data = Signal(field.width, name=f"{prefix}__w_data")


class RegisterFile(wiring.Component):
    def __init__(self, register_map):
        self.register_map = register_map
        self._ports = {}
        for register in register_map:
            for field in register.fields:
                self._ports[register.name, field.name] = FieldPort(register, field)
        super().__init__({"bus": In(CSRBusSignature(register_map.addr_width))})

    def field(self, register_name, field_name):
        try:
            return self._ports[register_name, field_name]
        except KeyError:
            raise KeyError(f"no field {register_name}.{field_name} in the register map") from None

    def elaborate(self, platform):
        m = Module()
        bus = self.bus

        # One address decoder per register; reads are an AND-OR of the selected values.
        read_value = 0
        mapped = 0
        write_to_read_only = 0
        for register in self.register_map:
            selected = Signal(name=f"select_{register.name.replace('.', '_')}")
            m.d.comb += selected.eq(bus.addr == register.address)
            mapped = mapped | selected
            if not register.writable:
                write_to_read_only = write_to_read_only | selected
            for field in register.fields:
                port = self._ports[register.name, field.name]
                read_value = read_value | (Mux(selected, port.value, 0) << field.lsb)
                if field.access == "rw":
                    with m.If(bus.w_en & selected):
                        m.d.sync += port.value.eq(bus.w_data[field.lsb:][:field.width])
                elif field.access == "ext":
                    m.d.comb += [
                        port.w_stb.eq(bus.w_en & selected),
                        port.w_data.eq(bus.w_data[field.lsb:][:field.width]),
                    ]

        # Misaligned addresses select no register and so are unmapped.
        error = ~mapped | (bus.w_en & write_to_read_only)
        m.d.sync += [
            bus.ack.eq(bus.r_en | bus.w_en),
            bus.r_data.eq(Mux(bus.r_en, read_value, 0)),
            bus.err.eq((bus.r_en | bus.w_en) & error),
        ]
        return m
