"""Workload generators and the Trainer CSV reader."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner.errors import InputError
from planner.workload.generators import IMAGENET_EPOCH_SAMPLES, make_workload
from planner.workload.trainers import imagenet_curves


def test_hpo_is_the_papers():
    w = make_workload("hpo")
    assert len(w) == 1000
    assert {s.model for s in w} == {"shufflenet"}
    assert all(s.work_samples == 1.3e8 and s.nmin == 1 and s.nmax == 64 for s in w)
    assert all(s.rup_s == 18 and s.rdw_s == 12 for s in w)
    assert [s.submit_s for s in w[:3]] == [0.0, 36.0, 72.0] and w[-1].submit_s == 999 * 36.0
    assert len({s.id for s in w}) == 1000


def test_knobs():
    w = make_workload("hpo", count=5, interarrival_s=10, rup_s=1, rdw_s=2)
    assert [s.submit_s for s in w] == [0, 10, 20, 30, 40]
    assert all(s.rup_s == 1 and s.rdw_s == 2 for s in w)
    assert make_workload("hpo", count=0) == []
    with pytest.raises(InputError, match="count"):
        make_workload("hpo", count=-1)


def test_diverse_cycles_models_with_poisson_arrivals():
    w = make_workload("diverse", seed=1, count=700)
    models = list(imagenet_curves())
    assert [s.model for s in w[:14]] == models * 2
    assert all(s.work_samples == 100 * IMAGENET_EPOCH_SAMPLES for s in w)
    gaps = np.diff([s.submit_s for s in w])
    assert (gaps >= 0).all()
    assert gaps.mean() == pytest.approx(60.0, rel=0.15)
    assert gaps.std() == pytest.approx(60.0, rel=0.2)  # exponential: std = mean
    assert [s.submit_s for s in make_workload("diverse", seed=1, count=700)] == [s.submit_s for s in w]
    assert [s.submit_s for s in make_workload("diverse", seed=2, count=700)] != [s.submit_s for s in w]


def test_philly_mapping():
    w = make_workload("philly", count=200, seed=0)
    assert len(w) == 200 and w[0].submit_s == 0.0
    for s in w:
        g, dur = s.meta["num_gpus"], s.meta["duration_s"]
        r = max(1, math.ceil(g / 6))
        assert s.nmin == 1 and s.nmax == min(64, 4 * r)
        assert s.work_samples == pytest.approx(max(1.0, dur * s.curve(g / 6)))
    w2 = make_workload("philly", count=200, seed=0, time_scale=0.5)
    assert w2[-1].submit_s == pytest.approx(0.5 * w[-1].submit_s)


def write(tmp_path, text, name="w.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_csv_ok(tmp_path):
    p = write(tmp_path, "id,model,submit_s,work_samples,nmin,nmax,rup_s,rdw_s,priority\n"
                        "b,VGG16,30,1e6,2,8,1,2,3\n"
                        "a,resnet18,0,5e5,,,,,\n")
    w = make_workload(p)
    assert [s.id for s in w] == ["a", "b"]
    b = w[1]
    assert (b.model, b.nmin, b.nmax, b.rup_s, b.rdw_s, b.priority) == ("vgg16", 2, 8, 1.0, 2.0, 3.0)
    assert w[0].nmax == 64 and w[0].rup_s == 18.0


@pytest.mark.parametrize("body,line,field", [
    ("a,vgg16,0,1e6\na,vgg16,1,1e6\n", 3, "id"),
    ("a,nosuchnet,0,1e6\n", 2, "model"),
    ("a,vgg16,-1,1e6\n", 2, "submit_s"),
    ("a,vgg16,0,zero\n", 2, "work_samples"),
    ("a,vgg16,0,0\n", 2, "work_samples"),
    ("a,vgg16,0,\n", 2, "work_samples"),
    (",vgg16,0,1\n", 2, "id"),
])
def test_csv_bad_rows(tmp_path, body, line, field):
    p = write(tmp_path, "id,model,submit_s,work_samples\n" + body)
    with pytest.raises(InputError) as e:
        make_workload(p)
    msg = str(e.value)
    assert "w.csv" in msg and f"line {line}" in msg and f"field '{field}'" in msg
    assert "\n" not in msg


def test_csv_bad_header_and_bounds(tmp_path):
    with pytest.raises(InputError, match="field 'work_samples'"):
        make_workload(write(tmp_path, "id,model,submit_s\na,vgg16,0\n"))
    with pytest.raises(InputError, match="field 'colour'"):
        make_workload(write(tmp_path, "id,model,submit_s,work_samples,colour\na,vgg16,0,1,red\n"))
    with pytest.raises(InputError, match="line 2.*field 'nmax'"):
        make_workload(write(tmp_path, "id,model,submit_s,work_samples,nmin,nmax\na,vgg16,0,1,4,2\n"))
    with pytest.raises(InputError, match="field 'nmin'"):
        make_workload(write(tmp_path, "id,model,submit_s,work_samples,nmin\na,vgg16,0,1,1.5\n"))
    with pytest.raises(InputError, match="line 1"):
        make_workload(write(tmp_path, ""))
    with pytest.raises(InputError, match="not found"):
        make_workload(str(tmp_path / "missing.csv"))
    with pytest.raises(InputError, match="field 'workload'"):
        make_workload("hpx")


def test_workload_file_must_be_a_regular_bounded_file(tmp_path):
    """`planner simulate --workload /dev/zero` (or a directory) is one line, not an unbounded read."""
    from planner.errors import InputError
    from planner.workload.generators import make_workload

    for path in ("/dev/zero", str(tmp_path)):
        with pytest.raises(InputError, match="not a regular file"):
            make_workload(path)
