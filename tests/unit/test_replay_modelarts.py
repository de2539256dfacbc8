"""ModelArts knobs in the replay: killed and bug jobs, ETA seen by the allocator, scaling delay,
and the perturbation applied through run_scenario."""

from __future__ import annotations

import pytest

from planner.allocators import allocate
from planner.allocators.base import make_result
from planner.replay.pool import fixed_pool
from planner.replay.simulator import simulate
from planner.scenario.record import Scenario, run_scenario
from planner.workload.trainers import Curve, TrainerSpec

LIN = Curve((0, 1, 4), (0.0, 100.0, 400.0))


def spec(i=0, work=40000.0, submit=0.0, **meta):
    return TrainerSpec(id=f"t{i}", model="lin", curve=LIN, nmin=1, nmax=4, rup_s=10, rdw_s=5,
                       work_samples=work, submit_s=submit, meta=meta)


def test_killed_job_leaves_at_its_fraction():
    res = simulate(fixed_pool(4, 0.0, 1000.0), [spec(kill_at_frac=0.5)], "equal-share")
    tr = res.trainers.iloc[0]
    assert tr["outcome"] == "killed" and not tr["completed"]
    assert tr["end_s"] == pytest.approx(50.0) and tr["samples"] == pytest.approx(20000.0)
    assert res.summary["trainers_killed"] == 1 and res.summary["trainers_completed"] == 0


def test_bug_job_hangs_then_leaves_after_its_eta_in_node_hours():
    # budget = seen ETA = 40000 / O(1) = 400 node-s. On 4 nodes it reaches 25 % (10000) at 25 s
    # (100 node-s used), hangs, and leaves when 400 node-s are used: 75 s later, at 100 s.
    res = simulate(fixed_pool(4, 0.0, 1000.0), [spec(hang_at_frac=0.25)], "equal-share")
    tr = res.trainers.iloc[0]
    assert tr["outcome"] == "hung" and tr["end_s"] == pytest.approx(100.0)
    assert tr["samples"] == pytest.approx(10000.0) and tr["node_s"] == pytest.approx(400.0)
    tl = res.timeline.set_index("t_s")
    assert tl.loc[25.0, "throughput_samples_per_s"] == 0.0 and tl.loc[25.0, "allocated_nodes"] == 4
    assert res.summary["trainers_hung"] == 1
    assert res.summary["gross_samples"] == pytest.approx(10000.0)


def test_allocator_sees_noisy_eta_and_running_time():
    seen = []

    def spy(state, opts):
        seen.append((state.now_s, state.trainers[0].eta_node_h, state.trainers[0].running_s))
        return allocate("equal-share", state, opts)

    pool = fixed_pool(4, 0.0, 1000.0)
    simulate(pool, [spec(0, eta_factor=2.0), spec(1, submit=50.0)], spy)
    # at 0: remaining 40000 / 100 per node-s = 400 node-s = 1/9 h, seen twice that
    assert seen[0] == (0.0, pytest.approx(2 * 400 / 3600), 0.0)
    # at 50: 20000 done, running 50 s
    assert seen[1] == (50.0, pytest.approx(2 * 200 / 3600), 50.0)


def test_scaling_delay_is_a_rescale_cost():
    res = simulate(fixed_pool(4, 0.0, 1000.0), [spec()], "equal-share", scaling_delay_s=10.0)
    # the start onto 4 nodes costs 10 s of O(4) = 4000 samples: done at (40000 + 4000) / 400
    assert res.trainers.iloc[0]["end_s"] == pytest.approx(110.0)
    assert res.summary["rescale_cost_samples"] == pytest.approx(4000.0)


def test_scaling_delay_charges_a_start_and_a_scale_up_as_the_paper_and_no_scale_down():
    """ModelArts Sec. 5.5: a job that starts or scales up stays on its current nodes for the delay, a
    scale-down is immediate. One Trainer (O(n) = 100 n, Rup 10 s, Rdw 5 s) on 1 node at 0 s, 4 at 60 s,
    2 at 120 s (a decision every minute)."""
    def plan(state, opts):
        k = 1 if state.now_s < 60 else 4 if state.now_s < 120 else 2
        return make_result("plan", state, {t.id: k for t in state.trainers}, opts, "optimal")

    res = simulate(fixed_pool(4, 0.0, 1000.0), [spec()], plan, cadence="interval", step_min=1.0,
                   scaling_delay_s=15.0)
    # start: 15 s of O(1) = 1,500; up 1 -> 4: Rup 10 s of O(1) = 1,000 and 15 s of O(4) - O(1) = 4,500;
    # down 4 -> 2: Rdw 5 s of O(4) = 2,000 and no delay. Net by 120 s: 6,000 + 24,000 - 7,000 = 23,000;
    # the remaining 17,000 and the 2,000 at 200 per s: 95 s, done at 215 s
    assert res.summary["rescale_cost_samples"] == pytest.approx(1500 + 1000 + 4500 + 2000)
    assert res.trainers.iloc[0]["end_s"] == pytest.approx(215.0)


def test_run_scenario_applies_the_perturbation():
    base = dict(pool="fixed", pool_size=64, hours=12, workload="hpo", count=40, allocator="equal-share")
    clean = run_scenario(Scenario.from_dict(base)).summary
    assert clean["trainers_killed"] == 0 and clean["trainers_hung"] == 0
    res = run_scenario(Scenario.from_dict({**base, "bug_share": 0.3, "kill_share": 0.3, "seed": 1}))
    s = res.summary
    assert s["trainers_killed"] > 0 and s["trainers_hung"] > 0
    out = res.trainers["outcome"]
    assert set(out) <= {"completed", "killed", "hung", "running", "admitted", "queued"}
