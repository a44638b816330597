"""The register bus signature."""

import pytest
from amaranth.lib.wiring import In, Out

from matndp.hw.bus.signature import CSR_DATA_WIDTH, CSRBusSignature


def test_members_as_seen_by_the_initiator():
    assert dict(CSRBusSignature(11).members) == {
        "addr": Out(11), "w_en": Out(1), "w_data": Out(32), "r_en": Out(1),
        "ack": In(1), "r_data": In(32), "err": In(1),
    }
    assert CSR_DATA_WIDTH == 32


def test_equality_and_repr():
    assert CSRBusSignature(9) == CSRBusSignature(9)
    assert CSRBusSignature(9) != CSRBusSignature(10)
    assert repr(CSRBusSignature(9)) == "CSRBusSignature(9)"
    target = CSRBusSignature(9).flip().create()
    assert len(target.addr) == 9 and len(target.r_data) == CSR_DATA_WIDTH


@pytest.mark.parametrize("addr_width", [0, 1, -3, 4.0, True, "8"])
def test_address_width_is_checked(addr_width):
    with pytest.raises(ValueError, match=f"addr_width must be an int of at least 2.*not {addr_width!r}"):
        CSRBusSignature(addr_width)
