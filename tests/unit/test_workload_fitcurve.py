"""planner fit-curve: Optimus' speed model fitted by NNLS (planner.workload.fitcurve)."""

import json

import numpy as np
import pytest

from planner.allocators.instances import load_instance
from planner.cli import main
from planner.errors import InputError
from planner.workload.fitcurve import SpeedModel, fit, fit_file
from planner.workload.trainers import imagenet_curves
from tests.helpers import seeds

TRUE = SpeedModel(a=1.0e-3, b=4.0e-5, c=5.0e-7)   # peak near sqrt(a/c) = 44.7 nodes
NODES = [1, 2, 4, 8, 16, 32]


@pytest.mark.parametrize("seed", seeds(20))
def test_recovers_the_curve_within_10_percent_from_5_percent_noise(seed):
    """Fitted values within 10 % of the true model's over the measured range (1..32 nodes,
    every count in between); extrapolation beyond it is not promised."""
    rng = np.random.default_rng(seed)
    y = TRUE.samples_per_s(NODES) * (1 + rng.uniform(-0.05, 0.05, len(NODES)))
    got = fit(NODES, y)
    at = np.arange(1, 33)
    rel = np.abs(got.samples_per_s(at) - TRUE.samples_per_s(at)) / TRUE.samples_per_s(at)
    assert rel.max() <= 0.10, (seed, rel.max(), got)


def test_exact_points_give_the_exact_parameters():
    got = fit(NODES, TRUE.samples_per_s(NODES))
    assert got.a == pytest.approx(TRUE.a, rel=1e-9)
    assert got.b == pytest.approx(TRUE.b, rel=1e-6)
    assert got.c == pytest.approx(TRUE.c, rel=1e-6)


def test_parameters_never_negative_even_for_superlinear_points():
    got = fit([1, 2, 4], [100, 250, 700])   # superlinear: no non-negative model fits exactly
    assert min(got.a, got.b, got.c) >= 0


def test_cli_writes_a_curve_an_instance_accepts(tmp_path, capsys):
    pts = tmp_path / "pts.csv"
    y = TRUE.samples_per_s(NODES)
    pts.write_text("nodes,samples_per_s\n" + "".join(f"{n},{v}\n" for n, v in zip(NODES, y)))
    out = tmp_path / "curve.json"
    assert main(["fit-curve", str(pts), "--nodes", "1,2,4,64", "--out", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["curve"]["nodes"] == [0, 1, 2, 4, 64]
    assert res["curve"]["samples_per_s"][-1] == pytest.approx(float(TRUE.samples_per_s([64])[0]), rel=1e-6)
    assert res["max_rel_error"] < 1e-9
    curve = json.loads(out.read_text())["curve"]
    inst = tmp_path / "inst.json"
    inst.write_text(json.dumps({"pool": list(range(8)), "trainers": [{"id": "t", "curve": curve, "nmax": 8}]}))
    state, _ = load_instance(inst)
    assert state.trainers[0].curve(64) == pytest.approx(res["curve"]["samples_per_s"][-1])


def test_shipped_imagenet_curves_fit_within_a_quarter():
    """The model is a fair description of BFTrainer's measured Summit curves (Table 2)."""
    for name, c in imagenet_curves().items():
        nodes = [n for n in c.nodes if n > 0]
        got = fit(nodes, [c(n) for n in nodes])
        rel = np.abs(got.samples_per_s(nodes) - np.array([c(n) for n in nodes])) / np.array([c(n) for n in nodes])
        assert rel.max() < 0.25, (name, rel.max())


@pytest.mark.parametrize("text, where", [
    ("nodes,speed\n1,2\n", "line 1, field 'samples_per_s'"),
    ("nodes,samples_per_s\n1,100\n2,x\n", "line 3, field 'samples_per_s'"),
    ("nodes,samples_per_s\n1.5,100\n", "line 2, field 'nodes'"),
    ("nodes,samples_per_s\n1,nan\n", "line 2, field 'samples_per_s'"),
    ("nodes,samples_per_s\n1,100\n2,190\n", "field 'nodes'"),            # 2 points for 3 parameters
    ('{"nodes": [1, 2], "samples_per_s": [1]}', "field 'nodes'"),
    ('{"nodes": [1, 2, 3], "samples_per_s": [1, 2, Infinity]}', "not valid JSON"),
])
def test_bad_points_one_line_naming_the_place(tmp_path, text, where):
    f = tmp_path / "p.csv"
    f.write_text(text)
    with pytest.raises(InputError) as e:
        fit_file(f)
    assert where in str(e.value) and "\n" not in str(e.value)
