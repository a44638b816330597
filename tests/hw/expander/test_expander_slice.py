# amaranth: UnusedElaboratable=no
"""The expander slice's composition: the merged id width of the slice inside, its ports,
and every constructor error. Its behaviour end to end is tests/sim/flows/test_expander_run.py's."""

import pytest

from matndp.hw.arbiter import with_id_width
from matndp.hw.config import EngineConfig, NDPConfig
from matndp.hw.expander import ExpanderSlice
from matndp.hw.csr_map import register_map
from matndp.hw.layouts import request_layout, response_layout


CONFIG = NDPConfig(id_width=6, engine=EngineConfig(slots=4))


@pytest.mark.parametrize("ports, bits", [(2, 1), (3, 2), (4, 2), (8, 3)])
def test_the_slice_inside_is_built_for_the_merged_ids(ports, bits):
    expander = ExpanderSlice(CONFIG, ports)
    assert expander.slice_config.id_width == CONFIG.id_width + bits
    assert expander.slice_config == with_id_width(CONFIG, CONFIG.id_width + bits)
    assert len(expander.gpu) == ports
    for port in expander.gpu:
        assert port.req.payload.shape() == request_layout(CONFIG)
        assert port.resp.payload.shape() == response_layout(CONFIG)
    mem_config = with_id_width(expander.slice_config, expander.slice_config.mem_id_width)
    assert expander.mem.req.payload.shape() == request_layout(mem_config)
    assert expander.mem.resp.payload.shape() == response_layout(mem_config)
    # The register map is the inner slice's, built for the merged ids.
    assert expander.register_map.addr_width == register_map(expander.slice_config).addr_width
    assert [r.name for r in expander.register_map] == [r.name for r in register_map(expander.slice_config)]


def test_default_is_four_ports():
    assert ExpanderSlice(CONFIG).ports == 4


def test_constructor_errors():
    with pytest.raises(TypeError, match="config must be an NDPConfig"):
        ExpanderSlice({"id_width": 4})
    with pytest.raises(ValueError, match="needs one"):
        ExpanderSlice(NDPConfig(engine=None))
    with pytest.raises(TypeError, match="ports must be an int"):
        ExpanderSlice(CONFIG, "4")
    with pytest.raises(ValueError, match="ports must be at least 2"):
        ExpanderSlice(CONFIG, 1)
    with pytest.raises(ValueError, match=r"ports must be in 1\.\.16, not 32"):
        ExpanderSlice(CONFIG, 32)
    with pytest.raises(ValueError, match="16 ports need 4 id bits above the ports' 10"):
        ExpanderSlice(NDPConfig(id_width=10), 16)
    with pytest.raises(ValueError, match="response_depth"):
        ExpanderSlice(CONFIG, 2, response_depth=2000)
