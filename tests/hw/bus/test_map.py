"""The register-map description: packing and unpacking, placement, and every constructor error."""

import random

import pytest

from matndp.hw.bus.map import (Access, Field, Register, RegisterArray, RegisterBlock, RegisterMap,
                               SplitField, Window)


def ctrl(address=0x0):
    return Register("ctrl", address, (
        Field("enable", 0, 1, Access.RW, ""),
        Field("mode", 1, 3, Access.RW, "", init=5),
        Field("level", 8, 8, Access.RO, ""),
        Field("ident", 16, 12, Access.CONST, "", value=0xABC),
        Field("done", 31, 1, Access.W1C, ""),
    ), "")


def word(name, address, width=32, access=Access.RW):
    return Register(name, address, (Field("value", 0, width, access, ""),), "")


# --- fields ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, error, message", [
    (lambda: Field("count", 0, 8, "rw", ""), TypeError, "access must be an Access, not 'rw'"),
    (lambda: Field("count", 0, 8, None, ""), TypeError, "access must be an Access"),
    (lambda: Field("two words", 0, 8, Access.RW, ""), ValueError, "not an identifier"),
    (lambda: Field("count", 0, 0, Access.RW, ""), ValueError, r"bits 0\+0 do not fit"),
    (lambda: Field("count", -1, 4, Access.RW, ""), ValueError, r"bits -1\+4 do not fit"),
    (lambda: Field("count", 30, 3, Access.RW, ""), ValueError, r"bits 30\+3 do not fit a 32-bit"),
    (lambda: Field("count", 0, 33, Access.RW, ""), ValueError, "do not fit a 32-bit"),
    (lambda: Field("count", 0, 4, Access.RW, "", init=16), ValueError, "init 0x10 does not fit 4 bits"),
    (lambda: Field("count", 0, 4, Access.LOAD, "", init=1), ValueError, "only RW fields have an init"),
    (lambda: Field("count", 0, 4, Access.CONST, ""), ValueError, "CONST field needs its value"),
    (lambda: Field("count", 0, 4, Access.RO, "", value=1), ValueError, "only CONST fields have a value"),
    (lambda: Field("count", 0, 4, Access.CONST, "", value=16), ValueError, "constant 0x10 does not fit 4"),
    (lambda: Field("count", 0, 4, Access.CONST, "", value=-1), ValueError, "does not fit 4"),
])
def test_field_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_access_kinds_know_what_a_write_reaches():
    assert {kind for kind in Access if kind.writable} == {Access.RW, Access.LOAD, Access.W1C}
    assert {kind for kind in Access if kind.stored_by_register_file} == {Access.RW, Access.CONST}


# --- registers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, error, message", [
    (lambda: word("r", 0x6), ValueError, "'r' at 0x6 is not aligned to 4 bytes"),
    (lambda: word("r", -4), ValueError, "not aligned"),
    (lambda: Register("r", 0, (), ""), ValueError, "'r' has no fields"),
    (lambda: Register("r", 0, ("value",), ""), TypeError, "'value' is not a Field"),
    (lambda: Register("r", 0, (Field("a", 0, 4, Access.RW, ""), Field("a", 8, 4, Access.RW, "")), ""),
     ValueError, "field name 'a' is used twice"),
    (lambda: Register("r", 0, (Field("a", 0, 4, Access.RW, ""), Field("b", 3, 4, Access.RW, "")), ""),
     ValueError, "field 'b' overlaps another"),
])
def test_register_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_pack_places_fields_at_their_bits():
    register = ctrl()
    assert register.pack() == 0
    assert register.pack(enable=1, mode=0b110) == 0b1101
    assert register.pack(level=0xA5, done=1) == 0x8000_A500
    assert register.pack(enable=True) == 1
    # The reset value holds RW inits and constants.
    assert register.reset_value == 5 << 1 | 0xABC << 16


def test_pack_refuses_unknown_fields_and_values_that_do_not_fit():
    register = ctrl()
    with pytest.raises(KeyError, match="register 'ctrl' has no field 'enabel'.*enable, mode"):
        register.pack(enabel=1)
    with pytest.raises(ValueError, match="register 'ctrl': value 8 does not fit the 3-bit field 'mode'"):
        register.pack(mode=8)
    with pytest.raises(ValueError, match="value -1 does not fit the 1-bit field 'enable'"):
        register.pack(enable=-1)
    with pytest.raises(ValueError, match="value 1.0 does not fit"):
        register.pack(enable=1.0)
    with pytest.raises(ValueError, match="value '1' does not fit"):
        register.pack(enable="1")


def test_unpack_inverts_pack_for_random_values():
    register = ctrl()
    generator = random.Random(5)
    for _ in range(200):
        values = {field.name: generator.randrange(1 << field.width) for field in register.fields}
        word = register.pack(**values)
        assert word == (values["enable"] | values["mode"] << 1 | values["level"] << 8 |
                        values["ident"] << 16 | values["done"] << 31)
        assert register.unpack(word) == values
        assert list(register.unpack(word)) == ["enable", "mode", "level", "ident", "done"]


def test_unpack_refuses_words_with_bits_outside_the_fields():
    register = ctrl()
    with pytest.raises(ValueError, match="'ctrl': word 0x00000010 sets bits 0x00000010 that belong "
                                         "to no field"):
        register.unpack(0x10)
    with pytest.raises(ValueError, match="sets bits 0x70000000"):
        register.unpack(0x7000_0001)
    with pytest.raises(ValueError, match="'ctrl': 4294967296 is not a 32-bit word"):
        register.unpack(1 << 32)
    with pytest.raises(ValueError, match="-1 is not a 32-bit word"):
        register.unpack(-1)


def test_field_lookup_names_the_register():
    register = ctrl()
    assert register.field("level").lsb == 8
    with pytest.raises(KeyError, match="register 'ctrl' has no field 'nope'"):
        register.field("nope")
    assert register.writable
    assert not Register("r", 0, (Field("a", 0, 4, Access.RO, ""),
                                 Field("b", 4, 4, Access.CONST, "", value=3)), "").writable


# --- blocks and arrays ----------------------------------------------------------------------------

def test_a_block_places_its_registers_and_sizes_itself():
    block = RegisterBlock("misc", 0x40, [word("a", 0x0), word("b", 0x14)])
    assert block.size == 0x20 and block.end == 0x60
    assert [(r.name, r.address) for r in block.registers] == [("a", 0x40), ("b", 0x54)]
    assert [(r.name, r.address) for r in block.layout] == [("a", 0x0), ("b", 0x14)]
    assert RegisterBlock("one", 0x0, [word("a", 0x0)]).size == 4
    assert RegisterBlock("one", 0x0, [word("a", 0x0)], size=0x100).size == 0x100


@pytest.mark.parametrize("make, error, message", [
    (lambda: RegisterBlock("two words", 0, [word("a", 0)]), ValueError, "block name 'two words'"),
    (lambda: RegisterBlock("b", 0, []), ValueError, "block 'b' has no registers"),
    (lambda: RegisterBlock("b", 0, ["a"]), TypeError, "'a' is not a Register"),
    (lambda: RegisterBlock("b", 0, [word("a.b", 0)]), ValueError, "register name 'a.b'"),
    (lambda: RegisterBlock("b", 0, [word("a", 0)], size=0x30), ValueError,
     "size 0x30 is not a power of two"),
    (lambda: RegisterBlock("b", 0, [word("a", 0)], size=2), ValueError, "not a power of two of at least 4"),
    (lambda: RegisterBlock("b", 0, [word("a", 0x10)], size=0x10), ValueError,
     "registers reach 0x14, beyond its 0x10-byte window"),
    (lambda: RegisterBlock("b", 0x10, [word("a", 0), word("c", 0x1C)]), ValueError,
     "base 0x10 is not aligned to its size 0x20"),
    (lambda: RegisterBlock("b", 0, [word("a", 0), word("a", 4)]), ValueError,
     "block 'b': register name 'a' is used twice"),
    (lambda: RegisterBlock("b", 0, [word("a", 4), word("c", 4)]), ValueError,
     "registers 'c' and 'a' share 0x4"),
])
def test_block_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_an_array_repeats_its_block_at_the_stride():
    array = RegisterArray("slot", 0x200, 0x40, 3, [word("a", 0x0), word("b", 0x8)])
    assert len(array) == 3
    assert [block.name for block in array.blocks] == ["slot0", "slot1", "slot2"]
    assert [(r.name, r.address) for r in array[2].registers] == [("slot2.a", 0x280), ("slot2.b", 0x288)]
    assert array.register_name(1, "b") == "slot1.b"
    assert [r.address for r in array.layout] == [0x0, 0x8]


@pytest.mark.parametrize("make, error, message", [
    (lambda: RegisterArray("slot", 0, 0x40, 0, [word("a", 0)]), ValueError, "count must be a positive"),
    (lambda: RegisterArray("slot", 0, 0x40, True, [word("a", 0)]), ValueError, "count must be a positive"),
    (lambda: RegisterArray("slot", 0, 0x30, 2, [word("a", 0)]), ValueError, "size 0x30 is not a power"),
    (lambda: RegisterArray("slot", 0x20, 0x40, 2, [word("a", 0)]), ValueError,
     "block 'slot0': base 0x20 is not aligned"),
    (lambda: RegisterArray("slot", 0, 0x4, 2, [word("a", 0), word("b", 4)]), ValueError,
     "registers reach 0x8, beyond its 0x4-byte window"),
    (lambda: RegisterArray("", 0, 0x4, 2, [word("a", 0)]), ValueError, "array name ''"),
])
def test_array_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


# --- split fields ---------------------------------------------------------------------------------

def wide_block(high_width=8):
    return RegisterArray("e", 0x0, 0x10, 2, [word("lo", 0x0), word("hi", 0x4, width=high_width)],
                         split_fields=[SplitField("value", (("lo", "value"), ("hi", "value")))])


def test_a_split_field_divides_a_value_by_the_widths_of_its_parts():
    registers = RegisterMap([wide_block()])
    assert registers.split_width("e1.value") == 40
    parts = registers.split_field("e1.value")
    assert [(register.name, field.name) for register, field in parts] == [("e1.lo", "value"),
                                                                          ("e1.hi", "value")]
    assert [(register.address, word) for register, word in registers.split("e1.value", 0xAB_1234_5678)] \
        == [(0x10, 0x1234_5678), (0x14, 0xAB)]
    assert [word for _, word in registers.split("e0.value", (1 << 40) - 1)] == [0xFFFF_FFFF, 0xFF]


def test_split_refuses_values_that_do_not_fit():
    registers = RegisterMap([wide_block()])
    with pytest.raises(ValueError, match="split field 'e0.value': value 1099511627776 does not fit its 40 bits"):
        registers.split("e0.value", 1 << 40)
    with pytest.raises(ValueError, match="value -1 does not fit"):
        registers.split("e0.value", -1)
    with pytest.raises(KeyError, match="no split field named 'e2.value'"):
        registers.split("e2.value", 0)


def test_a_split_field_of_one_part_is_its_register():
    """A layout whose number of words follows a parameter reads and writes one word the same way."""
    registers = RegisterMap([RegisterArray("e", 0x0, 0x10, 2, [word("lo", 0x0, width=24)],
                                           split_fields=[SplitField("value", (("lo", "value"),))])])
    assert registers.split_width("e1.value") == 24
    assert [(register.address, word) for register, word in registers.split("e1.value", 0xAB_CDEF)] \
        == [(0x10, 0xAB_CDEF)]
    with pytest.raises(ValueError, match="value 16777216 does not fit its 24 bits"):
        registers.split("e0.value", 1 << 24)


@pytest.mark.parametrize("make, error, message", [
    (lambda: SplitField("v", ()), ValueError, "split field 'v' has no parts"),
    (lambda: RegisterBlock("b", 0, [word("lo", 0)], split_fields=[
        SplitField("v", (("lo", "value"), ("hi", "value")))]), ValueError,
     "split field 'v': block 'b' has no register 'hi'"),
    (lambda: RegisterBlock("b", 0, [word("lo", 0), word("hi", 4)], split_fields=[
        SplitField("v", (("lo", "value"), ("hi", "bits")))]), KeyError,
     "register 'hi' has no field 'bits'"),
])
def test_split_field_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


# --- maps -----------------------------------------------------------------------------------------

def small_map():
    return RegisterMap([
        RegisterBlock("global", 0x0, [ctrl(), word("count", 0x4, access=Access.LOAD)]),
        RegisterArray("slot", 0x40, 0x20, 2, [word("a", 0x0), word("b", 0x4)]),
    ])


def test_a_map_finds_registers_by_name_and_address():
    registers = small_map()
    assert [r.name for r in registers] == ["ctrl", "count", "slot0.a", "slot0.b", "slot1.a", "slot1.b"]
    assert registers["slot1.b"].address == 0x64
    assert registers.at(0x60).name == "slot1.a"
    assert registers.at(0x68) is None and registers.at(0x2) is None
    assert [block.name for block in registers.blocks] == ["global", "slot0", "slot1"]
    assert registers.block("slot1").base == 0x60
    assert registers.array("slot").stride == 0x20
    # Bits to reach the last block's whole window, [0x60, 0x80).
    assert registers.addr_width == 7
    with pytest.raises(KeyError, match="no register named 'slot2.a'"):
        registers["slot2.a"]
    with pytest.raises(KeyError, match="no block named 'slot2'"):
        registers.block("slot2")
    with pytest.raises(KeyError, match="no register array named 'global'"):
        registers.array("global")


@pytest.mark.parametrize("make, error, message", [
    (lambda: RegisterMap([]), ValueError, "needs at least one block"),
    (lambda: RegisterMap([word("a", 0)]), TypeError, "holds RegisterBlocks and RegisterArrays"),
    (lambda: RegisterMap([RegisterBlock("x", 0x0, [word("a", 0), word("b", 0x1C)]),
                          RegisterBlock("y", 0x10, [word("c", 0)])]), ValueError,
     r"blocks 'x' \[0x0, 0x20\) and 'y' \[0x10, 0x14\) overlap"),
    (lambda: RegisterMap([RegisterBlock("x", 0x0, [word("a", 0)]),
                          RegisterArray("s", 0x0, 0x40, 2, [word("a", 0)])]), ValueError, "overlap"),
    (lambda: RegisterMap([RegisterBlock("x", 0x0, [word("a", 0)]),
                          RegisterBlock("y", 0x4, [word("a", 0)])]), ValueError,
     "register map: register name 'a' is used twice"),
])
def test_map_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


# --- windows --------------------------------------------------------------------------------------

def test_a_window_knows_its_span_and_address_width():
    window = Window("memory", 0x1000, 0x400, "")
    assert (window.end, window.addr_width, window.readable, window.writable) == (0x1400, 10, True, True)
    assert 0x1000 in window and 0x13FF in window and 0x1400 not in window and 0xFFF not in window
    assert Window("tiny", 0x8, 4, "").addr_width == 2


@pytest.mark.parametrize("make, error, message", [
    (lambda: Window("two words", 0x0, 0x100, ""), ValueError, "window name 'two words'"),
    (lambda: Window("w", 0x0, 0x180, ""), ValueError, "window 'w': size 384 is not a power of two"),
    (lambda: Window("w", 0x0, 2, ""), ValueError, "size 2 is not a power of two of at least 4 bytes"),
    (lambda: Window("w", 0x0, 0, ""), ValueError, "size 0 is not a power of two"),
    (lambda: Window("w", 0x0, 64.0, ""), ValueError, "size 64.0 is not a power of two"),
    (lambda: Window("w", 0x0, True, ""), ValueError, "size True is not a power of two"),
    (lambda: Window("w", 0x80, 0x100, ""), ValueError, "window 'w': base 128 is not a multiple of its size 0x100"),
    (lambda: Window("w", -0x100, 0x100, ""), ValueError, "base -256 is not a multiple"),
    (lambda: Window("w", "0", 0x100, ""), ValueError, "base '0' is not a multiple"),
    (lambda: Window("w", 0, 0x100, "", readable=1), TypeError, "window 'w': readable must be a bool, not 1"),
    (lambda: Window("w", 0, 0x100, "", writable=None), TypeError, "writable must be a bool, not None"),
    (lambda: Window("w", 0, 0x100, "", readable=False, writable=False), ValueError,
     "window 'w' is neither readable nor writable"),
])
def test_window_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def windowed_map():
    return RegisterMap([
        RegisterBlock("global", 0x0, [ctrl(), word("count", 0x4, access=Access.LOAD)]),
        Window("low", 0x200, 0x100, "between the blocks", writable=False),
        RegisterArray("slot", 0x400, 0x20, 2, [word("a", 0x0), word("b", 0x4)]),
        Window("high", 0x8000, 0x4000, "far above"),
    ])


def test_a_map_places_windows_beside_its_blocks():
    registers = windowed_map()
    assert [window.name for window in registers.windows] == ["low", "high"]
    assert registers.window("high").base == 0x8000
    assert registers.window_at(0x2FC).name == "low" and registers.window_at(0xBFFC).name == "high"
    assert registers.window_at(0x300) is None and registers.window_at(0x4) is None
    assert registers.at(0x200) is None                  # windows hold no registers
    # The register file's bus reaches the last block, [0x420, 0x440); the whole bus the last window.
    assert registers.register_addr_width == 11
    assert registers.addr_width == 16
    assert small_map().addr_width == small_map().register_addr_width == 7
    with pytest.raises(KeyError, match="no window named 'middle'"):
        registers.window("middle")


@pytest.mark.parametrize("make, error, message", [
    (lambda: RegisterMap([Window("w", 0, 0x100, "")]), ValueError, "needs at least one block"),
    (lambda: RegisterMap([RegisterBlock("global", 0x0, [word("a", 0), word("b", 0x1C)]),
                          Window("w", 0x0, 0x10, "")]), ValueError,
     r"window 'w' \[0x0, 0x10\) overlaps block 'global' \[0x0, 0x20\) \(registers 'a'\)"),
    (lambda: RegisterMap([RegisterBlock("global", 0x0, [word("a", 0), word("b", 0x1C)]),
                          Window("w", 0x10, 0x10, "")]), ValueError,
     r"window 'w' \[0x10, 0x20\) overlaps block 'global' \[0x0, 0x20\) \(registers 'b'\)$"),
    (lambda: RegisterMap([RegisterBlock("global", 0x0, [word("a", 0), word("b", 0x1C)]),
                          Window("w", 0x8, 0x8, "")]), ValueError,
     r"window 'w' \[0x8, 0x10\) overlaps block 'global' \[0x0, 0x20\)$"),
    (lambda: RegisterMap([RegisterBlock("global", 0x0, [word("a", 0)]),
                          RegisterArray("slot", 0x100, 0x40, 4, [word("a", 0)]),
                          Window("w", 0x100, 0x100, "")]), ValueError,
     r"window 'w' \[0x100, 0x200\) overlaps block 'slot0' \[0x100, 0x140\) \(registers 'slot0.a'\)"),
    (lambda: RegisterMap([RegisterBlock("global", 0x0, [word("a", 0)]),
                          Window("big", 0x1000, 0x1000, ""), Window("small", 0x1800, 0x100, "")]),
     ValueError, r"windows 'big' \[0x1000, 0x2000\) and 'small' \[0x1800, 0x1900\) overlap"),
    (lambda: RegisterMap([RegisterBlock("global", 0x0, [word("a", 0)]),
                          Window("w", 0x1000, 0x100, ""), Window("w", 0x2000, 0x100, "")]),
     ValueError, "register map: window name 'w' is used twice"),
])
def test_map_constructor_errors_with_windows(make, error, message):
    with pytest.raises(error, match=message):
        make()
