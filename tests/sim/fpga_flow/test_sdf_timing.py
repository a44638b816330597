"""Static timing over nextpnr's SDF (sim/fpga_flow/sdf_timing.py), on hand-written SDF whose path
delays are worked out below; the slow test of sim/fpga_flow/synth.py checks it against nextpnr's own
Fmax on a routed design."""

import pytest

from matndp.sim.fpga_flow.sdf_timing import SDFError, TimingGraph, failing_registers, register_name


def _flip_flop(name, clock_to_q, setup, data_pin="DI"):
    return f"""
  (CELL (CELLTYPE "TRELLIS_FF") (INSTANCE {name})
    (DELAY (ABSOLUTE (IOPATH CLK Q ({clock_to_q}:{clock_to_q}:{clock_to_q}) ({clock_to_q}:{clock_to_q}:{clock_to_q}))))
    (TIMINGCHECK (SETUPHOLD (posedge {data_pin}) (posedge CLK) ({setup}:{setup}:{setup}) (0:0:0))))"""


def _lut(name, delay):
    return f"""
  (CELL (CELLTYPE "TRELLIS_COMB") (INSTANCE {name})
    (DELAY (ABSOLUTE (IOPATH A F (1:{delay // 2}:{delay}) (1:1:{delay})) (IOPATH B F (1:1:{delay}) (1:1:{delay})))))"""


# Two registers a and b (clock to Q 500 ps) feed a LUT (A: 200 ps, B: 200 ps) whose output
# drives register q (setup 100 ps); a also drives q2 directly. Routing: a -> lut.A 1000 ps,
# b -> lut.B 3000 ps, lut -> q 400 ps, a -> q2 250 ps. Worst into q: from b,
# 500 + 3000 + 200 + 400 + 100 = 4200 ps; into q2: 500 + 250 + 100 = 850 ps.
LUT = "unit.lut\\$1"      # as nextpnr escapes a '$' in an instance name
SDF = f"""(DELAYFILE
  (SDFVERSION "3.0")
  (DESIGN "top")
  (DIVIDER /)
  (TIMESCALE 1ps)
  (CELL (CELLTYPE "top") (INSTANCE )
    (DELAY (ABSOLUTE
      (INTERCONNECT a_TRELLIS_FF_Q/Q unit.lut\\$1/A (900:950:1000) (900:950:1000))
      (INTERCONNECT b_TRELLIS_FF_Q_3/Q unit.lut\\$1/B (3000:3000:3000) (3000:3000:3000))
      (INTERCONNECT unit.lut\\$1/F q_TRELLIS_FF_Q_7/DI (400:400:400) (400:400:400))
      (INTERCONNECT a_TRELLIS_FF_Q/Q q2/M (250:250:250) (250:250:250)))))
  {_flip_flop("a_TRELLIS_FF_Q", 500, 100)}
  {_flip_flop("b_TRELLIS_FF_Q_3", 500, 100)}
  {_flip_flop("q_TRELLIS_FF_Q_7", 500, 100)}
  {_flip_flop("q2", 500, 100, data_pin="M")}
  {_lut(LUT, 200)}
)
"""


def test_every_endpoints_worst_path_and_slack():
    endpoints = TimingGraph(SDF).analyse(period_ns=4.0)
    assert [(endpoint.cell, endpoint.pin) for endpoint in endpoints] == \
        [("q_TRELLIS_FF_Q_7", "DI"), ("q2", "M")]
    worst, other = endpoints
    assert worst.arrival_ns == pytest.approx(4.2)
    assert worst.slack_ns == pytest.approx(-0.2)
    assert worst.start == "b_TRELLIS_FF_Q_3"
    assert worst.path == (("b_TRELLIS_FF_Q_3", 0.5), ("unit.lut$1", 3.7), ("q_TRELLIS_FF_Q_7", 4.1))
    assert other.arrival_ns == pytest.approx(0.85) and other.slack_ns == pytest.approx(3.15)


def test_a_timescale_in_nanoseconds_scales_every_delay():
    endpoints = TimingGraph(SDF.replace("(TIMESCALE 1ps)", "(TIMESCALE 1ns)")).analyse(10000.0)
    assert endpoints[0].arrival_ns == pytest.approx(4200.0)


def test_failing_endpoints_gather_by_register():
    endpoints = TimingGraph(SDF).analyse(period_ns=0.8)
    assert [endpoint.slack_ns < 0 for endpoint in endpoints] == [True, True]
    registers = failing_registers(endpoints)
    assert [(register["register"], register["start"], register["failing_bits"])
            for register in registers] == [("q", "b", 1), ("q2", "a", 1)]
    assert registers[0]["worst_slack_ns"] == pytest.approx(-3.4)
    assert failing_registers(endpoints, limit=1) == registers[:1]
    assert failing_registers(TimingGraph(SDF).analyse(period_ns=5.0)) == []


def test_register_names_drop_the_packers_bit_suffix():
    assert register_name("unit.trigger.o__payload.hit_TRELLIS_FF_Q") == "unit.trigger.o__payload.hit"
    assert register_name("unit.gpu_side.o__payload$93_TRELLIS_FF_Q_226") == "unit.gpu_side.o__payload$93"
    assert register_name("unit.memory$1") == "unit.memory$1"


@pytest.mark.parametrize("text, message", [
    ("(CELL)", "not an SDF file"),
    ("(DELAYFILE (TIMESCALE 1ps)", "ends inside an open"),
    ("(DELAYFILE))", "unbalanced"),
    ("(DELAYFILE (TIMESCALE 1 furlong))", "unreadable TIMESCALE"),
    ('(DELAYFILE (TIMESCALE 1ps) (CELL (CELLTYPE "x") (INSTANCE a)))', "no setup checks"),
    ('(DELAYFILE (CELL (CELLTYPE "top") (INSTANCE ) (DELAY (ABSOLUTE '
     '(INTERCONNECT a b/M (1:1:1) (1:1:1))))))', "names no pin"),
])
def test_unreadable_sdf_is_refused_by_name(text, message):
    with pytest.raises(SDFError, match=message):
        TimingGraph(text)
