"""The BFTrainer study's Fig. 10 / Fig. 14 / AlexNet experiments (planner.studies.bftrainer), hand-computed on
a made-up stored result: what each experiment compares and the gap it closes (nothing replayed)."""

from __future__ import annotations

import pytest

from planner.studies import bftrainer as b


def pj_row(pj, alloc_nh, pool_nh, samples_g, run_h, idle, alex=0.4, dense=5.0):
    return {"objective": "throughput", "pj_max": pj, "completed": 600, "samples": samples_g * 1e9,
            "allocated_node_hours": alloc_nh, "resource_node_hours": pool_nh,
            "node_hours_per_g_samples": alloc_nh / samples_g, "unoccupied_share": idle, "mean_run_h": run_h,
            "per_model_run_h": {"AlexNet": alex, "DenseNet": dense}}


def result():
    return {"setting": {"pj_maxes": [5, 35]},
            # allocated per G: 100 -> 95 (-5 %); pool per G: 150 -> 95 (-36.7 %); runtime 1 -> 4 h (+300 %)
            "pjmax": [pj_row(5, 1000.0, 1500.0, 10.0, 1.0, 0.3), pj_row(35, 1425.0, 1425.0, 15.0, 4.0, 0.0)],
            "periods": {"dp": [{"U": 0.9}, {"U": 1.0}]},  # mean 0.95
            "experiment_runs": [
                {"experiment": "pj_max 5", "allocator": "dp", "periods_U": [0.8, 0.9, None],
                 "trainers_completed": 700},  # mean 0.85
                {"experiment": "complete 5", "pj_max": 5, "trainers": 10, "completed": 10, "hours": 338.0,
                 "last_end_h": 250.0, "allocated_node_hours_to_last_end": 2000.0,
                 "pool_node_hours_to_last_end": 3000.0, "mean_run_h": 1.0,
                 "per_model_run_h": {"AlexNet": 0.45, "DenseNet": 4.5}},
                {"experiment": "complete 35", "pj_max": 35, "trainers": 10, "completed": 10, "hours": 338.0,
                 "last_end_h": 200.0, "allocated_node_hours_to_last_end": 1800.0,
                 "pool_node_hours_to_last_end": 1800.0, "mean_run_h": 6.0,
                 "per_model_run_h": {"AlexNet": 0.5, "DenseNet": 40.0}},
            ]}


def test_fig10_compares_the_mean_u_per_period_with_the_papers_80_percent():
    (e,) = b.periods_experiments(result())
    assert (e["before"], e["after"], e["paper"]) == (0.95, 0.85, 0.8)
    assert e["closes"] == pytest.approx(0.1 / 0.15, abs=1e-3)  # 0.95 -> 0.85 of 0.95 -> 0.80


def test_fig14_integral_by_the_papers_definition_and_runtime_with_every_trainer_done():
    ints, runs = b.integral_experiments(result())
    by = {e["key"]: e for e in ints + runs}
    d = by["integral of |N|"]  # pool node-hours per G: 150 -> 95
    assert (d["before"], d["after"]) == (-5.0, pytest.approx(-36.7, abs=0.05))
    assert d["closes"] == pytest.approx((-36.7 + 5) / (-28 + 5), abs=2e-3)
    w = by["all complete, integral"]  # allocated node-hours to the last end: 2000 -> 1800
    assert w["after"] == -10.0 and w["closes"] == pytest.approx(5 / 23, abs=1e-3)
    r = by["all complete, runtime"]  # mean runtime over all: 1 -> 6 h (+500 %), ours +300 %
    assert (r["before"], r["after"], r["paper"]) == (300.0, 500.0, 442.0)
    assert r["closes"] == pytest.approx(200 / 142, abs=1e-3)
    assert "every Trainer completes" in r["change"]


def test_alexnet_runtime_experiment_uses_tab3_at_pj_max_5():
    (e,) = b.alexnet_experiments(result())  # only the complete run at Pj_max 5 is a Fig. 12 experiment here
    assert (e["before"], e["after"], e["paper"]) == (0.4, 0.45, 0.5) and e["unit"] == "h"
    assert e["closes"] == pytest.approx(0.5)
