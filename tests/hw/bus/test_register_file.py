# amaranth: UnusedElaboratable=no
"""The generated register file in Amaranth's simulator: every access kind, bus errors, back-to-back
accesses with random idle cycles against a reference written here, and the two-level read
multiplexer across blocks."""

import random

import pytest
from amaranth.hdl import Fragment
from amaranth.sim import Simulator

from matndp.hw.bus.action import Counter, Status, StickyFlag
from matndp.hw.bus.map import (Access, Field, Register, RegisterArray, RegisterBlock, RegisterMap,
                               SplitField)
from matndp.hw.bus.register_file import RegisterFile
from matndp.hw.config import NDPConfig, TriggerConfig
from matndp.hw.csr_map import register_map

from .models import REGISTER_LATENCY, attach_behaviours


STATUS_LEVEL = 0x5A


def example_map():
    return RegisterMap([
        RegisterBlock("global", 0x00, [
            Register("ident", 0x00, (Field("magic", 0, 32, Access.CONST, "", value=0xC0DE_F00D),), ""),
            Register("control", 0x04, (
                Field("enable", 0, 1, Access.RW, ""),
                Field("mode", 4, 3, Access.RW, "", init=5),
                Field("revision", 24, 8, Access.CONST, "", value=0x17),
            ), ""),
            Register("status", 0x08, (
                Field("level", 0, 8, Access.RO, ""),
                Field("errors", 8, 2, Access.W1C, ""),
            ), ""),
            Register("count", 0x0C, (Field("count", 0, 16, Access.LOAD, ""),), ""),
            Register("readonly", 0x14, (Field("level", 4, 8, Access.RO, ""),), ""),
        ]),
        RegisterArray("slot", 0x40, 0x10, 3, [
            Register("a", 0x0, (Field("value", 0, 32, Access.RW, ""),), ""),
            Register("b", 0x8, (Field("value", 0, 12, Access.RW, ""),), ""),
        ]),
    ])


class Reference:
    """What each register reads, from the description of the access kinds (docs/csr.md),
    with hardware inputs held still: no increments, no flags being set."""

    def __init__(self, register_map, status):
        self.register_map = register_map
        self.status = status
        self.fields = {}
        for register in register_map:
            for field in register.fields:
                self.fields[register.name, field.name] = {
                    Access.RW: field.init, Access.CONST: field.value,
                    Access.RO: status.get((register.name, field.name), 0),
                }.get(field.access, 0)

    def access(self, address, write, data):
        """(read data, error) of one access."""
        register = self.register_map.at(address)
        if register is None:
            return 0, True
        if write:
            if not register.writable:
                return 0, True
            for field in register.fields:
                bits = (data >> field.lsb) & ((1 << field.width) - 1)
                key = register.name, field.name
                if field.access in (Access.RW, Access.LOAD):
                    self.fields[key] = bits
                elif field.access is Access.W1C:
                    self.fields[key] &= ~bits
            return 0, False
        word = 0
        for field in register.fields:
            word |= self.fields[register.name, field.name] << field.lsb
        return word, False


async def bus_cycle(ctx, bus, access):
    """Present ``access`` ((address, write, data) or None for an idle cycle) for one cycle,
    then wait out the register file's answer, which must come exactly
    ``REGISTER_LATENCY`` cycles after the strobe and not before; return the response,
    (ack, read data, error)."""
    if access is None:
        ctx.set(bus.r_en, 0)
        ctx.set(bus.w_en, 0)
        await ctx.tick()
        return ctx.get(bus.ack), ctx.get(bus.r_data), ctx.get(bus.err)
    address, write, data = access
    ctx.set(bus.addr, address)
    ctx.set(bus.w_data, data)
    ctx.set(bus.w_en, write)
    ctx.set(bus.r_en, not write)
    await ctx.tick()
    ctx.set(bus.r_en, 0)
    ctx.set(bus.w_en, 0)
    for _ in range(REGISTER_LATENCY - 1):
        assert not ctx.get(bus.ack), f"{address:#x} answered before {REGISTER_LATENCY} cycles"
        await ctx.tick()
    return ctx.get(bus.ack), ctx.get(bus.r_data), ctx.get(bus.err)


def simulate(dut, bench):
    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()


def run_accesses(register_map, accesses, *, status=None, idle=0.0, seed=0):
    """Run ``accesses`` one per cycle (with idle cycles at probability ``idle``); return the
    responses and the reference's."""
    status = status or {}
    dut = RegisterFile(register_map)
    actions = attach_behaviours(dut)
    reference = Reference(register_map, status)
    generator = random.Random(seed)
    responses, expected = [], []

    async def bench(ctx):
        for key, value in status.items():
            ctx.set(actions[key].status, value)
        for access in accesses:
            while generator.random() < idle:
                assert await bus_cycle(ctx, dut.bus, None) == (0, 0, 0)
            ack, data, error = await bus_cycle(ctx, dut.bus, access)
            assert ack == 1
            responses.append((data, bool(error)))
            expected.append(reference.access(*access))
        assert await bus_cycle(ctx, dut.bus, None) == (0, 0, 0)
    simulate(dut, bench)
    return responses, expected


def test_every_access_kind_reads_and_writes_as_documented():
    registers = example_map()
    status = {("status", "level"): STATUS_LEVEL, ("readonly", "level"): 0xC3}
    accesses = [
        (0x00, 0, 0), (0x04, 0, 0), (0x08, 0, 0), (0x0C, 0, 0), (0x14, 0, 0),
        # RW fields take their bits; the constant beside them stays.
        (0x04, 1, 0xFFFF_FFFF), (0x04, 0, 0), (0x04, 1, 0x20), (0x04, 0, 0),
        # A LOAD field takes the written value.
        (0x0C, 1, 0x1_2345), (0x0C, 0, 0),
        # W1C bits clear only when written as 1; the RO field ignores the write.
        (0x08, 1, 0x3FF), (0x08, 0, 0),
    ]
    responses, expected = run_accesses(registers, accesses, status=status)
    assert responses == expected
    # And independently of the reference, the words that matter:
    assert [data for data, _ in responses[:5]] == [0xC0DE_F00D, 0x1700_0050, STATUS_LEVEL, 0, 0xC3 << 4]
    assert responses[6] == (0x1700_0071, False) and responses[8] == (0x1700_0020, False)
    assert responses[10] == (0x2345, False)
    assert responses[12] == (STATUS_LEVEL, False)


def test_errors_for_unmapped_misaligned_and_read_only_accesses():
    registers = example_map()
    unmapped = [0x10, 0x18, 0x3C, 0x44, 0x4C, 0x70, 0x7C]
    misaligned = [0x01, 0x06, 0x43, 0x5A]
    accesses = []
    for address in unmapped + misaligned:
        accesses += [(address, 0, 0), (address, 1, 0xFFFF_FFFF)]
    # A write to a register of only read-only and constant fields is refused and changes nothing.
    accesses += [(0x00, 1, 0), (0x00, 0, 0), (0x14, 1, 0xFFFF_FFFF), (0x14, 0, 0)]
    responses, expected = run_accesses(registers, accesses, status={("readonly", "level"): 0x81})
    assert responses == expected
    assert all(error for _, error in responses[:2 * (len(unmapped) + len(misaligned))])
    assert all(data == 0 for data, _ in responses[:2 * (len(unmapped) + len(misaligned))])
    assert responses[-4:] == [(0, True), (0xC0DE_F00D, False), (0, True), (0x81 << 4, False)]


@pytest.mark.parametrize("seed", [1, 2])
def test_random_back_to_back_accesses_with_idle_cycles_match_the_reference(seed):
    registers = example_map()
    generator = random.Random(seed)
    addresses = [register.address for register in registers] + [0x10, 0x48, 0x4D, 0x80 - 4]
    accesses = [(generator.choice(addresses), generator.random() < 0.5, generator.getrandbits(32))
                for _ in range(600)]
    responses, expected = run_accesses(registers, accesses, idle=0.3, seed=seed,
                                       status={("status", "level"): STATUS_LEVEL})
    assert responses == expected
    responses, expected = run_accesses(registers, accesses, seed=seed)      # no idle cycles
    assert responses == expected


def test_the_read_multiplexer_picks_the_register_across_blocks():
    """Registers that share their low address bits in different blocks (the slice's filter
    entries) each read their own value."""
    registers = register_map(NDPConfig(trigger=TriggerConfig(filter_entries=4)))
    generator = random.Random(9)
    written = {}
    used = set()
    for register in registers:
        if register.writable and all(field.access in (Access.RW, Access.LOAD)
                                     for field in register.fields):
            # Distinct from every other register's value, so a wrong pick cannot read right.
            mask = sum(field.mask for field in register.fields)
            value = generator.getrandbits(32)
            while value & mask in used:
                value = generator.getrandbits(32)
            used.add(value & mask)
            written[register.address] = value
    accesses = [(address, 1, value) for address, value in written.items()]
    accesses += [(register.address, 0, 0) for register in registers]
    responses, expected = run_accesses(registers, accesses)
    assert responses == expected
    reads = dict(zip((register.address for register in registers),
                     (data for data, _ in responses[len(written):])))
    for address, value in written.items():
        register = registers.at(address)
        mask = sum(field.mask for field in register.fields)
        assert reads[address] == value & mask, f"{register.name} read {reads[address]:#x}"


def test_hardware_owned_fields_through_the_bus():
    registers = example_map()
    dut = RegisterFile(registers)
    actions = attach_behaviours(dut)
    counter = actions["count", "count"]
    errors = actions["status", "errors"]

    async def bench(ctx):
        ctx.set(counter.increment, 1)
        for _ in range(5):
            await bus_cycle(ctx, dut.bus, None)
        ctx.set(counter.increment, 0)
        await bus_cycle(ctx, dut.bus, None)
        assert await bus_cycle(ctx, dut.bus, (0x0C, 0, 0)) == (1, 5, 0)
        ctx.set(errors.set, 0b10)
        await bus_cycle(ctx, dut.bus, None)
        ctx.set(errors.set, 0)
        assert await bus_cycle(ctx, dut.bus, (0x08, 0, 0)) == (1, 0b10 << 8, 0)
        await bus_cycle(ctx, dut.bus, (0x08, 1, 0b10 << 8))
        assert await bus_cycle(ctx, dut.bus, (0x08, 0, 0)) == (1, 0, 0)
    simulate(dut, bench)


def test_storage_gives_the_next_value_in_a_writes_cycle():
    """A write reaches its field's storage three cycles after its strobe, in the
    acknowledge's cycle (``written``), when ``next`` shows the value written."""
    registers = example_map()
    dut = RegisterFile(registers)
    attach_behaviours(dut)
    mode = dut.storage("control", "mode")

    async def bench(ctx):
        assert (ctx.get(mode.data), ctx.get(mode.next)) == (5, 5)
        ctx.set(dut.bus.addr, 0x04)
        ctx.set(dut.bus.w_data, 0x30)
        ctx.set(dut.bus.w_en, 1)
        # The strobe's cycle carries the write to its block, the next to the register's
        # decode, the one after to the register's strobe.
        assert (ctx.get(mode.data), ctx.get(mode.next), ctx.get(mode.written)) == (5, 5, 0)
        await ctx.tick()
        ctx.set(dut.bus.w_en, 0)
        for _ in range(REGISTER_LATENCY - 1):
            assert (ctx.get(mode.data), ctx.get(mode.next), ctx.get(mode.written)) == (5, 5, 0)
            assert ctx.get(dut.bus.ack) == 0
            await ctx.tick()
        assert (ctx.get(mode.data), ctx.get(mode.next), ctx.get(mode.written)) == (5, 3, 1)
        assert ctx.get(dut.bus.ack) == 1
        await ctx.tick()
        assert (ctx.get(mode.data), ctx.get(mode.next), ctx.get(mode.written)) == (3, 3, 0)
    simulate(dut, bench)


# --- constructor and elaboration errors -------------------------------------------------------------

def test_attach_and_storage_refuse_the_wrong_field():
    dut = RegisterFile(example_map())
    with pytest.raises(TypeError, match="field control.enable is RW: the register file provides"):
        dut.attach("control", "enable", Status(1))
    with pytest.raises(TypeError, match="field ident.magic is CONST: the register file provides"):
        dut.attach("ident", "magic", Status(32))
    with pytest.raises(TypeError, match="field count.count is 16-bit LOAD; Counter is 8-bit LOAD"):
        dut.attach("count", "count", Counter(8))
    with pytest.raises(TypeError, match="field status.errors is 2-bit W1C; Status is 2-bit RO"):
        dut.attach("status", "errors", Status(2))
    dut.attach("count", "count", Counter(16))
    with pytest.raises(ValueError, match="field count.count already has a behaviour"):
        dut.attach("count", "count", Counter(16))
    with pytest.raises(TypeError, match="field count.count is LOAD, not stored by the register file"):
        dut.storage("count", "count")
    with pytest.raises(KeyError, match="no register named 'counter'"):
        dut.storage("counter", "count")
    with pytest.raises(KeyError, match="register 'control' has no field 'enabled'"):
        dut.storage("control", "enabled")


def test_elaboration_refuses_fields_left_without_behaviour():
    dut = RegisterFile(example_map())
    dut.attach("count", "count", Counter(16))
    with pytest.raises(ValueError, match="fields without a behaviour attached: status.level, "
                                         "status.errors, readonly.level"):
        Fragment.get(dut, None)


def test_split_storage_lists_the_parts_least_significant_first():
    registers = RegisterMap([RegisterBlock("b", 0x0, [
        Register("lo", 0x0, (Field("v", 0, 32, Access.RW, ""),), ""),
        Register("hi", 0x4, (Field("v", 0, 8, Access.RW, ""),), ""),
    ], split_fields=[SplitField("v", (("lo", "v"), ("hi", "v")))])])
    dut = RegisterFile(registers)
    assert dut.split_storage("v") == [dut.storage("lo", "v"), dut.storage("hi", "v")]
    with pytest.raises(KeyError, match="no split field named 'w'"):
        dut.split_storage("w")
