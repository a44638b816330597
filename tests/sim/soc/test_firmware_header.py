"""The firmware's header: its register addresses and fields are the register map's, its
runtime steps replay to the slice state the runtime programs, its expected values are the
numpy goldens', and what the SoC cannot run is refused by name."""

import dataclasses
import re

import numpy as np
import pytest

from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.csr_map import ENTRY_STRIDE, MAGIC, WINDOW_BASES, entry_register_name, register_map
from matndp.host.csr_bus import RegisterModelBus
from matndp.host.kernels.library import kernel
from matndp.host.kernels.library.inputs import random_inputs
from matndp.sim.designs import FPGA_ENGINE_SLICE
from matndp.sim.golden.kernels import GOLDENS
from matndp.sim.soc.firmware_header import (SOC_KERNELS, STAGING_BASE, RecordingBus, SoCKernel,
                                            firmware_header, kernel_programs)


_DEFINE = re.compile(r"^#define (NDP_\w+) (0x[0-9a-f]+|\d+)u?$", re.MULTILINE)


@pytest.fixture(scope="module")
def programs():
    return kernel_programs(FPGA_ENGINE_SLICE)


@pytest.fixture(scope="module")
def header():
    return firmware_header(FPGA_ENGINE_SLICE)


def test_every_register_and_field_of_the_map_is_defined_at_its_address(header):
    defines = {name: int(value, 0) for name, value in _DEFINE.findall(header)}
    registers = register_map(FPGA_ENGINE_SLICE)
    for register in registers:
        symbol = "NDP_" + register.name.upper().replace(".", "_")
        assert defines.pop(symbol) == register.address
        for field in register.fields:
            prefix = f"{symbol}_{field.name.upper()}"
            assert defines.pop(f"{prefix}_SHIFT") == field.lsb
            assert defines.pop(f"{prefix}_MASK") == (1 << field.width) - 1
    for window in registers.windows:
        assert defines.pop(f"NDP_WINDOW_{window.name.upper()}") == WINDOW_BASES[window.name]
        assert defines.pop(f"NDP_WINDOW_{window.name.upper()}_BYTES") == window.size
    assert defines.pop("NDP_MAGIC") == MAGIC
    assert defines.pop("NDP_ENTRY_STRIDE") == ENTRY_STRIDE
    assert defines.pop("NDP_SECTOR_BYTES") == FPGA_ENGINE_SLICE.sector_bytes
    assert defines.pop("NDP_KERNEL_COUNT") == len(SOC_KERNELS)
    assert defines == {}


def test_the_header_says_it_is_generated_and_how_to_regenerate_it(header):
    first = header.splitlines()[0]
    assert "do not edit" in first and "make soc-sim" in first


def _replayed(programs, steps=None):
    bus = RegisterModelBus(register_map(FPGA_ENGINE_SLICE))
    for program in programs:
        for name, blocks in program.steps.items():
            if steps is None or name in steps:
                for address, words in blocks:
                    bus.write_words(address, words)
    return bus


def test_the_replayed_steps_load_every_kernel_and_arm_every_entry(programs):
    bus = _replayed(programs)
    registers = register_map(FPGA_ENGINE_SLICE)
    imem = bus.window_bytes("imem").view("<u8")
    position = 0
    for index, (program, request) in enumerate(zip(programs, SOC_KERNELS)):
        image = kernel(request.name).image
        assert imem[position:position + len(image.words)].tolist() == list(image.words)
        position += len(image.words)
        ctrl = registers[entry_register_name(index, "ctrl")]
        fields = ctrl.unpack(bus.read(ctrl.address))
        assert fields["enable"] == 1
        assert (fields["on_write"], fields["on_read"]) == ((0, 1) if program.read else (1, 0))
        base = registers[entry_register_name(index, "base_lo")]
        assert bus.read(base.address) == program.trigger_address
        size = registers[entry_register_name(index, "size_lo")]
        assert bus.read(size.address) == program.trigger_sectors * FPGA_ENGINE_SLICE.sector_bytes
    # Each kernel's last step leaves only its own entry's interrupt enabled.
    assert programs[-1].steps["enable_interrupts"][-1][1] == [1 << (len(programs) - 1)]


def test_expected_values_are_the_goldens_and_the_trigger_is_staged_apart(programs):
    for program, request in zip(programs, SOC_KERNELS):
        launch = kernel(request.name).launch(request.problem)
        inputs = random_inputs(launch, request.seed + program.entry)
        golden = GOLDENS[request.name](inputs, dict(launch.params), dict(launch.problem),
                                       order=None, partials=launch.partials)
        expected = {address: data for address, data in program.expected}
        assert len(expected) == len(golden)
        trigger = np.ascontiguousarray(inputs[launch.trigger]).tobytes()
        if program.read:
            assert dict(program.place)[program.trigger_address] == trigger
        else:
            assert dict(program.place)[program.trigger_source] == trigger
            assert program.trigger_source >= STAGING_BASE > program.trigger_address
        for name, values in golden.items():
            raw = np.ascontiguousarray(values).view(np.uint8).tobytes()
            assert raw in expected.values(), name


def test_the_recording_bus_records_each_call_as_one_block():
    bus = RecordingBus(register_map(FPGA_ENGINE_SLICE))
    bus.write(0x10, 5)
    bus.write_words(0x2_0000, [1, 2, 3])
    assert bus.take() == [(0x10, [5]), (0x2_0000, [1, 2, 3])]
    assert bus.take() == []


def test_a_slice_without_an_engine_is_refused():
    with pytest.raises(ValueError, match="needs an engine"):
        kernel_programs(NDPConfig(engine=None))


def test_the_kernels_include_a_read_triggered_one(programs):
    assert [program.read for program in programs] == [
        kernel(request.name).access.value == "read" for request in SOC_KERNELS]
    assert any(program.read for program in programs) and not all(program.read for program in programs)


def test_a_trigger_tensor_that_ends_in_a_partial_sector_is_refused_by_name():
    with pytest.raises(ValueError, match="relu_fwd: the DMA moves whole sectors"):
        kernel_programs(FPGA_ENGINE_SLICE, (SoCKernel("relu_fwd", {"elements": 12}),))


def test_more_kernels_than_argument_blocks_are_refused():
    config = dataclasses.replace(FPGA_ENGINE_SLICE, engine=dataclasses.replace(
        FPGA_ENGINE_SLICE.engine, argument_blocks=1))
    with pytest.raises(ValueError, match="3 kernels need as many argument blocks"):
        kernel_programs(config)


def test_kernels_beyond_the_instruction_memory_are_refused():
    config = dataclasses.replace(FPGA_ENGINE_SLICE, engine=EngineConfig(
        slots=4, instruction_words=64, argument_blocks=4, scratchpad_bytes=4096))
    with pytest.raises(ValueError, match="does not fit"):
        kernel_programs(config, (SOC_KERNELS[1], SOC_KERNELS[1]))
