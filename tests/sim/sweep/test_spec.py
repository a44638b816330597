"""Sweep specifications: axes, ranges, seeds, point keys, and every refusal."""

import datetime
import hashlib
import json

import pytest

from matndp.sim.sweep import SpecError, load_spec, parse_spec, point_key


def gpu_spec(**extra):
    return {"point": "gpu", "fixed": {"gpu": "v100"}, **extra}


def test_axes_expand_to_their_cartesian_product_last_axis_fastest_seeds_innermost():
    spec = parse_spec(gpu_spec(axes={"model": ["resnet50", "vgg16_bn"], "batch": [2, 4, 8]},
                               seeds=[7, 9]))
    points = list(spec.points())
    assert len(spec) == len(points) == 12
    assert [(p.config["model"], p.config["batch"], p.seed) for p in points[:4]] == [
        ("resnet50", 2, 7), ("resnet50", 2, 9), ("resnet50", 4, 7), ("resnet50", 4, 9)]
    assert points[-1].config["model"] == "vgg16_bn" and points[-1].config["batch"] == 8
    # the full configuration: fixed values, and the defaults of everything else
    assert points[0].config["gpu"] == "v100"
    assert points[0].config["policy"] == "auto" and points[0].config["dtype"] == "fp32"
    assert len({p.key for p in points}) == 12


def test_without_seeds_every_point_runs_once_with_seed_none():
    points = list(parse_spec(gpu_spec(axes={"model": ["gpt2"]})).points())
    assert [p.seed for p in points] == [None]


@pytest.mark.parametrize("axis, values", [
    ({"from": 1, "to": 4, "step": 1}, [1, 2, 3, 4]),
    ({"from": 2, "to": 9, "step": 3}, [2, 5, 8]),
    ({"from": 8, "to": 2, "step": -3}, [8, 5, 2]),
    ({"from": 2, "to": 64, "times": 2}, [2, 4, 8, 16, 32, 64]),
    ({"from": 3, "to": 30, "times": 3}, [3, 9, 27]),
    ({"from": 0.1, "to": 0.5, "count": 5}, [0.1, 0.2, 0.3, 0.4, 0.5]),
    ({"from": 0.25, "to": 0.75, "step": 0.25}, [0.25, 0.5, 0.75]),
    ({"from": 5, "to": 9, "count": 1}, [5]),
])
def test_ranges(axis, values):
    spec = parse_spec({"point": "tier", "fixed": {"model": "resnet50", "hbm_fraction": 0.5},
                       "axes": {"link_gbs": axis}})
    assert spec.axes["link_gbs"] == pytest.approx(values)
    assert all(type(v) is type(w) for v, w in zip(spec.axes["link_gbs"], values))


def test_point_key_is_the_hash_of_the_canonical_configuration():
    config = {"b": 2, "a": [1, {"y": None, "x": 0.5}]}
    text = '{"config":{"a":[1,{"x":0.5,"y":null}],"b":2},"point":"gpu","seed":3}'
    assert point_key("gpu", config, 3) == hashlib.sha256(text.encode()).hexdigest()[:16]
    reordered = json.loads(json.dumps({"a": config["a"], "b": 2}))
    assert point_key("gpu", reordered, 3) == point_key("gpu", config, 3)
    assert point_key("gpu", config, 4) != point_key("gpu", config, 3)
    assert point_key("tier", config, 3) != point_key("gpu", config, 3)


def test_a_fixed_value_equal_to_the_default_gives_the_same_point():
    plain = next(parse_spec({"point": "gpu", "axes": {"model": ["gpt2"]}}).points())
    spelled = next(parse_spec({"point": "gpu", "fixed": {"policy": "auto"},
                               "axes": {"model": ["gpt2"]}}).points())
    assert plain.key == spelled.key


def test_load_spec_reads_toml(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text('point = "gpu"\nseeds = { from = 1, to = 3, step = 1 }\n'
                    '[fixed]\nbatch = 4\n[axes]\nmodel = ["resnet50", "bert-base"]\n')
    spec = load_spec(path)
    assert spec.function == "gpu" and spec.seeds == (1, 2, 3) and len(spec) == 6
    assert spec.source == str(path)


BAD = [
    ({"point": "gpu", "axes": {"model": ["gpt2"]}, "sweep": 1}, "sweep: unknown key"),
    ({"axes": {"model": ["gpt2"]}}, "point: missing"),
    ({"point": "gpx"}, "point: unknown point function 'gpx'; known: gpu, tier, rtl-bench"),
    ({"point": 3}, "point: unknown point function 3"),
    ({"point": "gpu"}, "model: required by point function gpu"),
    ({"point": "gpu", "fixed": [1]}, "fixed: must be a table"),
    ({"point": "gpu", "axes": {"modl": ["gpt2"]}}, "axes.modl: gpu has no parameter 'modl'"),
    ({"point": "gpu", "fixed": {"bach": 2}, "axes": {"model": ["gpt2"]}},
     "fixed.bach: gpu has no parameter 'bach'"),
    ({"point": "gpu", "axes": {"model": ["gpt2", "gpt3"]}},
     "axes.model[1]: unknown model 'gpt3'"),
    ({"point": "gpu", "fixed": {"batch": 0}, "axes": {"model": ["gpt2"]}},
     "fixed.batch: must be an integer >= 1, not 0"),
    ({"point": "gpu", "fixed": {"batch": True}, "axes": {"model": ["gpt2"]}},
     "fixed.batch: must be an integer >= 1, not True"),
    ({"point": "gpu", "fixed": {"model": "gpt2"}, "axes": {"model": ["gpt2"]}},
     "axes.model: is also fixed"),
    ({"point": "gpu", "axes": {"model": []}}, "axes.model: is empty"),
    ({"point": "gpu", "axes": {"model": "gpt2"}}, "axes.model: must be a list of values or a range"),
    ({"point": "gpu", "axes": {"model": ["gpt2", "gpt2"]}}, "axes.model: repeats a value"),
    ({"point": "gpu", "axes": {"model": [datetime.date(2024, 1, 1)]}},
     "axes.model: holds a value that is not plain data"),
    ({"point": "gpu", "fixed": {"model": "gpt2"}, "axes": {"link_gbs": [float("inf")]}},
     "axes.link_gbs: gpu has no parameter 'link_gbs'"),
    ({"point": "tier", "fixed": {"model": "gpt2", "hbm_fraction": 0.5},
      "axes": {"link_gbs": [float("inf")]}}, "axes.link_gbs: holds a value that is not plain data"),
    ({"point": "gpu", "fixed": {"model": "gpt2"}, "axes": {"batch": {"from": 1, "to": 4}}},
     "axes.batch: a range needs exactly one of step, times, count"),
    ({"point": "gpu", "fixed": {"model": "gpt2"}, "axes": {"batch": {"to": 4, "step": 1}}},
     "axes.batch: a range needs 'from'"),
    ({"point": "gpu", "fixed": {"model": "gpt2"},
      "axes": {"batch": {"from": 1, "to": 4, "step": 1, "by": 2}}},
     "axes.batch: unknown range key 'by'"),
    ({"point": "gpu", "fixed": {"model": "gpt2"}, "axes": {"batch": {"from": 1, "to": 4, "step": -1}}},
     "axes.batch: step -1 does not lead from 1 to 4"),
    ({"point": "gpu", "fixed": {"model": "gpt2"}, "axes": {"batch": {"from": 0, "to": 4, "times": 2}}},
     "axes.batch: a geometric range needs 0 < from <= to and times > 1"),
    ({"point": "gpu", "fixed": {"model": "gpt2"}, "axes": {"batch": {"from": 1, "to": 4, "count": 0}}},
     "axes.batch: range 'count' must be an integer >= 1"),
    ({"point": "gpu", "fixed": {"model": "gpt2"},
      "axes": {"batch": {"from": 1, "to": 10 ** 9, "step": 1}}}, "axes.batch: a range of 1000000000 values"),
    ({"point": "gpu", "fixed": {"model": "gpt2"}, "axes": {"batch": {"from": 1.5, "to": 4, "step": 1}}},
     "axes.batch[0]: must be an integer >= 1, not 1.5"),
    ({"point": "gpu", "axes": {"model": ["gpt2"]}, "seeds": [1, -1]},
     "seeds: a seed must be an integer >= 0, not -1"),
    ({"point": "gpu", "axes": {"model": ["gpt2"]}, "seeds": []}, "seeds: is empty"),
    ({"point": "gpu", "axes": {"model": ["gpt2", "resnet50"], "seq_len": [64]}},
     "seq_len: resnet50 takes no sequence length (it is an image model) "
     "(at model='resnet50', seq_len=64)"),
    ({"point": "gpu", "fixed": {"calibration": "no/such.json"}, "axes": {"model": ["gpt2"]}},
     "fixed.calibration: no such file 'no/such.json'"),
    ({"point": "tier", "fixed": {"model": "gpt2"}}, "hbm_fraction, hbm_gb: give exactly one"),
    ({"point": "tier", "fixed": {"model": "gpt2", "hbm_fraction": 0.5, "hbm_gb": 2}},
     "hbm_fraction, hbm_gb: give exactly one"),
    ({"point": "tier", "fixed": {"model": "gpt2", "hbm_fraction": 0.5}, "axes": {"policy": ["lfu"]}},
     "axes.policy[0]: unknown policy 'lfu'; known: ideal, lru, uvm, deepum, g10, flashneuron, g10_gds_ssd, g10_gds_full, tm"),
    ({"point": "rtl-bench", "axes": {"slots": [16, 12]}},
     "RTL configuration: EngineConfig.slots must be a power of two in 2..64, not 12 (at slots=12)"),
    ({"point": "rtl-bench", "axes": {"lanes": [4]}},
     "lanes: the kernel library is written for 32-byte sectors (8 lanes), not 4"),
    ({"point": "rtl-bench", "fixed": {"problem": {"n": 64}}}, "problem: kernel relu_fwd is sized by elements"),
    ({"point": "rtl-bench", "fixed": {"kernel": "relu"}}, "fixed.kernel: unknown library kernel 'relu'"),
    ({"point": "rtl-bench", "fixed": {"pressure": 1.0}},
     "fixed.pressure: must be a probability in [0, 1), not 1.0"),
    ({"point": "rtl-bench", "fixed": {"kernel": "adam", "problem": {"elements": 256},
                                      "scratchpad_bytes": 256}, "axes": {"sub_cores": [1]}}, None),
]


@pytest.mark.parametrize("data, message", BAD)
def test_bad_specifications_are_refused_naming_the_key(data, message):
    if message is None:          # a configuration the library accepts: no error
        parse_spec(data, source="s.toml")
        return
    with pytest.raises(SpecError) as error:
        parse_spec(data, source="s.toml")
    assert str(error.value).startswith("s.toml: ")
    assert message in str(error.value)


def test_unknown_tier_policy_names_the_known_ones():
    with pytest.raises(SpecError, match="known: ideal, lru, uvm, deepum, g10, flashneuron, g10_gds_ssd, g10_gds_full, tm"):
        parse_spec({"point": "tier", "fixed": {"model": "gpt2", "hbm_fraction": 0.5,
                                               "policy": "fifo"}})


def test_a_file_that_is_missing_or_not_toml_is_refused(tmp_path):
    with pytest.raises(SpecError, match="no such sweep specification"):
        load_spec(tmp_path / "none.toml")
    path = tmp_path / "bad.toml"
    path.write_text('point = "gpu\n')
    with pytest.raises(SpecError, match=r"bad.toml: not TOML"):
        load_spec(path)
