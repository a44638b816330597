"""Struct payloads packed as the flat vectors the Verilog carries, and back."""

from amaranth.hdl import unsigned
from amaranth.lib import data
import pytest

from matndp.sim.drivers.packing import StructCodec


LAYOUT = data.StructLayout({"low": unsigned(4), "flag": unsigned(1), "high": unsigned(11)})


def test_fields_are_packed_lsb_first_in_layout_order():
    codec = StructCodec(LAYOUT)
    assert codec.pack({"low": 0xA, "flag": 1, "high": 0x5FF}) == 0xA | 1 << 4 | 0x5FF << 5
    assert codec.unpack(0xA | 1 << 4 | 0x5FF << 5) == {"low": 0xA, "flag": 1, "high": 0x5FF}


def test_missing_fields_are_zero():
    assert StructCodec(LAYOUT).pack({"flag": 1}) == 1 << 4


def test_round_trip():
    codec = StructCodec(LAYOUT)
    for word in (0, 1, 0xFFFF, 0x1234):
        assert codec.pack(codec.unpack(word)) == word


@pytest.mark.parametrize("values, error, message", [
    ({"low": 16}, ValueError, r"field low=0x10 does not fit 4 bits"),
    ({"low": -1}, ValueError, "does not fit 4 bits"),
    ({"middle": 1}, KeyError, "no field"),
])
def test_pack_errors(values, error, message):
    with pytest.raises(error, match=message):
        StructCodec(LAYOUT).pack(values)


def test_only_struct_layouts():
    with pytest.raises(TypeError, match="expected a StructLayout"):
        StructCodec(unsigned(8))
