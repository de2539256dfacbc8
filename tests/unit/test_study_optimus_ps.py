"""The Optimus study's two-resource experiment (planner.studies.optimus_ps): its own event loop equals
planner.replay on the one-resource setting, and Optimus' worker-or-parameter-server step, hand-computed."""

from __future__ import annotations

import pytest

from planner.studies import optimus as o
from planner.studies import optimus_ps as ps
from planner.workload.trainers import Curve, TrainerSpec

LINEAR = Curve((0, 1, 2, 3), (0.0, 10.0, 20.0, 30.0))


@pytest.mark.parametrize("policy", ["optimus", "drf"])
def test_bundles_on_one_resource_replay_as_planner_replay(policy):
    # bundles of a worker and a parameter server on 64 + 64 slots: our one-resource setting
    specs = o.workload(0, count=8)
    mine = ps.replay(specs, policy, W=64, P=64, mode="bundles")
    ref = o.replay(policy, 0, count=8)
    assert mine["mean_jct_s"] == pytest.approx(ref["mean_jct_s"], rel=1e-9)
    assert mine["makespan_s"] == pytest.approx(ref["makespan_s"], rel=1e-9)


def test_speed_is_the_measured_curve_at_one_server_per_worker():
    tab = LINEAR.table(3)
    assert [ps.speed(tab, k, k) for k in range(4)] == [0.0, 10.0, 20.0, 30.0]
    assert ps.speed(tab, 1, 2) == pytest.approx(10 * 3.25 / (1 + 2.25 / 2))


def test_optimus_adds_the_task_with_the_larger_gain_per_share_and_drf_adds_bundles():
    # one job, 100 samples, linear curve, 2 worker slots and 3 server slots, from (1, 1) at 10/s:
    # +PS (1, 2): 10 * 3.25 / 2.125 = 15.29/s, gain (10 - 6.54) * 3 slots = 10.4 > +worker (2, 1): 20 * 3.25 /
    # 5.5 = 11.8/s, gain (10 - 8.46) * 2 = 3.1; then +PS (1, 3) 18.57/s, gain (6.54 - 5.38) * 3 = 3.5 > +worker
    # (2, 2) 20/s, (6.54 - 5) * 2 = 3.1; then the last worker (2, 3), 26/s
    job = ps.Job(TrainerSpec(id="a", model="m", curve=LINEAR, work_samples=100.0, nmax=3), LINEAR.table(3), 0)
    assert ps.optimus_tasks([job], W=2, P=3) == {0: (2, 3)}
    assert ps.drf_bundles([job], W=2, P=3) == {0: (2, 2)}  # 1:1 bundles stop at the 2 worker slots
    # bundles: Optimus on one resource, as many bundles as the smaller pool
    assert ps.optimus_tasks([job], W=2, P=3, mode="bundles") == {0: (2, 2)}


def test_every_job_starts_at_one_of_each_and_the_longer_job_gets_the_spare_worker():
    a = ps.Job(TrainerSpec(id="a", model="m", curve=LINEAR, work_samples=100.0, nmax=3), LINEAR.table(3), 0)
    b = ps.Job(TrainerSpec(id="b", model="m", curve=LINEAR, work_samples=400.0, nmax=3, submit_s=1.0),
               LINEAR.table(3), 1)
    # 3 worker slots, 2 server slots: both at (1, 1); the one worker left goes to the longer job
    assert ps.optimus_tasks([a, b], W=3, P=2) == {0: (1, 1), 1: (2, 1)}


def test_placement_puts_equal_shares_on_the_fewest_servers_or_leaves_the_job_out():
    # 4 workers + 2 parameter servers on servers of 3 slots: n = 2 (2 workers + 1 PS each); 3 + 2 share no
    # divisor but 1, and 5 tasks do not fit one server of 3: left out; 1 + 1 fits one server (n = 1)
    assert ps.divisible(4, 2, 3) and not ps.divisible(3, 2, 3) and ps.divisible(1, 1, 3)
    placed = ps.place({"a": (4, 2), "b": (3, 2), "c": (1, 1)}, servers=3, slots=3)
    assert sorted(placed) == ["a", "c"]
    assert len(placed["a"]) == 2 and len(set(placed["a"])) == 2
    # c (2 tasks) goes to the third server, the only one with 2 free slots (a filled two of them)
    assert placed["c"] == [s for s in range(3) if s not in placed["a"]]
