"""A register file generated from a :class:`~.map.RegisterMap`, behind a :mod:`.signature` bus."""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, connect
from amaranth.utils import exact_log2

from .action import FieldPort
from .map import Access
from .signature import CSRBusSignature, CSR_DATA_WIDTH


__all__ = ["RegisterFile", "StoredField"]


_ADDRESS_OFFSET_BITS = exact_log2(CSR_DATA_WIDTH // 8)


def _balanced_or(values):
    """The OR of ``values`` as a tree: a chain as deep as the map is long would be as deep
    in the simulator's expression evaluation too."""
    if len(values) == 1:
        return values[0]
    middle = len(values) // 2
    return _balanced_or(values[:middle]) | _balanced_or(values[middle:])


def _identifier(register_name, field_name):
    return f"{register_name.replace('.', '_')}__{field_name}"


class StoredField:
    """An ``RW`` field's storage. ``data`` is the stored value; ``next`` is the value it holds
    from the next cycle on (the written value in a write's cycle), for logic that must be in
    step with it; ``written`` is high in the cycle of a bus write to the field, for logic
    that follows ``data`` a cycle late and must know when it does."""

    def __init__(self, name, field):
        self.data = Signal(field.width, init=field.init, name=name)
        self.next = Signal(field.width, name=f"{name}__next")
        self.written = Signal(name=f"{name}__written")


class RegisterFile(wiring.Component):
    """The registers of ``register_map``, on a bus that reaches its blocks
    (:attr:`~.map.RegisterMap.register_addr_width` bits; the map's windows are the
    :class:`~.decoder.BusDecoder`'s). Every access is answered exactly three cycles after its
    strobe. A write reaches its fields in the cycle of the acknowledge: they hold the new value
    from the next cycle on, the first in which another access may come.

    ``RW`` fields are stored here (:meth:`storage`) and ``CONST`` fields read their value
    from the map. Every other field reads what the behaviour that hardware attaches to it
    (:meth:`attach`) drives; elaboration refuses a field left without one.
    """

    def __init__(self, register_map):
        self.register_map = register_map
        self._stored = {}
        self._ports = {}
        self._actions = {}
        for register in register_map:
            for field in register.fields:
                key = register.name, field.name
                if field.access is Access.RW:
                    self._stored[key] = StoredField(_identifier(*key), field)
                elif field.access is not Access.CONST:
                    self._ports[key] = FieldPort.Signature(field.width, field.access).create(
                        path=(_identifier(*key),))
        super().__init__({"bus": In(CSRBusSignature(register_map.register_addr_width))})

    def _field(self, register_name, field_name):
        return self.register_map[register_name].field(field_name)

    def storage(self, register_name, field_name):
        """The :class:`StoredField` of the ``RW`` field ``register_name.field_name``."""
        field = self._field(register_name, field_name)
        if field.access is not Access.RW:
            raise TypeError(f"field {register_name}.{field_name} is {field.access.name}, "
                            f"not stored by the register file")
        return self._stored[register_name, field_name]

    def split_storage(self, name):
        """The storages of split field ``name`` (of ``RW`` fields), least significant first."""
        return [self.storage(register.name, field.name)
                for register, field in self.register_map.split_field(name)]

    def attach(self, register_name, field_name, action):
        """Make ``action`` (a :class:`~.action.FieldAction` of the field's width and access
        kind) the behaviour of field ``register_name.field_name``; returns ``action``, whose
        hardware-facing ports the caller drives and reads."""
        field = self._field(register_name, field_name)
        key = register_name, field_name
        if field.access.stored_by_register_file:
            raise TypeError(f"field {register_name}.{field_name} is {field.access.name}: the "
                            f"register file provides its value")
        if key in self._actions:
            raise ValueError(f"field {register_name}.{field_name} already has a behaviour")
        if (action.width, action.access) != (field.width, field.access):
            raise TypeError(f"field {register_name}.{field_name} is {field.width}-bit "
                            f"{field.access.name}; {type(action).__name__} is "
                            f"{action.width}-bit {action.access.name}")
        self._actions[key] = action
        return action

    def elaborate(self, platform):
        missing = [f"{register}.{field}" for register, field in self._ports
                   if (register, field) not in self._actions]
        if missing:
            raise ValueError(f"fields without a behaviour attached: {', '.join(missing)}")
        m = Module()
        bus = self.bus
        for key, action in self._actions.items():
            m.submodules[_identifier(*key)] = action
            connect(m, self._ports[key], action.port)

        def field_logic(register, field, write, data):
            """The field's read value; its write strobe and data where a write reaches it."""
            key = register.name, field.name
            if field.access is Access.CONST:
                return field.value
            if field.access is Access.RW:
                stored = self._stored[key]
                m.d.comb += stored.written.eq(write)
                with m.If(stored.written):
                    m.d.comb += stored.next.eq(data[field.lsb:][:field.width])
                with m.Else():
                    m.d.comb += stored.next.eq(stored.data)
                m.d.sync += stored.data.eq(stored.next)
                return stored.data
            port = self._ports[key]
            if field.access.writable:
                m.d.comb += [
                    port.w_stb.eq(write),
                    port.w_data.eq(data[field.lsb:][:field.width]),
                ]
            return port.r_data

        # Each block registers the access as it sees it, beside its registers: whether it
        # reads or writes there, the offset and the written data. In the
        # strobe's cycle the address only has to reach the blocks' comparators, not every
        # register's decoder, field and multiplexer spread over the chip. In the next cycle
        # each block decodes its offset into a register per register: the write strobe and
        # the read select, each beside the fields it reaches (which sit wherever their
        # hardware is). The third cycle forms the block's answer as the OR of the selected
        # registers' values, into a register (zero unless the read is in that block), and
        # ``r_data`` is the OR of those registers. ``err`` is formed in step: each block
        # registers whether it refuses the access, beside a register for an address in no
        # block (misaligned addresses are in none). No cycle then carries more than one hop
        # between the bus, a block and its fields.
        access = bus.r_en | bus.w_en
        aligned = bus.addr[:_ADDRESS_OFFSET_BITS] == 0
        block_reads = []
        refusals = []
        in_blocks = []
        for block in self.register_map.blocks:
            block_bits = exact_log2(block.size)
            in_block = Signal(name=f"in_{block.name}")
            m.d.comb += in_block.eq(aligned & (bus.addr[block_bits:] == block.base >> block_bits))
            in_blocks.append(in_block)
            reading = Signal(name=f"reading_{block.name}")
            writing = Signal(name=f"writing_{block.name}")
            # The access's offset and data matter only while ``reading`` or ``writing`` says
            # so: no reset. They are taken every cycle (the initiator holds both until the
            # acknowledge), so no decoding of the address is in front of their enables; each
            # block has its own copy (marked ``keep``), beside its registers.
            offset = Signal(block_bits - _ADDRESS_OFFSET_BITS, name=f"offset_{block.name}",
                            reset_less=True, attrs={"keep": 1})
            w_data = Signal(CSR_DATA_WIDTH, name=f"w_data_{block.name}", reset_less=True,
                            attrs={"keep": 1})
            m.d.sync += [reading.eq(bus.r_en & in_block), writing.eq(bus.w_en & in_block),
                         offset.eq(bus.addr[_ADDRESS_OFFSET_BITS:block_bits]),
                         w_data.eq(bus.w_data)]
            # A cycle later, so that a write reaches its fields in its acknowledge's cycle.
            writing_late = Signal(name=f"writing_late_{block.name}")
            m.d.sync += writing_late.eq(writing)

            selected_values = []
            present = Signal(name=f"present_{block.name}")      # a register at the offset
            read_only = Signal(name=f"read_only_{block.name}")
            for register in block.registers:
                register_offset = (register.address - block.base) >> _ADDRESS_OFFSET_BITS
                identifier = register.name.replace('.', '_')
                write = Signal(name=f"write_{identifier}")
                select = Signal(name=f"select_{identifier}")
                m.d.sync += [write.eq(writing_late & (offset == register_offset)),
                             select.eq(reading & (offset == register_offset))]
                value = 0
                for field in register.fields:
                    value |= field_logic(register, field, write, w_data) << field.lsb
                selected_values.append(Mux(select, value, 0))
            with m.Switch(offset):
                for register in block.registers:
                    with m.Case((register.address - block.base) >> _ADDRESS_OFFSET_BITS):
                        m.d.comb += [present.eq(1), read_only.eq(not register.writable)]
            block_read = Signal(CSR_DATA_WIDTH, name=f"answer_{block.name}")
            m.d.sync += block_read.eq(_balanced_or(selected_values))
            refused = Signal(name=f"refused_{block.name}")
            refused_late = Signal(name=f"refused_late_{block.name}")
            m.d.sync += [refused.eq((reading | writing) & (~present | (writing & read_only))),
                         refused_late.eq(refused)]
            block_reads.append(block_read)
            refusals.append(refused_late)

        accessed = Signal()
        accessed_late = Signal()
        unmapped_access = Signal()
        unmapped = Signal()
        unmapped_late = Signal()
        m.d.sync += [
            accessed.eq(access),
            accessed_late.eq(accessed),
            unmapped_access.eq(access & ~Cat(in_blocks).any()),
            unmapped.eq(unmapped_access),
            unmapped_late.eq(unmapped),
            bus.ack.eq(accessed_late),
        ]
        m.d.comb += [
            bus.r_data.eq(_balanced_or(block_reads)),
            bus.err.eq(_balanced_or([unmapped_late, *refusals])),
        ]
        return m
