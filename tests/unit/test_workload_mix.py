"""The model mix (planner.workload.mix): parsing, the assignment counted by hand, and a scenario."""

from __future__ import annotations

from collections import Counter

import pytest

from planner.errors import InputError
from planner.workload import mix
from planner.workload.generators import make_workload


def test_parse_and_text_round_trip():
    e = mix.parse("ResNet18:3:4-32, shufflenet")
    assert e == [mix.MixEntry("resnet18", 3.0, 4, 32), mix.MixEntry("shufflenet", 1.0, None, None)]
    assert mix.parse(mix.to_text(e)) == e
    assert mix.parse("vgg16:2-8") == [mix.MixEntry("vgg16", 1.0, 2, 8)]
    assert mix.parse("") == [] and mix.parse(None) == []


@pytest.mark.parametrize("bad, msg", [("resnet99", "unknown model 'resnet99'"), ("vgg16:0", "positive"),
                                      ("vgg16:8-2", "Nmin <= Nmax"), ("vgg16:x", "weight must be a number"),
                                      ("vgg16,VGG16", "appears twice"), ("vgg16:a-b", "two whole numbers")])
def test_bad_mix_names_the_field(bad, msg):
    with pytest.raises(InputError, match=msg) as e:
        mix.parse(bad)
    assert e.value.field == "models"


def test_assignment_by_hand():
    # weights 3:1 over 8 Trainers: a a b a a a b a? smooth round robin gives a,a,b,a | a,a,b,a
    assert mix.assign(8, [3.0, 1.0]) == [0, 0, 1, 0, 0, 0, 1, 0]
    assert Counter(mix.assign(700, [2.0, 5.0])) == {0: 200, 1: 500}


def test_apply_sets_models_curves_and_bounds():
    specs = make_workload("hpo", count=4)
    out = mix.apply(specs, mix.parse("resnet18:3:4-32,shufflenet"))
    assert [s.model for s in out] == ["resnet18", "resnet18", "shufflenet", "resnet18"]
    assert [(s.nmin, s.nmax) for s in out] == [(4, 32), (4, 32), (1, 64), (4, 32)]
    from planner.workload.trainers import imagenet_curves

    assert out[0].curve == imagenet_curves()["resnet18"] and out[2].curve == specs[2].curve
    assert [s.submit_s for s in out] == [s.submit_s for s in specs]


def test_scenario_applies_the_mix(tiny_con):
    from planner.scenario.record import Scenario, build_pool, build_workload

    sc = Scenario.from_dict({"log": "tiny", "hours": 1, "count": 6, "models": "vgg16:2:2-8,alexnet"})
    specs = build_workload(sc, build_pool(sc, tiny_con), tiny_con)
    assert Counter(s.model for s in specs) == {"vgg16": 4, "AlexNet": 2}
    assert {(s.nmin, s.nmax) for s in specs if s.model == "vgg16"} == {(2, 8)}
    with pytest.raises(InputError) as e:
        Scenario.from_dict({"log": "tiny", "models": "nope"})
    assert e.value.field == "models"
