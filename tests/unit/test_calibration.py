"""Calibration of P(node stays idle >= T), computed by hand on toy sets."""

from __future__ import annotations

import numpy as np
import pytest

from planner.errors import InputError
from planner.predict import calibration as cal
from planner.predict.survival import Fragments, Landmarks, SurvivalModel


def toy_model() -> SurvivalModel:
    # Cox: cumulative baseline hazard 0.1 from 10 s, 0.5 from 20 s; one covariate, coefficient 0
    # KM of fragment length: 0.8 from 10 s, 0.4 from 20 s, 0.2 from 30 s
    return SurvivalModel(coef=np.zeros(6), mean=np.zeros(6), scale=np.ones(6), h0_t=np.array([10.0, 20.0]),
                         h0=np.array([0.1, 0.5]), km_t=np.array([10.0, 20.0, 30.0]),
                         km_s=np.array([0.8, 0.4, 0.2]), prior_hist=0.0)


def toy_landmarks(ages) -> Landmarks:
    n = len(ages)
    return Landmarks(t_s=np.zeros(n), node=np.arange(n), age_s=np.asarray(ages, float), time_s=np.ones(n),
                     event=np.ones(n, bool), x=np.zeros((n, 6)))


def test_probabilities_by_hand():
    m, lm = toy_model(), toy_landmarks([10.0, 0.0, 25.0])
    # Cox: exp(-H0(15) * exp(0)) = exp(-0.1) for every row
    assert cal.p_stays(m, lm, 15.0, "cox") == pytest.approx([np.exp(-0.1)] * 3)
    # KM: S(age + 10) / S(age): 0.4 / 0.8, 0.8 / 1, 0.2 / 0.4
    assert cal.p_stays(m, lm, 10.0, "km") == pytest.approx([0.5, 0.8, 0.5])
    # naive: stays when age >= T
    assert cal.p_stays(m, lm, 10.0, "naive").tolist() == [1.0, 0.0, 1.0]


def test_scores_by_hand():
    p = [0.9, 0.9, 0.1, 0.1, 0.55]
    y = [1, 0, 0, 0, 1]
    s = cal.scores(p, y)
    # bins: 0.9 (2 rows, observed 0.5: over 0.4), 0.1 (2 rows, observed 0: over 0.1),
    # 0.55 (1 row, observed 1: under 0.45)
    assert s["over_ece"] == pytest.approx(2 / 5 * 0.4 + 2 / 5 * 0.1)
    assert s["under_ece"] == pytest.approx(1 / 5 * 0.45)
    assert s["ece"] == pytest.approx(0.29)
    assert s["brier"] == pytest.approx((0.01 + 0.81 + 0.01 + 0.01 + 0.2025) / 5)
    # said "stays" (p >= 0.5) for rows 0, 1, 4; row 1 did not stay
    assert s["false_stay_rate"] == pytest.approx(1 / 3)
    rel = cal.reliability(p, y)
    assert [(r["bin"], r["rows"], r["observed"]) for r in rel] == [(1, 2, 0.0), (5, 1, 1.0), (9, 2, 0.5)]
    # a perfectly calibrated set: ECE 0
    assert cal.scores([0.5, 0.5, 1.0], [1, 0, 1])["ece"] == pytest.approx(0.0)


def test_pool_at_least_by_hand():
    assert cal.pool_at_least([0.5, 0.5]).tolist() == pytest.approx([1.0, 0.75, 0.25])
    assert cal.pool_at_least([1.0, 0.0, 0.3]).tolist() == pytest.approx([1.0, 1.0, 0.3, 0.0])
    assert cal.guaranteed_k([0.5, 0.5], 0.9) == 0 and cal.guaranteed_k([0.5, 0.5], 0.7) == 1
    # 0.99 ** 10 = 0.904: all ten; 0.98 ** 10 = 0.817 < 0.9 <= 0.817 + 10 * 0.02 * 0.98 ** 9: nine
    assert cal.guaranteed_k([0.99] * 10, 0.9) == 10 and cal.guaranteed_k([0.98] * 10, 0.9) == 9


def test_held_out_rows_outcomes_by_hand():
    # node 0 idle [0, 1000), [3000, 3900), [4500, end); node 1 idle all the time; the log ends at 7200
    fr = Fragments(node=np.array([0, 0, 0, 1]), start=np.array([0.0, 3000.0, 4500.0, 0.0]),
                   end=np.array([1000.0, 3900.0, 7200.0, 7200.0]), closed=np.array([True, True, False, False]),
                   t0=0.0, t1=7200.0, nodes=2, st=np.array([0.0, 1000.0, 3000.0, 3900.0, 4500.0]),
                   sn=np.array([2, 1, 2, 1, 2]))
    lm, y = cal.held_out_rows(fr, toy_model(), cut_s=1200.0, t_s=600.0, step_s=600.0, max_rows=None)
    rows = sorted(zip(lm.node.tolist(), lm.t_s.tolist(), y.tolist()))
    # landmarks 1200, 1800, ..., 6600 (<= end - T); node 1 at all ten stays; node 0 at 3000 (900 s
    # left: stays), 3600 (300 s left: leaves), 4800 .. 6600 (to the end: stays)
    assert [r for r in rows if r[0] == 1] == [(1, float(t), 1.0) for t in range(1200, 6601, 600)]
    assert [r for r in rows if r[0] == 0] == [(0, 3000.0, 1.0), (0, 3600.0, 0.0), (0, 4800.0, 1.0),
                                              (0, 5400.0, 1.0), (0, 6000.0, 1.0), (0, 6600.0, 1.0)]


def test_azure_targets():
    assert cal.azure_target(5) == cal.azure_target(15) == 0.02
    assert cal.azure_target(30) == cal.azure_target(60) == 0.06


def _planner(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, text=True, timeout=900)


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_cli_calibrate_bad_t_min_is_one_line(tmp_path):
    r = _planner("calibrate", "--t-min", "5,x", "--db", str(tmp_path / "none.duckdb"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "t_min" in r.stderr


@pytest.mark.slow
def test_cli_calibrate_on_summit(summit_db):
    import json

    r = _planner("calibrate", "--db", str(summit_db), "--start", "2021-02-22T00:00:00", "--t-min", "30",
                 "--no-pool", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    (row,) = out["per_t"]
    assert row["t_min"] == 30 and row["rows"] > 1000
    for name in ("cox", "km", "naive"):
        assert 0 <= row[name]["ece"] <= 1 and 0 <= row[name]["brier"] <= 1
        assert row[name]["ece"] == pytest.approx(row[name]["over_ece"] + row[name]["under_ece"])
    # the model beats the naive rule on the Brier score
    assert row["cox"]["brier"] < row["naive"]["brier"]


def test_at_moment_per_node_and_pool_by_hand():
    # node 0 idle [0, 1000), [3000, 3900), [4500, end); node 1 idle all the time; at 3600 both are
    # idle (ages 600 and 3600 s). Toy Cox (coefficients 0): P(stays >= T) = exp(-H0(T)):
    # T = 0.1 min (6 s): H0 = 0, P = 1; T = 10 min: H0 = 0.5, P = e^-0.5 = 0.6065 for both.
    # Pool at T = 10 min: P(>= 2) = 0.368, P(>= 1) = 1 - 0.3935^2 = 0.845: k = 1 at p 0.5, 0 at 0.9.
    # Outcomes: node 0 leaves at 3900 (300 s < 600: did not stay), node 1 stays: 1 stayed.
    fr = Fragments(node=np.array([0, 0, 0, 1]), start=np.array([0.0, 3000.0, 4500.0, 0.0]),
                   end=np.array([1000.0, 3900.0, 7200.0, 7200.0]), closed=np.array([True, True, False, False]),
                   t0=0.0, t1=7200.0, nodes=2, st=np.array([0.0, 1000.0, 3000.0, 3900.0, 4500.0]),
                   sn=np.array([2, 1, 2, 1, 2]))
    out = cal.at_moment(fr, 3600.0, t_mins=(0.1, 10.0), model=toy_model())
    assert out["idle_nodes"] == 2
    assert [(n["node"], n["idle_for_s"]) for n in out["nodes"]] == [(0, 600.0), (1, 3600.0)]
    assert [n["p_10min"] for n in out["nodes"]] == pytest.approx([np.exp(-0.5)] * 2)
    assert [n["p_0.1min"] for n in out["nodes"]] == pytest.approx([1.0, 1.0])
    short, ten = out["pool"]
    assert short["at_least"] == {"0.5": 2, "0.9": 2, "0.99": 2} and short["stayed"] == 2
    assert ten["at_least"] == {"0.5": 1, "0.9": 0, "0.99": 0} and ten["stayed"] == 1
    assert ten["expected"] == pytest.approx(2 * np.exp(-0.5))
    assert cal.pool_sentence(ten, 0.5) == ("at least 1 node stays idle for 10 min with probability 0.5 "
                                           "(expected 1.2); 1 did")
    # past the end of the log the outcome is unknown
    assert cal.at_moment(fr, 7000.0, t_mins=(10.0,), model=toy_model())["pool"][0]["stayed"] is None
    with pytest.raises(InputError) as e:
        cal.at_moment(fr, 9000.0, model=toy_model())
    assert e.value.field == "at"


@pytest.mark.slow  # a planner process, the Summit fragments and one fit: ~15 s
def test_cli_calibrate_at_a_moment(summit_db):
    import json

    r = _planner("calibrate", "--db", str(summit_db), "--at", "2021-02-22T00:00:00", "--t-min", "5,30", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["at"] == "2021-02-22T00:00:00Z" and out["idle_nodes"] == len(out["nodes"]) > 0
    assert set(out["nodes"][0]) == {"node", "idle_for_s", "p_5min", "p_30min"}
    five, thirty = out["pool"]
    assert five["at_least"]["0.9"] >= thirty["at_least"]["0.9"]  # fewer stay for longer
    assert out["sentences"][1].startswith(f"at least {thirty['at_least']['0.9']:,} nodes stay idle for 30 min")
    r = _planner("calibrate", "--db", str(summit_db), "--at", "2021-02-22", "--start", "2021-02-21")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "at" in r.stderr
