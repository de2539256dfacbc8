"""ReplayConfig.decide_on: "pool" decides only at the pool's events (the authors' BFTrainer replayer), by hand."""

from __future__ import annotations

import numpy as np
import pytest

from planner.replay.config import ReplayConfig
from planner.replay.pool import PoolTrace
from planner.replay.simulator import simulate
from planner.workload.trainers import Curve, TrainerSpec

LIN = Curve((0, 1, 4), (0.0, 100.0, 400.0))  # 100 samples/s per node, 1..4 nodes


def spec(i, submit, work):
    return TrainerSpec(id=f"t{i}", model="lin", curve=LIN, nmin=1, nmax=4, rup_s=10.0, rdw_s=5.0,
                       work_samples=work, submit_s=submit)


def run(decide_on):
    # nodes 0-2 idle from the start, node 3 joins at 300 s (the one pool event); window 500 s; Pj_max 1
    pool = PoolTrace(log="hand", start_s=1000.0, end_s=1500.0, nodes=4, initial_idle=np.array([0, 1, 2]),
                     times=np.array([1300.0]), joins=[np.array([3])], leaves=[np.array([], dtype=np.int64)])
    return simulate(pool, [spec(0, 0, 30000), spec(1, 50, 1e9)], "equal-share", pj_max=1, decide_on=decide_on)


def test_default_decides_at_completions_and_arrivals():
    # t=0: t0 on 3 nodes (300/s) reaches 30000 at 100 s and leaves; t1 (arrived at 50, Pj_max 1) starts
    # then on 3 nodes; at 300 it grows to 4 (Rup * O(3) = 3000 owed): 60000 + 80000 - 3000
    res = run("events")
    tr = res.trainers.set_index("id")
    assert tr.loc["t0", "end_s"] == pytest.approx(100.0)
    assert tr.loc["t1", "start_s"] == pytest.approx(100.0)
    assert res.summary["samples"] == pytest.approx(30000 + 137000)
    assert list(res.decisions["t_s"]) == pytest.approx([0.0, 50.0, 100.0, 300.0])


def test_pool_keeps_a_finished_trainers_nodes_until_the_next_pool_event():
    # t0 reaches its work at 100 s but holds its 3 nodes, producing nothing more, until the pool event at
    # 300 s, where it leaves; t1 (arrived at 50) is admitted only then and starts on all 4 nodes (a start
    # is free): 200 s x 400/s
    res = run("pool")
    tr = res.trainers.set_index("id")
    assert tr.loc["t0", "end_s"] == pytest.approx(300.0) and tr.loc["t0", "run_s"] == pytest.approx(300.0)
    assert tr.loc["t1", "start_s"] == pytest.approx(300.0) and tr.loc["t1", "queue_s"] == pytest.approx(250.0)
    s = res.summary
    assert s["samples"] == pytest.approx(30000 + 80000) and s["gross_samples"] == pytest.approx(110000)
    assert s["rescale_cost_samples"] == 0.0
    assert s["allocated_node_hours"] == pytest.approx((3 * 300 + 4 * 200) / 3600)
    assert list(res.decisions["t_s"]) == pytest.approx([0.0, 300.0]) and s["events"] == 2


def test_bad_decide_on_is_refused():
    with pytest.raises(ValueError, match="decide_on"):
        ReplayConfig(decide_on="arrivals")
    with pytest.raises(ValueError, match="cadence 'events'"):
        ReplayConfig(decide_on="pool", cadence="interval")
