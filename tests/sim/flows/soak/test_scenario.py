"""A soak round as drawn, before any simulation: the same seed gives the same round, rounds
are drawn each on their own, every stage's entries and ranges are disjoint, every fault
kind comes in turn, and the timeline names the entries in force in every stream phase."""

import pickle

import numpy as np

from matndp.host.runtime import FilterRange
from matndp.sim.batch.check import matching_entries
from matndp.sim.flows.soak import SoakSettings, draw_round
from matndp.sim.flows.soak.faults import FAULT_KERNELS
from matndp.sim.flows.soak.layout import (FAILING, FAULT_REGION, HOLE, TENSOR_BASE,
                                          UNRELATED_REGION, WINDOW)
from matndp.sim.flows.soak.scenario import draw_timing, stages_in_round
from matndp.sim.flows.soak.steps import ArmEntries


SMALL = SoakSettings(stages_per_round=8, max_elements=64, fault_probability=1.0,
                     decoy_probability=1.0)


def test_the_same_seed_draws_the_same_round():
    one, two = draw_round(7, 3, SMALL), draw_round(7, 3, SMALL)
    assert pickle.dumps(one.job.steps) == pickle.dumps(two.job.steps)
    other = draw_round(8, 3, SMALL)
    assert pickle.dumps(other.job.steps) != pickle.dumps(one.job.steps)


def test_rounds_grow_to_their_length():
    assert [stages_in_round(number, SMALL) for number in range(6)] == [1, 2, 4, 8, 8, 8]
    assert len(draw_round(1, 0, SMALL).stages) == 1


def test_every_fault_kind_comes_in_turn_and_each_stage_uses_distinct_entries():
    soak_round = draw_round(5, 3, SMALL)
    kinds = [stage.fault["kind"] for stage in soak_round.stages]
    assert len(set(kinds[:len(FAULT_KERNELS)])) == len(FAULT_KERNELS)
    for stage in soak_round.stages:
        assert len(set(stage.entries)) == len(stage.entries)
        ends = [(plan.entry["base"], plan.entry["base"] + plan.entry["size"]) for plan in stage.plans]
        assert all(TENSOR_BASE <= start and end <= WINDOW[1] for start, end in ends)
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(sorted(ends), sorted(ends)[1:]))


def test_the_layout_keeps_the_regions_apart():
    regions = sorted([HOLE, FAILING, FAULT_REGION, UNRELATED_REGION])
    assert all(a[1] <= b[0] for a, b in zip(regions, regions[1:]))
    assert WINDOW[0] <= regions[0][0] and regions[-1][1] <= TENSOR_BASE


def test_the_timeline_holds_the_entries_armed_before_each_phase():
    soak_round = draw_round(11, 3, SMALL)
    armed = {}
    timeline = dict(soak_round.timeline)
    checked = 0
    for step in soak_round.job.steps:
        function = step.get("function")
        if isinstance(function, ArmEntries):
            if function.disarm == "all":
                armed = {}
            else:
                for index in function.disarm:
                    del armed[index]
            for program in function.programs:
                armed[program.index] = tuple(program.entry[field] for field
                                             in ("base", "size", "on_write", "on_read"))
        if step["kind"] == "run" and step["key"] in timeline:
            got = {index: (entry.base, entry.size, entry.on_write, entry.on_read)
                   for index, entry in timeline[step["key"]].items()}
            assert got == armed, step["key"]
            checked += 1
    assert checked == len(timeline) > len(soak_round.stages)
    assert any(stage.decoy is not None for stage in soak_round.stages)


def test_the_stream_reaches_every_kind_of_address():
    soak_round = draw_round(2, 4, SoakSettings(error_share=0.2))
    requests = soak_round.job.requests()
    entries = {}
    for _, in_force in soak_round.timeline:
        entries.update(in_force)
    addr = requests.addr
    assert ((addr >= HOLE[0]) & (addr < HOLE[1])).any()
    assert ((addr >= FAILING[0]) & (addr < FAILING[1])).any()
    assert ((addr >= UNRELATED_REGION[0]) & (addr < UNRELATED_REGION[1])).any()
    assert ((addr >= FAULT_REGION[0]) & (addr < FAULT_REGION[1])).any()
    assert (addr >= TENSOR_BASE).any() and requests.write.any() and (~requests.write).any()
    assert (requests.gap > 0).any() and len(np.unique(requests.id)) > 100


def test_timing_is_drawn_within_the_settings():
    rng = np.random.default_rng(3)
    settings = SoakSettings(max_latency=50, max_pause=0.4)
    drawn = [draw_timing(rng, settings) for _ in range(200)]
    assert all(1 <= timing.latency <= 50 for timing in drawn)
    assert all(timing.gpu_request_pause <= 0.4 for timing in drawn)
    assert {timing.reorder for timing in drawn} == {1, 2, 4, 8}
    assert {draw_timing(rng, settings, reordering=True).reorder for _ in range(50)} == {2, 4, 8}
    assert any(timing.memory_response_pause == 0 for timing in drawn)
