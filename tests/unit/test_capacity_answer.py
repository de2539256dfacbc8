"""The Planner's capacity answer (planner.report.capacity.answer), by hand. Issue 25: "node-hours and
samples delivered per week for this pool, jobs completed per week, queueing median and p95"."""

from __future__ import annotations

import pandas as pd
import pytest

from planner.report import capacity


def test_capacity_answer_by_hand():
    # 24 h scaled to a week: x7; queueing over the Trainers that started (NaN: still waiting)
    s = {"window_hours": 24.0, "resource_node_hours": 100.0, "allocated_node_hours": 80.0, "samples": 2e9,
         "trainers_completed": 3, "trainers_arrived": 5, "trainers_waiting_at_end": 1}
    trainers = pd.DataFrame({"queue_s": [0.0, 60.0, 120.0, 600.0, float("nan")]})
    a = capacity.answer(s, trainers)
    assert a["harvestable_node_hours_per_week"] == pytest.approx(700.0)
    assert a["delivered_node_hours_per_week"] == pytest.approx(560.0)
    assert a["samples_per_week"] == pytest.approx(14e9) and a["jobs_completed_per_week"] == pytest.approx(21.0)
    assert a["queue_median_s"] == pytest.approx(90.0)  # of 0, 60, 120, 600
    assert a["queue_p95_s"] == pytest.approx(528.0)  # linear between 120 and 600 at 0.95 * 3
    assert a["scaled_from_hours"] == 24.0 and a["trainers_waiting_at_end"] == 1


def test_capacity_answer_of_a_week_and_of_nothing():
    a = capacity.answer({"window_hours": 168.0, "resource_node_hours": 5.0}, None)
    assert a["harvestable_node_hours_per_week"] == 5.0 and a["scaled_from_hours"] is None
    assert a["queue_median_s"] is None and a["delivered_node_hours_per_week"] is None
    empty = capacity.answer({}, None)
    assert empty["harvestable_node_hours_per_week"] is None and empty["window_hours"] == 0.0


def test_demand_limited_when_every_trainer_completed_well_before_the_end():
    # a finite workload on a fixed pool: all 3 arrived Trainers done 10 h into a 24 h window (ends in
    # seconds from the window start): the delivered figures are the workload's, and the answer says so
    s = {"window_hours": 24.0, "trainers_completed": 3, "trainers_arrived": 3, "trainers_waiting_at_end": 0}
    t = pd.DataFrame({"queue_s": [0.0, 0.0, 0.0], "end_s": [3600.0, 7200.0, 36000.0]})
    assert capacity.answer(s, t)["demand_done_h"] == pytest.approx(10.0)
    # the last end inside the window's last 5 % (23.5 h of 24): demand kept the pool busy to the end
    late = t.assign(end_s=[3600.0, 7200.0, 23.5 * 3600])
    assert capacity.answer(s, late)["demand_done_h"] is None
    # one Trainer not completed (still running, waiting or dropped): not demand-limited by this rule
    assert capacity.answer(dict(s, trainers_completed=2), t)["demand_done_h"] is None
    assert capacity.answer(dict(s, trainers_waiting_at_end=1), t)["demand_done_h"] is None
    assert capacity.answer(s, None)["demand_done_h"] is None
