"""Metric functions on hand-made records."""

from __future__ import annotations

import pandas as pd
import pytest

from planner.replay.metrics import (
    equal_shares,
    integral,
    preemption_within_share,
    queue_incl_waiting_s,
    rescale_roi,
    runtime_per_model,
    static_replay,
    static_shortcut,
)
from planner.workload.trainers import Curve, TrainerSpec

LIN = Curve((0, 1, 4), (0.0, 100.0, 400.0))


def test_equal_shares_water_fill_and_nmin():
    assert equal_shares(10, [1, 1], [64, 64]) == [5.0, 5.0]
    assert equal_shares(10, [1, 1, 1], [2, 64, 64]) == [2.0, 4.0, 4.0]
    assert equal_shares(3, [2, 2], [8, 8]) == [3.0, 0.0]  # 1.5 each would break Nmin 2
    assert equal_shares(1, [2], [8]) == [0.0]
    assert equal_shares(100, [1], [4]) == [4.0]


def test_static_replay_by_hand():
    # 4 static nodes: A (40000) alone at 0 on 4 nodes (400/s); B arrives at 50 -> 2 each;
    # B done at 150 (20000/200); A: 20000 + 100*200 = 40000 done at 150 too.
    specs = [TrainerSpec("a", "lin", LIN, work_samples=40000, nmax=4),
             TrainerSpec("b", "lin", LIN, work_samples=20000, nmax=4, submit_s=50)]
    out = static_replay(specs, 4, 1000, 10)
    assert out == {"samples": pytest.approx(60000.0), "completed": 2}
    out = static_replay(specs, 4, 100, 10)
    assert out["samples"] == pytest.approx(20000 + 50 * 400) and out["completed"] == 0


def test_static_replay_is_the_shortcut_for_identical_saturated_trainers():
    c = Curve((0, 1, 2, 4, 8, 16, 32, 64), (0, 2831, 5259, 9988, 20379, 38895, 74125, 145081))
    specs = [TrainerSpec(f"x{i}", "s", c, work_samples=1e15) for i in range(30)]
    for nbar in (10, 123.4, 640):  # n_bar / Pj_max within Nmin..Nmax, where the shortcut holds
        assert static_replay(specs, nbar, 3600, 10)["samples"] == pytest.approx(
            static_shortcut(c, nbar, 3600, 10), rel=1e-12)
    # below Nmin per Trainer the shortcut (O(0.37) each) and the replay (3 Trainers at 1.23) part
    assert static_replay(specs, 3.7, 3600, 10)["samples"] == pytest.approx(3600 * 3 * c(3.7 / 3))


def test_preemption_within_share():
    assert preemption_within_share([0, 100, 200], [100], 120) == pytest.approx(1 / 3)
    assert preemption_within_share([0, 100, 200], [250], 60) == pytest.approx(1 / 3)
    assert preemption_within_share([0, 100, 200], [], 60) == 0.0
    assert preemption_within_share([], [5], 60) is None


def test_roi_and_integral_and_runtime_per_model():
    d = pd.DataFrame({"rescale_cost_samples": [100.0, 0.0, 50.0],
                      "rate_before_samples_per_s": [10.0, 0.0, 20.0],
                      "rate_after_samples_per_s": [20.0, 5.0, 10.0], "held_s": [30.0, 9.0, 2.0]})
    assert rescale_roi(d) == pytest.approx((10 * 30 - 10 * 2) / 150)
    tl = pd.DataFrame({"t_s": [0.0, 10.0, 30.0], "x": [1.0, 2.0, 0.5]})
    assert integral(tl, "x", 40.0) == pytest.approx(10 + 40 + 5)
    tr = pd.DataFrame({"model": ["a", "a", "b", "b"], "completed": [True, True, True, False],
                       "run_s": [10.0, 20.0, 5.0, None], "jct_s": [11.0, 21.0, 6.0, None],
                       "queue_s": [1.0, 1.0, 1.0, 2.0]})
    rpm = runtime_per_model(tr).set_index("model")
    assert rpm.loc["a", "mean_run_s"] == 15.0 and rpm.loc["b", "completed"] == 1


def test_queue_incl_waiting_counts_those_still_waiting_up_to_the_window_end():
    t = pd.DataFrame({"submit_s": [0.0, 10.0, 40.0, 90.0], "start_s": [0.0, 30.0, None, None]})
    # waits: 0, 20, 100 - 40 = 60, 100 - 90 = 10 -> total 90, mean 22.5
    assert queue_incl_waiting_s(t, 100.0) == (90.0, 22.5)
    assert queue_incl_waiting_s(t.iloc[:0], 100.0) == (0.0, None)


def test_summary_arrived_started_completed_and_queue_lower_bound():
    from planner.replay.pool import fixed_pool
    from planner.replay.simulator import simulate

    # 4 nodes, Pj_max 1, each Trainer 40000 samples on 4 nodes (400/s) = 100 s; window 250 s.
    # a (submit 0) runs 0-100, b (0) 100-200, c (50) starts 200, d (60) never starts.
    specs = [TrainerSpec(i, "lin", LIN, work_samples=40000, nmax=4, rup_s=0, rdw_s=0, submit_s=sub)
             for i, sub in (("a", 0), ("b", 0), ("c", 50), ("d", 60))]
    s = simulate(fixed_pool(4, 0.0, 250.0), specs, "dp", pj_max=1).summary
    assert (s["trainers_arrived"], s["trainers_started"], s["trainers_completed"]) == (4, 3, 2)
    assert s["trainers_waiting_at_end"] == 1
    assert s["mean_queue_s"] == pytest.approx((0 + 100 + 150) / 3)  # over the started ones
    assert s["total_wait_s"] == pytest.approx(0 + 100 + 150 + 190)
    assert s["mean_queue_incl_waiting_s"] == pytest.approx((0 + 100 + 150 + 190) / 4)
    assert s["mean_queue_incl_waiting_s"] > s["mean_queue_s"]
