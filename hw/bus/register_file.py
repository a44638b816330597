"""A register file generated from a :class:`~hw.csr_map.RegisterMap`."""

from amaranth.hdl import Module, Signal, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from .signature import CSRBusSignature, CSR_DATA_WIDTH


__all__ = ["RegisterFile", "FieldPort"]


# Registers are grouped for reading by address bits above these.
_BLOCK_BITS = 6


class FieldPort:
    """The hardware side of one field.

    ``rw``:  ``value`` is the stored value; ``w_stb`` pulses with ``w_data`` when the bus
             writes it (``value`` follows a cycle later), for logic derived from it.
    ``ro``:  drive ``value``.
    ``ext``: drive ``value``; ``w_stb`` pulses with ``w_data`` when the bus writes it.
    """

    def __init__(self, register, field):
        self.field = field
        prefix = f"{register.name.replace('.', '_')}__{field.name}"
        self.value = Signal(field.width, init=field.reset, name=prefix)
        if field.access in ("rw", "ext"):
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

        # One address decoder per register for writes and errors. Reads are a two-level
        # multiplexer: first among the registers of one 64-byte block (one filter entry's
        # registers share one), beside those registers, then among the blocks. A single
        # AND-OR over every register would pull all their bits to one place.
        mapped = 0
        write_to_read_only = 0
        blocks = {}
        for register in self.register_map:
            selected = Signal(name=f"select_{register.name.replace('.', '_')}")
            m.d.comb += selected.eq(bus.addr == register.address)
            mapped = mapped | selected
            if not register.writable:
                write_to_read_only = write_to_read_only | selected
            register_value = 0
            for field in register.fields:
                port = self._ports[register.name, field.name]
                register_value = register_value | (port.value << field.lsb)
                if field.access in ("rw", "ext"):
                    m.d.comb += [
                        port.w_stb.eq(bus.w_en & selected),
                        port.w_data.eq(bus.w_data[field.lsb:][:field.width]),
                    ]
                if field.access == "rw":
                    with m.If(port.w_stb):
                        m.d.sync += port.value.eq(port.w_data)
            blocks.setdefault(register.address >> _BLOCK_BITS, []).append(
                (register.address, register_value))

        block_bits = min(_BLOCK_BITS, len(bus.addr))
        aligned = bus.addr[:2] == 0
        read_value = 0
        for block, members in blocks.items():
            block_value = Signal(CSR_DATA_WIDTH, name=f"read_block{block}")
            with m.Switch(bus.addr[2:block_bits]):
                for address, register_value in members:
                    with m.Case((address >> 2) % (1 << (block_bits - 2))):
                        m.d.comb += block_value.eq(register_value)
                with m.Default():
                    m.d.comb += block_value.eq(0)
            in_block = aligned & (bus.addr[block_bits:] == block)
            read_value = read_value | Mux(in_block, block_value, 0)

        # Misaligned addresses select no register and so are unmapped.
        error = ~mapped | (bus.w_en & write_to_read_only)
        m.d.sync += [
            bus.ack.eq(bus.r_en | bus.w_en),
            bus.r_data.eq(Mux(bus.r_en, read_value, 0)),
            bus.err.eq((bus.r_en | bus.w_en) & error),
        ]
        return m
