"""The host runtime on the Python register model: programming, window access and refusals."""

import re

import numpy
import pytest

from matndp.hw.bus.map import RegisterMap, Window
from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.csr_map import register_map, MAGIC
from matndp.host.csr_bus import CSRAccessError, RegisterModelBus
from matndp.host.runtime import DeviceError, FilterRange, Gathering, NDPRuntime, RangeError, WindowError


def make_runtime(config=NDPConfig()):
    bus = RegisterModelBus(register_map(config))
    return NDPRuntime(bus, config), bus


def test_program_writes_the_documented_registers():
    runtime, bus = make_runtime()
    runtime.program(3, FilterRange(0x12_3456_7800, 0x2_0000_0040, on_write=True, on_read=True,
                                   kernel_pc=0x42, arg_index=5, expected=17))
    registers = runtime.registers
    base = registers["entry3.ctrl"].address
    names = ("ctrl", "base_lo", "base_hi", "size_lo", "size_hi", "kernel_pc", "arg_index", "expected",
             "hits")
    assert [registers[f"entry3.{name}"].address - base for name in names] == list(range(0, 0x24, 4))
    assert [bus.values[base + offset] for offset in range(0, 0x24, 4)] == \
        [registers["entry3.ctrl"].pack(enable=1, on_write=1, on_read=1), 0x3456_7800, 0x12, 0x0000_0040,
         0x2, 0x42, 5, 17, 0]
    # The entry is disabled before its range changes and enabled last.
    writes = [entry for entry in bus.log if entry[0] == "write"]
    assert writes[0][1:] == (base, 0) and writes[-1][1] == base


@pytest.mark.parametrize("register", ["init_threads", "final_threads"])
def test_program_writes_the_helpers_thread_counts(register):
    runtime, bus = make_runtime()
    address = runtime.registers[f"entry2.{register}"].address
    runtime.program(2, FilterRange(0x1000, 0x100, init_pc=5, final_pc=7, **{register: 32}))
    assert bus.values[address] == 32
    runtime.program(2, FilterRange(0x1000, 0x100, init_pc=5, final_pc=7))
    assert bus.values[address] == 1


@pytest.mark.parametrize("register", ["init_threads", "final_threads"])
def test_a_slice_without_an_engine_refuses_helper_threads(register):
    runtime, bus = make_runtime(NDPConfig(engine=None))
    with pytest.raises(RangeError, match="no engine to run an initializer or finalizer"):
        runtime.program(0, FilterRange(0x1000, 0x100, **{register: 2}))
    assert bus.log == []


def test_the_largest_values_each_field_holds_are_accepted():
    runtime, bus = make_runtime()
    runtime.program(0, FilterRange((1 << 40) - 0x100, 0x100, kernel_pc=1023, arg_index=31,
                                   expected=(1 << 32) - 1, init_pc=1023, final_pc=1023,
                                   init_threads=(1 << 32) - 1, final_threads=0))
    assert bus.values[runtime.registers["entry0.arg_index"].address] == 31
    assert bus.values[runtime.registers["entry0.expected"].address] == (1 << 32) - 1


@pytest.mark.parametrize("entry, message", [
    (FilterRange(0x1000, 0x100, ordered=True), "entry 0: this slice has no engine to run an "
                                               "initializer or finalizer or to order atomics"),
    (FilterRange(0x1000, 0x100, init_pc=0), "entry 0: this slice has no engine to run an "
                                            "initializer or finalizer or to order atomics"),
    (FilterRange(0x1000, 0x100, final_pc=0), "entry 0: this slice has no engine to run an "
                                             "initializer or finalizer or to order atomics"),
    (FilterRange(0x1000, 0x100, kernel_pc=1 << 16), "entry 0: kernel_pc 65536 does not fit 16 bits"),
    (FilterRange(0x1000, 0x100, arg_index=256), "entry 0: arg_index 256 does not fit 8 bits"),
])
def test_a_slice_without_an_engine_refuses_what_needs_one_and_has_its_own_widths(entry, message):
    runtime, bus = make_runtime(NDPConfig(engine=None))
    with pytest.raises(RangeError) as caught:
        runtime.program(0, entry)
    assert str(caught.value) == message and bus.log == []
    runtime.program(0, FilterRange(0x1000, 0x100, kernel_pc=(1 << 16) - 1, arg_index=255))


def test_probe_checks_identity_and_configuration():
    runtime, bus = make_runtime()
    assert runtime.probe()["filter_entries"] == 16
    other, _ = make_runtime(NDPConfig(trigger=TriggerConfig(filter_entries=8)))
    other.bus = bus
    with pytest.raises(DeviceError, match="filter_entries=16"):
        other.probe()
    bus.values[0] = MAGIC ^ 1
    with pytest.raises(DeviceError, match="no NDP slice"):
        runtime.probe()


@pytest.mark.parametrize("field, value", [("sector_bytes", 64), ("addr_width", 48), ("id_width", 4)])
def test_probe_compares_every_configuration_field(field, value):
    runtime, bus = make_runtime()
    config = runtime.registers["config"]
    found = config.unpack(bus.values[config.address])
    bus.values[config.address] = config.pack(**{**found, field: value})
    with pytest.raises(DeviceError, match=f"device has {field}={value}, runtime configured for"):
        runtime.probe()


def test_probe_refuses_a_configuration_word_with_stray_bits():
    runtime, bus = make_runtime()
    bus.values[runtime.registers["config"].address] |= 1 << 31
    with pytest.raises(DeviceError, match="CONFIG register does not match the register map.*0x80000000"):
        runtime.probe()


def test_counters_and_flags_are_read_by_field():
    runtime, bus = make_runtime()
    registers = runtime.registers
    bus.values[registers["entry2.hits"].address] = 41
    bus.values[registers["stall_cycles"].address] = 7
    bus.values[registers["event_count"].address] = 0xFFFF_FFFF
    bus.values[registers["complete"].address] = 0b1010
    assert (runtime.hits(2), runtime.stall_cycles(), runtime.event_count(), runtime.done_mask()) == \
        (41, 7, 0xFFFF_FFFF, 0b1010)
    assert not runtime.id_reuse_flag()
    bus.values[registers["status"].address] = 1
    assert runtime.id_reuse_flag()
    runtime.write_fields("status", id_reuse=1)          # write 1 to clear
    assert not runtime.id_reuse_flag()
    runtime.clear_counters()
    assert (runtime.stall_cycles(), runtime.event_count(), runtime.hits(2)) == (0, 0, 41)


def test_the_register_model_keeps_what_the_hardware_keeps():
    runtime, bus = make_runtime()
    ctrl = runtime.registers["entry0.ctrl"].address
    bus.write(ctrl, 0xFFFF_FFFF)
    assert bus.values[ctrl] == runtime.registers["entry0.ctrl"].pack(
        enable=1, on_write=1, on_read=1, ordered=1, has_init=1, has_final=1)
    bus.write(runtime.registers["irq_enable"].address, 0xFFFF_FFFF)
    assert bus.values[runtime.registers["irq_enable"].address] == 0xFFFF
    with pytest.raises(ValueError, match="does not fit a 32-bit register"):
        bus.write(ctrl, 1 << 32)
    with pytest.raises(KeyError, match="register 'entry0.ctrl' has no field 'enabled'"):
        runtime.write_fields("entry0.ctrl", enabled=1)


@pytest.mark.parametrize("index, entry, message", [
    (0, FilterRange(0x1000, 0), "entry 0: empty range (size 0)"),
    (3, FilterRange(0x1000, -32), "entry 3: empty range (size -32)"),
    (0, FilterRange(0x1010, 0x100),
     "entry 0: base 0x1010 and size 0x100 must be multiples of the 32-byte sector"),
    (0, FilterRange(0x1000, 0x110),
     "entry 0: base 0x1000 and size 0x110 must be multiples of the 32-byte sector"),
    (0, FilterRange((1 << 40) - 0x20, 0x40),
     "entry 0: range [0xffffffffe0, 0x10000000020) leaves the 40-bit address space"),
    (0, FilterRange(-0x20, 0x40), "entry 0: range [-0x20, 0x20) leaves the 40-bit address space"),
    (15, FilterRange(0x1000, 0x100, on_write=False, on_read=False),
     "entry 15: triggers on neither writes nor reads"),
    (16, FilterRange(0x1000, 0x100), "filter entry 16 does not exist (0..15)"),
    (-1, FilterRange(0x1000, 0x100), "filter entry -1 does not exist (0..15)"),
    (0, FilterRange(0x1000, 0x100, kernel_pc=1 << 16), "entry 0: kernel_pc 65536 does not fit 10 bits"),
    (0, FilterRange(0x1000, 0x100, expected=1 << 32),
     "entry 0: expected count 4294967296 does not fit 32 bits"),
    (0, FilterRange(0x1000, 0x100, final_threads=1 << 32),
     "entry 0: final_threads 4294967296 does not fit 32 bits"),
    (0, FilterRange(0x1000, 0x100, final_threads=-1), "entry 0: final_threads -1 does not fit 32 bits"),
    (0, FilterRange(0x1000, 0x100, init_threads=1 << 32),
     "entry 0: init_threads 4294967296 does not fit 32 bits"),
    (0, FilterRange(0x1000, 0x100, init_threads=-1), "entry 0: init_threads -1 does not fit 32 bits"),
    # the default engine: 1024 instruction words (10-bit pcs), 32 argument blocks (5 bits)
    (2, FilterRange(0x1000, 0x100, kernel_pc=-1), "entry 2: kernel_pc -1 does not fit 10 bits"),
    (2, FilterRange(0x1000, 0x100, arg_index=32), "entry 2: arg_index 32 does not fit 5 bits"),
    (2, FilterRange(0x1000, 0x100, arg_index=-1), "entry 2: arg_index -1 does not fit 5 bits"),
    (2, FilterRange(0x1000, 0x100, expected=-1), "entry 2: expected count -1 does not fit 32 bits"),
    (2, FilterRange(0x1000, 0x100, init_pc=1024), "entry 2: init_pc 1024 does not fit 10 bits"),
    (2, FilterRange(0x1000, 0x100, final_pc=1024), "entry 2: final_pc 1024 does not fit 10 bits"),
    (2, FilterRange(0x1000, 0x100, final_pc=-1), "entry 2: final_pc -1 does not fit 10 bits"),
])
def test_bad_ranges_are_refused_by_name(index, entry, message):
    runtime, bus = make_runtime()
    with pytest.raises(RangeError, match="^" + re.escape(message) + "$"):
        runtime.program(index, entry)
    assert bus.log == []


@pytest.mark.parametrize("other", [
    FilterRange(0x1000, 0x100), FilterRange(0x0F00, 0x120), FilterRange(0x10E0, 0x40),
    FilterRange(0x0000, 0x10000),
])
def test_overlapping_ranges_are_refused(other):
    runtime, _ = make_runtime()
    runtime.program(0, FilterRange(0x1000, 0x100))
    with pytest.raises(RangeError, match="^" + re.escape(
            f"entry 1: range [{other.base:#x}, {other.base + other.size:#x}) overlaps entry 0 "
            "[0x1000, 0x1100)") + "$"):
        runtime.program(1, other)


def test_adjacent_ranges_and_reprogramming_are_allowed():
    runtime, _ = make_runtime()
    runtime.program(0, FilterRange(0x1000, 0x100))
    runtime.program(1, FilterRange(0x1100, 0x100))
    runtime.program(1, FilterRange(0x1100, 0x200))      # an entry may move over its own range
    runtime.disable(0)
    runtime.program(2, FilterRange(0x1000, 0x100))      # freed by disabling entry 0
    with pytest.raises(RangeError, match=r"^filter entry 0 is not programmed$"):
        runtime.disable(0)


def test_bus_errors_surface():
    runtime, bus = make_runtime()
    with pytest.raises(CSRAccessError, match="no register at 0x7fc"):
        bus.read(0x7FC)
    with pytest.raises(CSRAccessError, match="read-only"):
        runtime.write_register("id", 1)


# --- parameters the map follows -------------------------------------------------------------------

def test_narrow_addresses_and_many_entries():
    """With 32-bit addresses a range's base and size take one word each; with 64 entries the
    HIT_DONE mask takes two."""
    config = NDPConfig(addr_width=32, trigger=TriggerConfig(filter_entries=64))
    runtime, bus = make_runtime(config)
    runtime.program(63, FilterRange(0xFFFF_0000, 0x1_0000, kernel_pc=3, expected=2))
    base = runtime.registers["entry63.ctrl"].address
    assert [bus.values.get(base + offset) for offset in range(0, 0x24, 4)] == \
        [runtime.registers["entry63.ctrl"].pack(enable=1, on_write=1), 0xFFFF_0000, None, 0x1_0000,
         None, 3, 0, 2, 0]
    with pytest.raises(RangeError, match="leaves the 32-bit address space"):
        runtime.program(0, FilterRange(0xFFFF_FFE0, 0x40))
    bus.values[runtime.registers["complete"].address] = 0x8000_0001
    bus.values[runtime.registers["complete_hi"].address] = 0x8000_0002
    assert runtime.done_mask() == 1 << 63 | 1 << 33 | 1 << 31 | 1



def test_interrupt_enables_take_every_word_of_the_mask():
    config = NDPConfig(trigger=TriggerConfig(filter_entries=40))
    runtime, bus = make_runtime(config)
    runtime.enable_interrupts(1 << 39 | 1 << 5)
    assert bus.values[runtime.registers["irq_enable"].address] == 1 << 5
    assert bus.values[runtime.registers["irq_enable_hi"].address] == 1 << 7
    assert runtime.interrupt_mask() == 1 << 39 | 1 << 5
    for mask in (1 << 40, -1):
        with pytest.raises(RangeError, match="beyond the 40 this slice has"):
            runtime.enable_interrupts(mask)


# --- windows --------------------------------------------------------------------------------------

SMALL_ENGINE = NDPConfig(engine=EngineConfig(instruction_words=64, argument_blocks=2, scratchpad_bytes=256))


def test_every_word_of_every_window_is_written_and_read_back():
    runtime, bus = make_runtime(SMALL_ENGINE)
    generator = numpy.random.default_rng(3)
    for window in runtime.registers.windows:
        words = generator.integers(0, 1 << 32, window.size // 4, dtype=numpy.uint64).astype(numpy.uint32)
        runtime.write_window(window.name, 0, [int(word) for word in words])
        assert bus.window_bytes(window.name).tobytes() == words.astype("<u4").tobytes()
        read = runtime.read_window(window.name, 0, window.size // 4)
        assert read.dtype == numpy.uint32 and list(read) == list(words)
        # One access per word, at the window's base and up.
        assert bus.log[-window.size // 4:] == [("read", window.base + 4 * index)
                                               for index in range(window.size // 4)]


def test_helper_entry_points_must_fit_the_instruction_memory():
    runtime, bus = make_runtime(SMALL_ENGINE)           # 64 instructions: 6-bit entry points
    for field in ("init_pc", "final_pc"):
        with pytest.raises(RangeError, match=f"entry 0: {field} 64 does not fit 6 bits"):
            runtime.program(0, FilterRange(0x1000, 0x100, **{field: 64}))
    assert bus.log == []


def test_an_empty_memory_window_is_allowed():
    runtime, bus = make_runtime(SMALL_ENGINE)
    runtime.set_memory_window(0x2000, 0x2000)
    written = [entry for entry in bus.log if entry[0] == "write"]
    assert written and all(entry[2] in (0x2000, 0) for entry in written)


def test_the_extreme_words_are_written():
    runtime, _ = make_runtime(SMALL_ENGINE)
    runtime.write_window("args", 8, [0, (1 << 32) - 1])
    assert list(runtime.read_window("args", 8, 2)) == [0, (1 << 32) - 1]


def test_kernels_are_loaded_one_after_another_into_the_instruction_memory():
    from matndp.host.kernels.assembler import assemble
    runtime, _ = make_runtime(SMALL_ENGINE)
    first = assemble(".kernel first\n.main\n    nop\n    exit\n")
    second = assemble(".kernel second\n.init\n    exit\n.main\n    samoadd.x [0], DATA\n"
                      ".final\n    exit\n")
    a, b = runtime.load_kernel(first), runtime.load_kernel(second)
    assert (a.name, a.base, a.main_pc, a.init_pc, a.final_pc, a.size) == ("first", 0, 0, None, None, 2)
    assert (b.base, b.init_pc, b.main_pc, b.final_pc, b.size) == (2, 2, 3, 4, 3)
    assert b.ordered and not a.ordered
    assert runtime.kernels == {"first": a, "second": b}
    # Two 32-bit words per 64-bit instruction, low word first, from instruction 0 on.
    words = runtime.read_window("imem", 0, 10).view(numpy.uint64).tolist()
    assert words == list(first.words) + list(second.words)
    # 5 words used, then 29 more copies of the 2-word kernel leave 1 of the 64 free.
    with pytest.raises(WindowError, match=r"kernel 'first' \(2 instructions\) does not fit: "
                                          r"1 of 64 instruction words are free"):
        for _ in range(64):
            runtime.load_kernel(first)


def test_window_data_as_bytes_and_arrays_is_written_as_it_lies_in_memory():
    runtime, bus = make_runtime(SMALL_ENGINE)
    instructions = numpy.array([0x1122_3344_5566_7788, 0x99AA_BBCC_DDEE_FF00], dtype=numpy.uint64)
    runtime.write_window("imem", 0x10, instructions)
    # Each 64-bit instruction is two words, low word first.
    assert list(runtime.read_window("imem", 0x10, 4)) == [0x5566_7788, 0x1122_3344, 0xDDEE_FF00, 0x99AA_BBCC]
    assert runtime.read_window("imem", 0x10, 4).view(numpy.uint64).tolist() == instructions.tolist()
    runtime.write_window("scratchpad", 0xF8, b"\x01\x02\x03\x04\x05\x06\x07\x08")
    assert list(runtime.read_window("scratchpad", 0xF8, 2)) == [0x0403_0201, 0x0807_0605]
    values = numpy.array([1.5, -2.0], dtype=numpy.float32)
    runtime.write_window("args", 0x80, values)
    assert runtime.read_window("args", 0x80, 2).view(numpy.float32).tolist() == [1.5, -2.0]
    assert bytes(bus.window_bytes("args")[0x80:0x88]) == values.tobytes()
    big_endian = numpy.array([0x0102_0304], dtype=">u4")
    runtime.write_window("args", 0, big_endian)
    assert list(runtime.read_window("args", 0, 1)) == [0x0102_0304]
    runtime.write_window("args", 0, [])
    assert runtime.read_window("args", 0, 0).size == 0


@pytest.mark.parametrize("call, message", [
    (lambda r: r.write_window("disk", 0, [1]), r"no window 'disk' \(windows: args, imem, scratchpad\)"),
    (lambda r: r.read_window("disk", 0, 1), r"no window 'disk' \(windows: args, imem, scratchpad\)"),
    (lambda r: r.write_window("imem", 2, [1]), "window 'imem': offset 2 is not a non-negative multiple of 4"),
    (lambda r: r.write_window("imem", -4, [1]), "window 'imem': offset -4 is not a non-negative multiple of 4"),
    (lambda r: r.read_window("imem", 4.0, 1), "window 'imem': offset 4.0 is not a non-negative multiple of 4"),
    (lambda r: r.read_window("imem", True, 1), "window 'imem': offset True is not a non-negative multiple of 4"),
    (lambda r: r.write_window("imem", 0x1FC, [1, 2]), r"window 'imem': bytes \[0x1fc, 0x204\) leave its 0x200 bytes"),
    (lambda r: r.read_window("scratchpad", 0, 65), r"window 'scratchpad': bytes \[0x0, 0x104\) leave its 0x100 bytes"),
    (lambda r: r.read_window("scratchpad", 0x100, 1), r"window 'scratchpad': bytes \[0x100, 0x104\) leave its 0x100 bytes"),
    (lambda r: r.read_window("args", 0, -1), "window 'args': count -1 is not a non-negative int"),
    (lambda r: r.read_window("args", 0, 2.0), "window 'args': count 2.0 is not a non-negative int"),
    (lambda r: r.write_window("args", 0, b"\x01\x02\x03"), "window 'args': 3 bytes are not whole 32-bit words"),
    (lambda r: r.write_window("args", 0, numpy.zeros(3, dtype=numpy.uint16)), "window 'args': 6 bytes are not whole 32-bit words"),
    (lambda r: r.write_window("args", 0, numpy.array(["a"])), "window 'args': a <U1 array is not numbers to write"),
    (lambda r: r.write_window("args", 0, numpy.zeros(2, dtype=bool)), "window 'args': a bool array is not numbers to write"),
    (lambda r: r.write_window("args", 0, [1, 1 << 32]), r"window 'args': word 1 \(4294967296\) is not a 32-bit unsigned value"),
    (lambda r: r.write_window("args", 0, [-1]), r"window 'args': word 0 \(-1\) is not a 32-bit unsigned value"),
    (lambda r: r.write_window("args", 0, [1.0]), r"window 'args': word 0 \(1\.0\) is not a 32-bit unsigned value"),
    (lambda r: r.write_window("args", 0, [True]), r"window 'args': word 0 \(True\) is not a 32-bit unsigned value"),
    (lambda r: r.write_window("args", 0, "abcd"), "window 'args': write words, bytes or an array, not a string"),
])
def test_window_accesses_are_checked_before_they_reach_the_bus(call, message):
    runtime, bus = make_runtime(SMALL_ENGINE)
    with pytest.raises(WindowError, match="^" + message + "$"):
        call(runtime)
    assert bus.log == []


def test_the_rules_of_a_window_are_checked_by_the_runtime_and_the_model():
    config = SMALL_ENGINE
    registers = register_map(config)
    window = registers.window("args")
    read_only = RegisterMap([*registers.parts[:-3],
                             Window("args", window.base, window.size, "", writable=False),
                             Window("imem", 0x2_0000, 0x200, "", readable=False)])
    bus = RegisterModelBus(read_only)
    runtime = NDPRuntime(bus, config)
    runtime.registers = read_only
    with pytest.raises(WindowError, match="window 'args' is not writable"):
        runtime.write_window("args", 0, [1])
    with pytest.raises(WindowError, match="window 'imem' is not readable"):
        runtime.read_window("imem", 0, 1)
    assert bus.log == []
    with pytest.raises(CSRAccessError, match="window args at 0x10004 is not writable"):
        bus.write(0x1_0004, 1)
    with pytest.raises(CSRAccessError, match="window imem at 0x20000 is not readable"):
        bus.read(0x2_0000)
    runtime.write_window("imem", 0, [7])
    assert runtime.read_window("args", 0, 1).tolist() == [0]


def test_the_register_model_refuses_what_the_decoder_refuses():
    runtime, bus = make_runtime(SMALL_ENGINE)
    with pytest.raises(CSRAccessError, match="0x10002 in window args is not aligned to 4 bytes"):
        bus.read(0x1_0002)
    with pytest.raises(CSRAccessError, match="no register at 0x10100, nor a window"):
        bus.read(0x1_0100)                          # past the end of the argument blocks
    with pytest.raises(CSRAccessError, match="no register at 0x8000, nor a window"):
        bus.write(0x8000, 1)
    with pytest.raises(ValueError, match="does not fit a 32-bit register"):
        bus.write(0x1_0000, 1 << 32)
    with pytest.raises(KeyError, match="no window named 'disk'"):
        bus.window_bytes("disk")
    bus.window_bytes("scratchpad")[:4] = [1, 2, 3, 4]
    assert bus.read(0x10_0000) == 0x0403_0201


# ---- engine status and arguments, at the addresses docs/csr.md gives ---------------------

ERROR, ERROR_PC, WATCHDOG = 0x030, 0x034, 0x038
ARGS = 0x010000


def _entry(index, offset):
    return 0x100 + index * 0x40 + offset


def test_the_recorded_error_is_read_from_its_fields_and_cleared_by_writing_one():
    from matndp.hw.engine.isa import ErrorCause
    runtime, bus = make_runtime()
    assert runtime.error() is None
    # entry 11 (bits 13:8) stopped on a misaligned access (cause 2, bits 6:4) at pc 0x2f3
    bus.values[ERROR] = (11 << 8) | (2 << 4) | 1
    bus.values[ERROR_PC] = 0x2f3
    assert runtime.error() == (11, 0x2f3, ErrorCause.MISALIGNED)
    runtime.clear_error()
    assert ("write", ERROR, 1) in bus.log
    assert bus.values[ERROR] & 1 == 0 and runtime.error() is None


def test_the_watchdog_and_the_per_entry_counts_are_plain_words():
    runtime, bus = make_runtime()
    runtime.set_watchdog(123_456)
    assert bus.values[WATCHDOG] == 123_456
    bus.values[_entry(5, 0x28)] = 77           # COMPLETED
    bus.values[_entry(5, 0x2c)] = 9            # DRAINED
    assert (runtime.completed(5), runtime.drained(5)) == (77, 9)


def test_argument_words_land_in_their_block_low_word_first_the_rest_zeroed():
    runtime, bus = make_runtime()
    window = bus.window_bytes("args")
    window[:] = 0xff
    runtime.write_arguments(3, [1, (1 << 64) - 1, 0x1234_5678_9abc_def0])
    words = window[3 * 0x80:4 * 0x80].view("<u8")
    assert words.tolist() == [1, (1 << 64) - 1, 0x1234_5678_9abc_def0] + [0] * 13
    assert (window[:3 * 0x80] == 0xff).all() and (window[4 * 0x80:] == 0xff).all()
    assert ("write", ARGS + 3 * 0x80 + 16, 0x9abc_def0) in bus.log


@pytest.mark.parametrize("block, words, message", [
    (32, [], r"argument block 32 does not exist \(0\.\.31\)"),
    (-1, [], r"argument block -1 does not exist \(0\.\.31\)"),
    (0, [0] * 17, "an argument block holds 16 words, not 17"),
    (0, [0, -1], r"argument word 1 \(-1\) is not a 64-bit unsigned value"),
    (0, [1 << 64], r"argument word 0 \(18446744073709551616\) is not a 64-bit unsigned value"),
    (0, [0, 0, 1.0], r"argument word 2 \(1\.0\) is not a 64-bit unsigned value"),
])
def test_bad_argument_blocks_are_refused_before_anything_is_written(block, words, message):
    runtime, bus = make_runtime()
    with pytest.raises(WindowError, match="^" + message + "$"):
        runtime.write_arguments(block, words)
    assert not [entry for entry in bus.log if entry[0] == "write"]


def test_a_slice_without_an_engine_takes_no_arguments():
    runtime, _ = make_runtime(NDPConfig(engine=None))
    with pytest.raises(DeviceError, match="no engine to take arguments"):
        runtime.write_arguments(0, [1])


def test_a_loaded_kernels_range_runs_its_entry_points():
    from matndp.host.kernels.assembler import assemble
    from matndp.host.kernels.image import Section
    runtime, _ = make_runtime()
    runtime.load_kernel(assemble(".kernel pad\n.main\n    exit\n"))
    image = assemble(".kernel k\n.init\n    exit\n.main\n    nop\n    exit\n.final\n    exit\n")
    loaded = runtime.load_kernel(image)
    selected = loaded.filter_range(0x4000, 0x100, expected=8, arg_index=2)
    assert selected == FilterRange(0x4000, 0x100, kernel_pc=1 + image.sections[Section.MAIN],
                                   init_pc=1 + image.sections[Section.INIT],
                                   final_pc=1 + image.sections[Section.FINAL], ordered=False,
                                   expected=8, arg_index=2)


GATHERING = NDPConfig(trigger=TriggerConfig(gather_sectors=64))


def test_a_gathering_entry_writes_its_layout_and_a_plain_one_clears_it():
    runtime, bus = make_runtime(GATHERING)
    address = runtime.registers["entry1.gather"].address
    runtime.program(1, FilterRange(0x1000, 4 * 256, expected=8, gather=Gathering(4, 8, 16)))
    assert bus.values[address] == runtime.registers["entry1.gather"].pack(ports=4, copy_log2=8, slot=16)
    runtime.program(1, FilterRange(0x1000, 256))
    assert bus.values[address] == 0


@pytest.mark.parametrize("gather, size, message", [
    (Gathering(1, 8), 256, "gathering takes 2 to 16 copies, not 1"),
    (Gathering(17, 8), 256, "gathering takes 2 to 16 copies, not 17"),
    (Gathering(2, 4), 32, r"copies of 2\^4 bytes; a copy is at least a sector"),
    (Gathering(2, 40), 32, r"copies of 2\^40 bytes; a copy is at least a sector and within"),
    (Gathering(2, 8), 0x300, "range of 0x300 bytes beyond its 2 copies of 0x100"),
    (Gathering(2, 8, 57), 0x200, "slots 57..64 beyond the table's 64"),
    (Gathering(2, 8, -1), 0x200, "slots -1..6 beyond the table's 64"),
])
def test_bad_gathering_is_refused_by_name(gather, size, message):
    runtime, _ = make_runtime(GATHERING)
    with pytest.raises(RangeError, match=f"entry 0: {message}"):
        runtime.program(0, FilterRange(0x1000, size, gather=gather))


def test_gathering_entries_take_slots_of_their_own_and_need_a_table():
    runtime, _ = make_runtime(GATHERING)
    runtime.program(0, FilterRange(0x1000, 0x200, gather=Gathering(2, 8, 0)))
    with pytest.raises(RangeError, match="entry 1: table slots overlap entry 0's"):
        runtime.program(1, FilterRange(0x2000, 0x200, gather=Gathering(2, 8, 7)))
    runtime.program(1, FilterRange(0x2000, 0x200, gather=Gathering(2, 8, 8)))
    plain, _ = make_runtime()
    with pytest.raises(RangeError, match="entry 0: this slice has no arrival-gathering table"):
        plain.program(0, FilterRange(0x1000, 0x200, gather=Gathering(2, 8)))
