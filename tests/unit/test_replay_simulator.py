"""Replays computed by hand, conservation, node-map invariants, determinism, degenerate pools."""

from __future__ import annotations

import numpy as np
import pytest

from planner.allocators.base import AllocOptions, AllocResult, AllocState
from planner.replay.metrics import integral
from planner.replay.pool import PoolTrace, fixed_pool
from planner.replay.simulator import simulate
from planner.workload.generators import make_workload
from planner.workload.trainers import Curve, TrainerSpec
from tests.helpers import examples

LIN = Curve((0, 1, 4), (0.0, 100.0, 400.0))  # 100 samples/s per node, 1..4 nodes


def spec(i, submit, work, nmin=1, nmax=4, rup=10.0, rdw=5.0, curve=LIN):
    return TrainerSpec(id=f"t{i}", model="lin", curve=curve, nmin=nmin, nmax=nmax, rup_s=rup,
                       rdw_s=rdw, work_samples=work, submit_s=submit)


def hand_pool(nodes, initial, events, T):
    times = [e[0] for e in events]
    joins = [np.asarray(e[1], dtype=np.int64) for e in events]
    leaves = [np.asarray(e[2], dtype=np.int64) for e in events]
    return PoolTrace(log="hand", start_s=1000.0, end_s=1000.0 + T, nodes=nodes,
                     initial_idle=np.asarray(initial), times=np.asarray(times, float) + 1000.0,
                     joins=joins, leaves=leaves)


def conservation(res):
    s = res.summary
    charged = s["rescale_cost_samples"] + s["preemption_cost_samples"] + s["solve_idle_cost_samples"]
    gross = integral(res.timeline, "throughput_samples_per_s", s["window_hours"] * 3600)
    assert s["gross_samples"] == pytest.approx(gross, rel=1e-9, abs=1e-6)
    assert s["samples"] == pytest.approx(gross - charged, rel=1e-9, abs=1e-6)


def test_two_trainers_by_hand():
    # t=0: A gets all 4 nodes (400/s). t=50: A has 20000; B arrives; equal share 2+2;
    # A shrinks 4->2: Rdw*O(4) = 5*400 = 2000 owed. B: 20000/200 -> done at 150.
    # A: (20000 left + 2000 owed)/200 -> 160, but at 150 B leaves: A has 38000, grows 2->4
    # (Rup*O(2) = 10*200 = 2000 owed): (2000 + 2000)/400 -> done at 160.
    pool = fixed_pool(4, 0.0, 1000.0)
    res = simulate(pool, [spec(0, 0, 40000), spec(1, 50, 20000)], "equal-share", pj_max=10)
    tr = res.trainers.set_index("id")
    assert tr.loc["t0", "end_s"] == pytest.approx(160.0)
    assert tr.loc["t1", "end_s"] == pytest.approx(150.0)
    assert tr.loc["t1", "start_s"] == 50.0 and tr.loc["t1", "queue_s"] == 0.0
    assert tr.loc["t0", "jct_s"] == pytest.approx(160.0) and tr.loc["t1", "jct_s"] == pytest.approx(100.0)
    assert list(tr["rescales"]) == [2, 0]
    s = res.summary
    assert s["events"] == 4 and s["decisions"] == 3 and s["trainers_completed"] == 2
    assert s["samples"] == pytest.approx(60000.0)
    assert s["gross_samples"] == pytest.approx(64000.0)
    assert s["rescale_cost_samples"] == pytest.approx(4000.0)
    assert s["preemption_cost_samples"] == 0.0
    assert s["allocated_node_hours"] == pytest.approx(4 * 160 / 3600)
    assert s["resource_node_hours"] == pytest.approx(4 * 1000 / 3600)
    assert s["mean_jct_s"] == pytest.approx(130.0)
    assert list(res.decisions["t_s"]) == [0.0, 50.0, 150.0]
    assert list(res.decisions["held_s"]) == pytest.approx([50.0, 100.0, 10.0])
    # ROI: decision at 50 (cost 2000): rate 400 -> 400, gain 0; at 150 (cost 2000): 200 -> 400 for 10 s
    assert s["rescale_roi"] == pytest.approx((0 * 100 + 200 * 10) / 4000)
    conservation(res)


def test_preemption_by_hand():
    # 4 nodes idle; node 3 leaves at 100, comes back at 200; window 400 s.
    pool = hand_pool(4, [0, 1, 2, 3], [(100, [], [3]), (200, [3], [])], 400)
    res = simulate(pool, [spec(0, 0, 1e9)], "equal-share", opts=AllocOptions(tfwd_s=120))
    s = res.summary
    # 0-100: 400/s = 40000; preempted: Rdw*O(4) = 2000 owed, 3 nodes; 100-200: 30000 - 2000;
    # 200: grows 3->4: Rup*O(3) = 3000 owed; 200-400: 80000 - 3000.
    assert s["samples"] == pytest.approx(145000.0)
    assert s["preemption_cost_samples"] == pytest.approx(2000.0)
    assert s["rescale_cost_samples"] == pytest.approx(3000.0)
    assert s["preemptions"] == 1 and s["pool_events"] == 2 and s["events"] == 3
    # decisions at 0, 100, 200; only the one at 0 is followed by a preemption within 120 s
    assert s["preemption_within_tfwd_share"] == pytest.approx(1 / 3)
    assert list(res.preemptions["nodes_after"]) == [3]
    assert list(res.timeline["pool_nodes"]) == [4, 3, 4, 4]
    assert s["resource_node_hours"] == pytest.approx((400 * 4 - 100) / 3600)
    conservation(res)


def test_preemption_below_nmin_drops_to_zero_and_cost_carries_over():
    pool = hand_pool(4, [0, 1, 2, 3], [(100, [], [3]), (200, [3], [])], 400)
    res = simulate(pool, [spec(0, 0, 1e9, nmin=4)], "equal-share")
    s = res.summary
    # 0-100: 40000; drops to 0 (owes 2000); idle 100-200; back at 4 nodes from 0 (free) at 200
    assert s["samples"] == pytest.approx(40000 + 400 * 200 - 2000)
    assert s["preemption_cost_samples"] == pytest.approx(2000.0)
    assert s["rescale_cost_samples"] == 0.0
    assert list(res.timeline["allocated_nodes"]) == [4, 0, 4, 4]
    conservation(res)


def test_cost_larger_than_interval_carries_over():
    # Rup huge: a grow 1->4 owes 1000*100 = 1e5 samples, paid over several intervals
    pool = hand_pool(4, [0], [(100, [1, 2, 3], [])], 400)
    res = simulate(pool, [spec(0, 0, 1e9, rup=1000.0)], "equal-share")
    s = res.summary
    # 0-100: 1 node = 10000; 100: 1->4, owes 1e5; 100-400: 400*300 = 120000 - 1e5
    assert s["samples"] == pytest.approx(10000 + 20000)
    assert s["rescale_cost_samples"] == pytest.approx(1e5)
    conservation(res)


def test_pending_cost_unpaid_at_window_end_is_incurred_not_charged():
    pool = hand_pool(4, [0], [(100, [1, 2, 3], [])], 200)
    res = simulate(pool, [spec(0, 0, 1e9, rup=1000.0)], "equal-share")
    s = res.summary
    assert s["samples"] == pytest.approx(10000.0)  # 100-200 produced 40000, all of it paid
    assert s["rescale_cost_samples"] == pytest.approx(40000.0)
    assert s["rescale_cost_incurred_samples"] == pytest.approx(1e5)
    conservation(res)


def test_pj_max_admits_fcfs_and_queue_time():
    pool = fixed_pool(4, 0.0, 1000.0)
    specs = [spec(i, 0, 40000) for i in range(3)]
    res = simulate(pool, specs, "equal-share", pj_max=2)
    tr = res.trainers.set_index("id")
    # t0, t1 share 2+2 (200/s each) -> both done at 200; then t2 alone on 4 -> done at 300
    assert tr.loc["t2", "start_s"] == pytest.approx(200.0)
    assert tr.loc["t2", "end_s"] == pytest.approx(300.0)
    assert res.summary["mean_queue_s"] == pytest.approx(200 / 3)
    assert res.summary["total_wait_s"] == pytest.approx(200.0)
    assert res.timeline["running"].max() <= 2


def test_interval_cadence_quick_start_and_ticks():
    # decisions every minute; between ticks arrivals start at once on free nodes
    pool = fixed_pool(4, 0.0, 600.0)
    specs = [spec(0, 0, 1e9, nmax=2), spec(1, 30, 1e9, nmax=4)]
    res = simulate(pool, specs, "equal-share", cadence="interval", step_min=1.0)
    tr = res.trainers.set_index("id")
    assert tr.loc["t0", "start_s"] == 0.0
    assert tr.loc["t1", "start_s"] == 30.0  # quick start on the 2 free nodes, not at the 60 s tick
    assert res.summary["quick_starts"] == 1
    assert list(res.decisions["t_s"]) == [60.0 * k for k in range(10)]


def test_interval_cadence_head_waits_when_no_free_node():
    pool = fixed_pool(4, 0.0, 300.0)
    specs = [spec(0, 0, 1e9), spec(1, 30, 1e9)]
    res = simulate(pool, specs, "equal-share", cadence="interval", step_min=1.0)
    tr = res.trainers.set_index("id")
    assert tr.loc["t1", "start_s"] == 60.0  # no free node at 30: waits for the tick
    assert tr.loc["t1", "queue_s"] == 60.0 - 30.0


def test_idle_during_solve_charges_growers():
    def slow_alloc(state, opts):
        import time as _t

        from planner.allocators import allocate
        r = allocate("equal-share", state, opts)
        _t.sleep(0.02)
        return r

    pool = fixed_pool(4, 0.0, 100.0)
    res = simulate(pool, [spec(0, 0, 1e9)], slow_alloc, idle_during_solve=True)
    wall = res.decisions["wall_s"].iloc[0]
    assert wall >= 0.02
    assert res.summary["solve_idle_cost_samples"] == pytest.approx(400 * wall)
    conservation(res)


def test_bad_allocator_is_caught():
    def thief(state: AllocState, opts):
        t = state.trainers[0]
        return AllocResult("thief", {t.id: 1}, {t.id: (99,)}, 0.0, "optimal")

    with pytest.raises(RuntimeError, match="not in the pool"):
        simulate(fixed_pool(4, 0.0, 100.0), [spec(0, 0, 1e9)], thief)

    def doubler(state: AllocState, opts):
        a, b = state.trainers[:2]
        return AllocResult("d", {a.id: 1, b.id: 1}, {a.id: (0,), b.id: (0,)}, 0.0, "optimal")

    with pytest.raises(RuntimeError, match="two Trainers"):
        simulate(fixed_pool(4, 0.0, 100.0), [spec(0, 0, 1e9), spec(1, 0, 1e9)], doubler)


def test_no_idle_node_at_all():
    pool = hand_pool(4, [], [], 500)
    res = simulate(pool, [spec(0, 0, 1e5), spec(1, 10, 1e5)], "dp")
    s = res.summary
    assert s["samples"] == 0 and s["trainers_started"] == 0 and s["resource_node_hours"] == 0
    assert s["utilization_efficiency"] is None
    assert s["mean_queue_s"] is None
    assert s["total_wait_s"] == pytest.approx(500 + 490)


def test_one_node_pool():
    pool = fixed_pool(1, 0.0, 1000.0)
    res = simulate(pool, [spec(0, 0, 50000), spec(1, 0, 40000)], "dp", pj_max=10)
    s = res.summary
    assert s["trainers_completed"] == 2
    # one Trainer at a time on the one node (100/s); whichever goes first, the second ends at 900
    assert sorted(res.trainers["end_s"].tolist())[1] == pytest.approx(900.0)
    assert res.timeline["allocated_nodes"].max() == 1
    assert s["samples"] == pytest.approx(90000.0)


def test_trainers_after_window_are_ignored():
    pool = fixed_pool(4, 0.0, 100.0)
    res = simulate(pool, [spec(0, 0, 1e9), spec(1, 100, 1e9), spec(2, 500, 1e9)], "dp")
    assert res.summary["trainers_arrived"] == 1 and res.summary["trainers_after_window"] == 2


def _random_pool(rng, nodes, T, n_events):
    idle = set(rng.choice(nodes, size=nodes // 2, replace=False).tolist())
    init = sorted(idle)
    times = np.sort(rng.choice(np.arange(1, int(T)), size=n_events, replace=False)).astype(float)
    joins, leaves = [], []
    for _ in times:
        busy = [x for x in range(nodes) if x not in idle]
        j = rng.choice(busy, size=min(len(busy), rng.integers(0, 4)), replace=False).tolist() if busy else []
        cand = sorted(idle)
        lv = rng.choice(cand, size=min(len(cand), rng.integers(0, 4)), replace=False).tolist() if cand else []
        idle.difference_update(lv)
        idle.update(j)
        joins.append(j)
        leaves.append(lv)
    return hand_pool(nodes, init, list(zip(times, joins, leaves)), T)


@pytest.mark.parametrize("allocator", ["dp", "equal-share"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_conservation_and_invariants_on_random_pools(allocator, seed):
    rng = np.random.default_rng(seed)
    pool = _random_pool(rng, 24, 3000.0, 60)
    specs = [spec(i, float(rng.uniform(0, 2500)), float(rng.uniform(2e4, 3e5)),
                  nmin=int(rng.integers(1, 3)), nmax=int(rng.integers(3, 9)),
                  curve=Curve((0, 1, 2, 4, 8), (0, 100, 190, 350, 600)))
             for i in range(12)]
    res = simulate(pool, specs, allocator, opts=AllocOptions(tfwd_s=60), pj_max=5, check=True)
    tl = res.timeline
    assert (tl["allocated_nodes"] <= tl["pool_nodes"]).all()
    assert (tl["running"] <= 5).all()
    tr = res.trainers
    assert (tr["samples"] <= tr["work_samples"] + 1e-6).all()
    assert (tr.loc[tr["completed"], "samples"] == tr.loc[tr["completed"], "work_samples"]).all()
    assert (tr["max_nodes"] <= 24).all()
    conservation(res)


def test_fixed_seed_same_result():
    pool = fixed_pool(128, 0.0, 6 * 3600.0)
    a = simulate(pool, make_workload("diverse", seed=3, count=60), "dp", pj_max=8)
    b = simulate(pool, make_workload("diverse", seed=3, count=60), "dp", pj_max=8)
    cols = ["id", "start_s", "end_s", "samples", "rescales"]
    assert a.trainers[cols].equals(b.trainers[cols])
    assert a.timeline.equals(b.timeline)
    drop = ["build_s", "solve_s", "wall_s"]
    assert a.decisions.drop(columns=drop).equals(b.decisions.drop(columns=drop))
    c = simulate(pool, make_workload("diverse", seed=4, count=60), "dp", pj_max=8)
    assert not a.trainers["submit_s"].equals(c.trainers["submit_s"])


def test_progress_called_every_percent():
    seen = []
    pool = fixed_pool(64, 0.0, 24 * 3600.0)
    simulate(pool, make_workload("hpo", count=400), "equal-share", progress=seen.append)
    assert seen[-1] == 1.0
    assert all(b >= a for a, b in zip(seen, seen[1:]))
    assert max(np.diff([0.0] + seen)) <= 0.05  # events every 36 s: progress at least every ~1 %


def test_u_matches_bftrainer_shortcut_for_identical_saturated_trainers():
    # Trainers that never finish, all submitted at the start: A_s = T * Pj_max * O(n_bar / Pj_max)
    from planner.replay.metrics import static_shortcut
    from planner.workload.trainers import imagenet_curves

    rng = np.random.default_rng(5)
    pool = _random_pool(rng, 200, 4000.0, 30)
    sh = imagenet_curves()["shufflenet"]
    specs = [TrainerSpec(id=f"x{i}", model="shufflenet", curve=sh, work_samples=1e15, submit_s=0.0)
             for i in range(15)]
    res = simulate(pool, specs, "dp", pj_max=10)
    s = res.summary
    a_s = static_shortcut(sh, pool.mean_nodes(), 4000.0, 10)
    assert s["static_samples"] == pytest.approx(a_s, rel=1e-9)
    assert s["utilization_efficiency"] == pytest.approx(s["samples"] / a_s, rel=1e-9)
    assert 0.5 < s["utilization_efficiency"] < 1.2


@pytest.mark.parametrize("allocator", ["greedy", "marginal-gain"])
def test_other_allocators_keep_the_invariants(allocator):
    rng = np.random.default_rng(7)
    pool = _random_pool(rng, 24, 3000.0, 60)
    specs = [spec(i, float(rng.uniform(0, 2500)), float(rng.uniform(2e4, 3e5)), nmax=int(rng.integers(2, 9)),
                  curve=Curve((0, 1, 2, 4, 8), (0, 100, 190, 350, 600))) for i in range(12)]
    for cadence in ("events", "interval"):
        res = simulate(pool, specs, allocator, opts=AllocOptions(tfwd_s=60), pj_max=5, cadence=cadence,
                       step_min=2.0)
        tl = res.timeline
        assert (tl["allocated_nodes"] <= tl["pool_nodes"]).all()
        conservation(res)


@pytest.mark.slow
@pytest.mark.parametrize("allocator", ["milp", "milp-node", "horizon-milp"])
def test_solver_allocators_keep_the_invariants(allocator):
    rng = np.random.default_rng(8)
    pool = _random_pool(rng, 16, 1500.0, 25)
    specs = [spec(i, float(rng.uniform(0, 1200)), float(rng.uniform(2e4, 2e5)), nmax=int(rng.integers(2, 9)),
                  curve=Curve((0, 1, 2, 4, 8), (0, 100, 190, 350, 600))) for i in range(8)]
    res = simulate(pool, specs, allocator, opts=AllocOptions(tfwd_s=60, time_limit_s=5), pj_max=4)
    assert (res.timeline["allocated_nodes"] <= res.timeline["pool_nodes"]).all()
    conservation(res)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st


@pytest.mark.parametrize("budget", examples(40))  # 10 examples in the fast tier, 40 under -m slow
def test_property_invariants(budget):
    @settings(max_examples=budget, deadline=None)
    @given(seed=st.integers(0, 10_000), nodes=st.integers(1, 12), n_events=st.integers(0, 30),
           n_tr=st.integers(0, 8), pj=st.integers(1, 4), alloc=st.sampled_from(["dp", "equal-share"]),
           cadence=st.sampled_from(["events", "interval"]))
    def check(seed, nodes, n_events, n_tr, pj, alloc, cadence):
        _invariants_hold(seed, nodes, n_events, n_tr, pj, alloc, cadence)

    check()


def _invariants_hold(seed, nodes, n_events, n_tr, pj, alloc, cadence):
    rng = np.random.default_rng(seed)
    pool = _random_pool(rng, nodes, 2000.0, n_events)
    specs = [spec(i, float(rng.uniform(0, 1900)), float(rng.uniform(1e3, 2e5)),
                  nmin=int(rng.integers(1, 3)), nmax=int(rng.integers(3, 6)),
                  rup=float(rng.uniform(0, 60)), rdw=float(rng.uniform(0, 60)))
             for i in range(n_tr)]
    res = simulate(pool, specs, alloc, opts=AllocOptions(tfwd_s=float(rng.uniform(5, 300))), pj_max=pj,
                   cadence=cadence, step_min=1.0)
    tl = res.timeline
    assert (tl["allocated_nodes"] <= tl["pool_nodes"]).all() and (tl["running"] <= pj).all()
    assert (np.diff(tl["t_s"]) >= 0).all()
    tr = res.trainers
    assert (tr["samples"] <= tr["work_samples"] * (1 + 1e-12)).all()
    if len(tr):
        assert (tr["queue_s"].dropna() >= 0).all()
    conservation(res)


def test_node_handed_from_a_later_trainer_to_an_earlier_one_still_preempts():
    # decision 1: t0 on node 0, t1 on 1,2,3; decision 2 (node 4 joins): t1 hands node 3 to t0
    # and takes 4. When node 3 leaves at 20, t0 (2 -> 1 nodes) pays Rdw * O(2) = 5 * 200.
    plan = {0.0: {"t0": (0,), "t1": (1, 2, 3)}, 10.0: {"t0": (0, 3), "t1": (1, 2, 4)}}

    def scripted(state, opts):
        m = plan.get(state.now_s) or {t.id: tuple(sorted(t.current)) for t in state.trainers}
        return AllocResult("scripted", {k: len(v) for k, v in m.items()}, m, 0.0, "optimal")

    pool = hand_pool(5, [0, 1, 2, 3], [(10, [4], []), (20, [], [3])], 100)
    res = simulate(pool, [spec(0, 0, 1e9), spec(1, 0, 1e9)], scripted)
    pre = res.preemptions
    assert list(pre["trainer"]) == ["t0"] and list(pre["nodes_after"]) == [1]
    assert res.summary["preemption_cost_incurred_samples"] == pytest.approx(5 * 200.0)
    conservation(res)
