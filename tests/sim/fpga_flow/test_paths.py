"""Path estimates before place and route (sim/fpga_flow/paths.py), on netlists written by
hand: the delays along each path summed here from the cells' delays, carry chains and
wide multiplexers without a routing hop, the units a path crosses, and bad input."""

import pytest

from matndp.sim.fpga_flow.paths import (CELL_DELAY_NS, CLOCK_TO_OUT_NS, ROUTING_HOP_NS,
                                        SETUP_NS, estimate_paths, unit_of)


def _cell(kind, inputs, outputs, parameters=None):
    ports = {**{port: "input" for port in inputs}, **{port: "output" for port in outputs}}
    return {"type": kind, "parameters": parameters or {}, "attributes": {},
            "port_directions": ports,
            "connections": {**{port: [bit] for port, bit in inputs.items()},
                            **{port: [bit] for port, bit in outputs.items()}}}


def _netlist(cells):
    return {"modules": {"unit": {"cells": cells, "netnames": {}}}}


FF, LUT = CLOCK_TO_OUT_NS["TRELLIS_FF"], CELL_DELAY_NS["LUT4"]
# The estimates are rounded to 0.1 ns.


def test_a_chain_of_luts_between_two_units_adds_a_hop_and_a_lut_each():
    cells = {
        "engine.order.start": _cell("TRELLIS_FF", {"DI": 1, "CLK": 2}, {"Q": 10}),
        "engine.order.a": _cell("LUT4", {"A": 10, "B": "0"}, {"Z": 11}),
        "engine.core0.dispatch.b": _cell("LUT4", {"A": 11}, {"Z": 12}),
        "engine.core0.dispatch.end": _cell("TRELLIS_FF", {"DI": 12, "CLK": 2}, {"Q": 13}),
        # A register straight into another: the short path.
        "engine.entries.near": _cell("TRELLIS_FF", {"DI": 10, "CLK": 2}, {"Q": 14}),
    }
    result = estimate_paths(_netlist(cells), "unit")
    worst, near = result["paths"]
    expected = FF + 2 * (ROUTING_HOP_NS + LUT) + ROUTING_HOP_NS + SETUP_NS
    assert worst["ns"] == pytest.approx(expected, abs=0.06)
    assert worst["to"] == "engine.core0.dispatch"
    assert worst["units"] == ["engine.order", "engine.core0.dispatch"]
    assert worst["endpoints"] == 1 and worst["mhz"] == pytest.approx(1000 / expected, abs=0.1)
    assert near["ns"] == pytest.approx(FF + ROUTING_HOP_NS + SETUP_NS, abs=0.06)
    assert near["units"] == ["engine.order"] and near["to"] == "engine.entries"
    assert sum(result["histogram"].values()) == 2   # an undriven input ends no path


def test_carry_chains_and_wide_multiplexers_take_no_routing_hop():
    cells = {
        "a.start": _cell("TRELLIS_FF", {"DI": 1}, {"Q": 10}),
        "a.carry0": _cell("CCU2C", {"A0": 10, "CIN": "0"}, {"COUT": 11, "S0": 20}),
        "a.carry1": _cell("CCU2C", {"CIN": 11}, {"COUT": 12, "S0": 13}),
        "a.mux": _cell("PFUMX", {"ALUT": 13, "BLUT": "0", "C0": "1"}, {"Z": 14}),
        "a.end": _cell("TRELLIS_FF", {"DI": 14}, {"Q": 15}),
    }
    result = estimate_paths(_netlist(cells), "unit")
    # into the chain (one hop), along it and out of its sum (none), into the multiplexer
    # (none), then to the register.
    expected = FF + ROUTING_HOP_NS + 0.55 + 0.45 + CELL_DELAY_NS["PFUMX"] + ROUTING_HOP_NS + SETUP_NS
    assert result["paths"][0]["ns"] == pytest.approx(expected, abs=0.06)


def test_block_rams_and_registered_multipliers_start_paths_and_bare_multipliers_do_not():
    registered = {"REG_OUTPUT_CLK": "CLK0"}
    cells = {
        "m.ram": _cell("DP16KD", {"ADA0": 1}, {"DOA0": 10}),
        "m.multiply": _cell("MULT18X18D", {"A0": 10}, {"P0": 11}, {"REG_OUTPUT_CLK": "NONE"}),
        "m.end": _cell("TRELLIS_FF", {"DI": 11}, {"Q": 12}),
        "m.registered": _cell("MULT18X18D", {"A0": 12}, {"P0": 13}, registered),
        "m.end2": _cell("TRELLIS_FF", {"DI": 13}, {"Q": 14}),
    }
    paths = estimate_paths(_netlist(cells), "unit")["paths"]
    assert paths[0]["ns"] == pytest.approx(
        CLOCK_TO_OUT_NS["DP16KD"] + ROUTING_HOP_NS + CELL_DELAY_NS["MULT18X18D"]
        + ROUTING_HOP_NS + SETUP_NS, abs=0.06)
    assert paths[1]["ns"] == pytest.approx(
        CLOCK_TO_OUT_NS["MULT18X18D"] + ROUTING_HOP_NS + SETUP_NS, abs=0.06)


def test_count_keeps_the_worst():
    # Endpoint k after k + 1 LUTs in series from one register.
    cells = {"u.start": _cell("TRELLIS_FF", {"DI": 1}, {"Q": 10})}
    for k in range(5):
        cells[f"u.lut{k}"] = _cell("LUT4", {"A": 10 + k}, {"Z": 11 + k})
        cells[f"u{k}.end"] = _cell("TRELLIS_FF", {"DI": 11 + k}, {"Q": 99 + k})
    paths = estimate_paths(_netlist(cells), "unit", count=2)["paths"]
    assert [path["to"] for path in paths] == ["u4.end", "u3.end"]
    assert paths[0]["ns"] - paths[1]["ns"] == pytest.approx(ROUTING_HOP_NS + LUT, abs=0.11)


@pytest.mark.parametrize("name, unit", [
    ("engine.order.queues.0.5_DI_CCU2C_S1", "engine.order"),
    ("engine.core0.dispatch.i__payload.control", "engine.core0.dispatch"),
    ("arbiter.ndp__req__payload.write_TRELLIS_FF_Q", "arbiter.ndp"),
    ("engine.core0.dying$275", "engine.core0.dying"),
    ("top", "top"),
])
def test_units_are_named_from_the_cells(name, unit):
    assert unit_of(name) == unit


def test_a_missing_module_is_named():
    with pytest.raises(ValueError, match="the netlist has no module 'nowhere'"):
        estimate_paths(_netlist({}), "nowhere")
