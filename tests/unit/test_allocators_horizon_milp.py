"""horizon-milp (ModelArts' rolling-horizon MILP): hand-solved cases and invariants."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.allocators import allocate as allocate_by_name
from planner.allocators.base import AllocOptions, AllocState, TrainerState
from planner.allocators.horizon_milp import (
    allocate,
    demand_and_rates,
    modelarts_rate_node_h,
    plan,
    pow2_levels,
)
from planner.workload.generators import perturb_workload
from planner.workload.trainers import Curve, TrainerSpec, imagenet_curves
from tests.helpers import ROOT, examples

# Two jobs, pool of 2 nodes, two steps of 1 minute. Progress per step (samples) = O(k) * 60.
#   A: O(1)=1, O(2)=2   -> 60 / 120 samples per step; demand 120 -> fractions 0.5 / 1.0
#   B: O(1)=1, O(2)=1.5 -> 60 / 90 samples per step;  demand 240 -> fractions 0.25 / 0.375
# Objective sum_i sum_t u_i^t (u = cumulative progress / demand, capped at 1).
# Enumerating the step-1 choices (A,B) with the best step 2 for each:
#   (2,0): uA = 1, 1; step 2 (0,2): uB = 0, .375          -> 2.375   (the optimum)
#   (1,1): uA = .5, 1; uB = .25, .5  with step 2 (1,1)     -> 2.25
#   (0,2): uB = .375, then (2,0): uA = 0, 1; uB .375, .375 -> 1.75
# If B already runs (holds a node), it must keep >= 1 node while unfinished: step 1 (2,0) is
# out and (1,1),(1,1) with 2.25 is the optimum.
CA = Curve((0, 1, 2), (0.0, 1.0, 2.0))
CB = Curve((0, 1, 2), (0.0, 1.0, 1.5))
OPTS = AllocOptions(horizon_steps=2, step_min=1.0)


def _a(**kw):
    return TrainerState("A", 1, 2, CA, remaining_samples=120.0, **kw)


def _b(**kw):
    return TrainerState("B", 1, 2, CB, remaining_samples=240.0, **kw)


def test_two_jobs_two_steps_by_hand():
    state = AllocState(pool=(0, 1), trainers=(_a(), _b()))
    p = plan(state, OPTS)
    assert p.status == "optimal"
    assert p.objective == pytest.approx(2.375, abs=1e-7)
    assert p.counts == [{"A": 2, "B": 0}, {"A": 0, "B": 2}]
    assert p.progress[0] == pytest.approx({"A": 1.0, "B": 0.0}, abs=1e-7)
    assert p.progress[1] == pytest.approx({"A": 1.0, "B": 0.375}, abs=1e-7)
    res = allocate(state, OPTS)
    assert res.counts == {"A": 2, "B": 0}
    assert res.node_map == {"A": (0, 1), "B": ()}
    # the common unit: BFTrainer's objective of the counts, T_fwd * O_A(2) = 120 * 2 (nothing held
    # before, so no rescale cost); the plan's own objective is in the details
    assert res.objective == pytest.approx(240.0)
    assert res.details["plan_objective"] == pytest.approx(2.375, abs=1e-7)
    assert res.allocator == "horizon-milp"


def test_running_job_keeps_its_minimum_by_hand():
    state = AllocState(pool=(0, 1), trainers=(_a(), _b(current=(1,))))
    p = plan(state, OPTS)
    assert p.objective == pytest.approx(2.25, abs=1e-7)
    assert p.counts == [{"A": 1, "B": 1}, {"A": 1, "B": 1}]
    res = allocate(state, OPTS)
    assert res.node_map == {"A": (0,), "B": (1,)}  # B keeps node 1: no migration


def test_registered_and_modelarts_speed_rule_by_hand():
    # One job, ETA 1 node-hour, 30-minute steps, pool 4: rates p*k*0.8^log2 k with p = 0.5 h:
    # k=1: .5, k=2: .8, k=4: 1.28 node-hours (>= 1: done within one step, so 8 is pointless).
    # Two steps: best is any level finishing in step 1 -> u = 1, 1 -> objective 2; the fewest
    # nodes that finish in step 1 is 4. (k=2 then k=2: .8, 1 -> 1.8.)
    t = TrainerState("J", 1, 8, CA, eta_node_h=1.0)
    opts = AllocOptions(horizon_steps=2, step_min=30.0, speed_rule="modelarts")
    assert modelarts_rate_node_h(4, 0.5) == pytest.approx(0.5 * 4 * 0.64)
    res = allocate_by_name("horizon-milp", AllocState(pool=(0, 1, 2, 3), trainers=(t,)), opts)
    assert res.status == "optimal"
    assert res.counts == {"J": 4}
    assert res.details["plan_objective"] == pytest.approx(2.0, abs=1e-7)
    assert res.objective == pytest.approx(120 * 2.0)  # T_fwd * O(4); the curve is flat past 2 nodes


def test_curve_demand_reads_the_eta_when_given():
    t = TrainerState("A", 1, 2, CA, remaining_samples=120.0)
    d, rates = demand_and_rates(t, [1, 2], OPTS)
    assert d == 120.0 and rates == [60.0, 120.0]
    noisy = TrainerState("A", 1, 2, CA, remaining_samples=120.0, eta_node_h=1.5 * 120.0 / 3600.0)
    d, _ = demand_and_rates(noisy, [1, 2], OPTS)
    assert d == pytest.approx(180.0)  # the ETA's +50 % error reaches the model


def _random_state(rng: random.Random, jobs: int, pool: int) -> AllocState:
    curves = list(imagenet_curves().values())
    used, trs = 0, []
    for j in range(jobs):
        k = rng.choice([0, 0, 1, 2, 4, 8])
        cur = tuple(range(used, used + k)) if used + k <= pool else ()
        used += len(cur)
        nmin = rng.choice([1, 1, 2, 3])
        trs.append(TrainerState(f"j{j}", nmin, rng.choice([4, 8, 16, 64]), rng.choice(curves),
                                current=cur, remaining_samples=rng.uniform(1e5, 3e7),
                                submit_s=float(j)))
    return AllocState(pool=tuple(range(pool)), trainers=tuple(trs))


@pytest.mark.parametrize("seed", range(6))
def test_powers_of_two_bounds_and_capacity_in_every_step(seed):
    rng = random.Random(seed)
    state = _random_state(rng, jobs=rng.randint(2, 8), pool=rng.choice([5, 12, 30]))
    opts = AllocOptions(horizon_steps=4, step_min=5.0, mip_gap=1e-4, time_limit_s=20)
    p = plan(state, opts)
    assert p.status in ("optimal", "optimal-within-gap")
    P = len(state.pool)
    by_id = {t.id: t for t in state.trainers}
    for step in p.counts:
        assert sum(step.values()) <= P
        for tid, k in step.items():
            if k:
                assert k & (k - 1) == 0, (tid, k)
                assert by_id[tid].nmin <= k <= min(by_id[tid].nmax, P)
    # progress is cumulative and never beyond the demand
    for tid in by_id:
        us = [pr[tid] for pr in p.progress]
        assert all(0 <= x <= 1 + 1e-9 for x in us)
        assert all(b >= a - 1e-9 for a, b in zip(us, us[1:]))
    res = allocate(state, opts)
    assert res.counts == p.counts[0]
    for tid, nodes in res.node_map.items():
        assert len(nodes) == res.counts[tid]
        assert set(nodes) <= set(state.pool)
        held = set(by_id[tid].current)
        assert held <= set(nodes) or set(nodes) <= held  # no migration
    flat = [x for nodes in res.node_map.values() for x in nodes]
    assert len(flat) == len(set(flat))


def test_capacity_binds_per_step():
    # Three identical 1-node jobs that each need two node-steps (0.5 of the demand per step);
    # pool 2, three steps. A node-step in step t adds 0.5 to u in steps t..3, i.e. is worth
    # 1.5 / 1.0 / 0.5 for t = 1 / 2 / 3. Per-step capacity 2: the best uses both nodes in every
    # step (each job twice, e.g. {1,2},{1,3},{2,3}): 2*1.5 + 2*1.0 + 2*0.5 = 6.0. Without the
    # per-step limit (6 node-steps in total) all three would run in steps 1 and 2: 7.5.
    c = Curve((0, 1), (0.0, 1.0))
    trs = tuple(TrainerState(f"j{i}", 1, 1, c, remaining_samples=120.0) for i in range(3))
    p = plan(AllocState(pool=(0, 1), trainers=trs), AllocOptions(horizon_steps=3, step_min=1.0))
    assert p.objective == pytest.approx(6.0, abs=1e-7)
    assert [sum(s.values()) for s in p.counts] == [2, 2, 2]
    assert all(sum(p.counts[t][j.id] for t in range(3)) == 2 for j in trs)


def test_levels_are_powers_of_two_within_bounds():
    t = TrainerState("x", 3, 40, CA)
    assert pow2_levels(t, 100) == [4, 8, 16, 32]
    assert pow2_levels(t, 10) == [4, 8]
    assert pow2_levels(t, 3) == []


def test_no_room_no_model():
    t = TrainerState("x", 4, 8, CA, remaining_samples=10.0, current=(0,))
    res = allocate(AllocState(pool=(0, 1), trainers=(t,)), OPTS)
    assert res.counts == {"x": 0} and res.status == "optimal"


@pytest.mark.slow  # 0.9 s CPU measured in the default run: the slow tier
def test_fallback_keeps_current_when_no_feasible_point_in_time():
    # 120 jobs, no warm start and a 1 ms limit: HiGHS stops before any feasible point; the
    # allocator keeps every Trainer's current nodes (trimmed to powers of two).
    rng = random.Random(7)
    curves = list(imagenet_curves().values())
    trs, used = [], 0
    for j in range(120):
        k = rng.choice([1, 2, 3])
        cur = tuple(range(used, used + k)) if used + k <= 200 else ()
        used += len(cur)
        trs.append(TrainerState(f"j{j}", 1, 64, rng.choice(curves), current=cur,
                                remaining_samples=rng.uniform(1e5, 5e7)))
    state = AllocState(pool=tuple(range(200)), trainers=tuple(trs))
    opts = AllocOptions(time_limit_s=1e-3, extra={"warm_start": False})
    res = allocate(state, opts)
    assert res.status == "fallback"
    for t in trs:
        c = len(t.current)
        want = 2 if c == 3 else c  # 3 is not a power of two: trimmed to 2
        assert res.counts[t.id] == want
        assert set(res.node_map[t.id]) <= set(t.current)
    # with the warm start the same time limit still yields a feasible plan
    res = allocate(state, AllocOptions(time_limit_s=1e-3))
    assert res.status in ("time-limit-feasible", "optimal", "optimal-within-gap")
    assert sum(res.counts.values()) <= 200


def test_time_limit_feasible_is_at_least_the_greedy_start(monkeypatch):
    import pyomo.environ as pyo

    from planner.allocators import horizon_milp

    real, start = horizon_milp._solve, []

    def spy(m, *a, **k):  # the model's objective at the greedy MIP start, before HiGHS runs
        start.append(pyo.value(m.obj))
        return real(m, *a, **k)

    monkeypatch.setattr(horizon_milp, "_solve", spy)
    rng = random.Random(11)
    state = _random_state(rng, jobs=40, pool=70)
    quick = allocate(state, AllocOptions(time_limit_s=0.05, mip_gap=1e-9))
    assert quick.status in ("time-limit-feasible", "optimal", "optimal-within-gap")
    assert sum(quick.counts.values()) <= 70
    assert len(start) == 1 and start[0] > 0
    assert quick.details["plan_objective"] >= start[0] - 1e-6


def test_perturb_workload_is_seeded_and_disjoint():
    specs = [TrainerSpec(id=f"s{i}", model="m", curve=CA, work_samples=100.0, eta_node_h=2.0)
             for i in range(400)]
    a = perturb_workload(specs, eta_noise=0.2, bug_share=0.1, kill_share=0.2, seed=5)
    b = perturb_workload(specs, eta_noise=0.2, bug_share=0.1, kill_share=0.2, seed=5)
    assert [s.meta for s in a] == [s.meta for s in b]
    assert all(0.8 <= s.meta["eta_factor"] <= 1.2 for s in a)
    assert all(s.eta_node_h == pytest.approx(2.0 * s.meta["eta_factor"]) for s in a)
    bugs = sum("hang_at_frac" in s.meta for s in a)
    kills = sum("kill_at_frac" in s.meta for s in a)
    assert not any("hang_at_frac" in s.meta and "kill_at_frac" in s.meta for s in a)
    assert 20 <= bugs <= 65 and 50 <= kills <= 115
    assert all(s.meta == {} for s in specs)  # inputs untouched
    with pytest.raises(ValueError):
        perturb_workload(specs, bug_share=0.7, kill_share=0.5)


@pytest.mark.parametrize("seed", range(5))
def test_aggregation_of_one_step_jobs_is_exact(seed):
    # many jobs that finish inside one step (aggregated into counts per level) next to longer
    # ones: the aggregated model reaches the same optimum as one binary per job and step
    rng = random.Random(100 + seed)
    curves = list(imagenet_curves().values())
    trs, used, P = [], 0, rng.choice([6, 9, 12])
    for j in range(rng.randint(5, 10)):
        c = rng.choice(curves)
        short = rng.random() < 0.6
        rem = c(1) * 300.0 * (rng.uniform(0.2, 0.9) if short else rng.uniform(1.5, 6.0))
        k = rng.choice([0, 0, 1, 2])
        cur = tuple(range(used, used + k)) if used + k <= P else ()
        used += len(cur)
        trs.append(TrainerState(f"j{j}", rng.choice([1, 1, 2]), rng.choice([2, 4, 8]), c, current=cur,
                                remaining_samples=rem, submit_s=float(j)))
    state = AllocState(pool=tuple(range(P)), trainers=tuple(trs))
    opts = AllocOptions(horizon_steps=3, step_min=5.0, mip_gap=1e-9, time_limit_s=30)
    agg = plan(state, opts)
    flat = plan(state, opts.with_(extra={"aggregate": False}))
    assert agg.status == flat.status == "optimal"
    assert agg.objective == pytest.approx(flat.objective, abs=1e-6)
    for step in agg.counts:
        assert sum(step.values()) <= P


def test_spare_nodes_rules():
    # one job that finishes inside the step on 1 node; pool 4: the objective is the same on
    # 1, 2 or 4 nodes. 'fewest' keeps 1, 'spread' doubles it while nodes are spare (4).
    c = Curve((0, 1, 2, 4), (0.0, 1.0, 1.8, 3.2))
    t = TrainerState("a", 1, 4, c, remaining_samples=30.0, current=(0,))
    state = AllocState(pool=(0, 1, 2, 3), trainers=(t,))
    few = allocate(state, OPTS.with_(extra={"spare_nodes": "fewest"}))
    spread = allocate(state, OPTS.with_(extra={"spare_nodes": "spread"}))
    assert few.counts == {"a": 1} and spread.counts == {"a": 4}
    assert few.details["plan_objective"] == pytest.approx(spread.details["plan_objective"]) == pytest.approx(2.0)
    # BFTrainer's objective tells them apart: 120 * O(1) vs 120 * O(4) - Rup * O(1) = 384 - 18
    assert few.objective == pytest.approx(120.0) and spread.objective == pytest.approx(366.0)
    assert spread.node_map["a"] == (0, 1, 2, 3)


# property test (hypothesis): feasible, powers of two, no migration, deterministic

@st.composite
def _instances(draw):
    pool = draw(st.integers(0, 16))
    curves = list(imagenet_curves().values())
    n = draw(st.integers(0, 6))
    free = list(range(pool + 3))  # current nodes may include ids that left the pool
    trs = []
    for j in range(n):
        nmin = draw(st.integers(1, 4))
        nmax = draw(st.integers(nmin, 32))
        k = draw(st.integers(0, 4))
        cur, free = tuple(free[:k]), free[k:]
        rem = draw(st.floats(1e3, 1e8))
        eta = draw(st.one_of(st.none(), st.floats(1e-3, 50.0)))
        trs.append(TrainerState(f"t{j}", nmin, nmax, curves[draw(st.integers(0, len(curves) - 1))],
                                current=cur, remaining_samples=rem, eta_node_h=eta, submit_s=float(j)))
    rule = draw(st.sampled_from(["curve", "modelarts"]))
    steps = draw(st.integers(1, 4))
    return AllocState(pool=tuple(range(pool)), trainers=tuple(trs)), AllocOptions(
        horizon_steps=steps, step_min=draw(st.sampled_from([1.0, 5.0, 30.0])), speed_rule=rule,
        mip_gap=1e-6, time_limit_s=20)


@pytest.mark.parametrize("budget", examples(40))
def test_property_feasible_pow2_no_migration_deterministic(budget):
    @settings(max_examples=budget, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_instances())
    def example(inst):
        state, opts = inst
        res = allocate(state, opts)
        assert res.status in ("optimal", "optimal-within-gap", "time-limit-feasible", "fallback")
        pool = set(state.pool)
        used = [x for nodes in res.node_map.values() for x in nodes]
        assert len(used) == len(set(used)) and set(used) <= pool
        for t in state.trainers:
            k = res.counts[t.id]
            assert len(res.node_map[t.id]) == k
            if k:
                assert k & (k - 1) == 0 and t.nmin <= k <= t.nmax
            held = set(t.current) & pool
            got = set(res.node_map[t.id])
            assert held <= got or got <= held
        again = allocate(state, opts)
        assert again.counts == res.counts and again.node_map == res.node_map

    example()


# ---------------------------------------------------------------------------
# the common unit: AllocResult.objective is BFTrainer's objective of the counts, as for dp

EXAMPLE = ROOT / "examples" / "instance.json"


def test_cli_allocate_horizon_milp_objective_is_no_higher_than_dp(capsys):
    import json

    from planner import cli
    from planner.allocators.base import objective_of
    from planner.allocators.instances import load_instance

    out = {}
    for name in ("dp", "horizon-milp"):
        assert cli.main(["allocate", "--instance", str(EXAMPLE), "--allocator", name, "--json"]) == 0
        out[name] = json.loads(capsys.readouterr().out)
    h, d = out["horizon-milp"], out["dp"]
    assert d["status"] == "optimal" and h["status"] in ("optimal", "optimal-within-gap")
    assert h["objective"] <= d["objective"] + 1e-9 * abs(d["objective"])
    state, file_opts = load_instance(EXAMPLE)
    assert h["objective"] == pytest.approx(objective_of(state, h["counts"], AllocOptions(**file_opts)))
    assert 0 < h["details"]["plan_objective"] <= h["details"]["plan_steps"] * len(state.trainers)
    assert "details" not in d


@pytest.mark.parametrize("seed", range(8))
def test_objective_in_bftrainer_units_never_beats_dp(seed):
    from planner.allocators.base import objective_of
    from planner.allocators.instances import fig5_instance

    rng = random.Random(500 + seed)
    if seed % 2:
        state = fig5_instance(jobs=rng.randint(3, 12), pool=rng.choice([16, 40, 100]), seed=seed)
    else:
        state = _random_state(rng, jobs=rng.randint(2, 10), pool=rng.choice([6, 20, 48]))
    opts = AllocOptions(objective=rng.choice(["throughput", "priority", "progress"]),
                        tfwd_s=rng.choice([30.0, 120.0, 600.0]), pj_max=rng.choice([None, 4]),
                        horizon_steps=3, step_min=5.0, mip_gap=1e-6, time_limit_s=20)
    h = allocate_by_name("horizon-milp", state, opts)
    d = allocate_by_name("dp", state, opts)
    assert h.objective == pytest.approx(objective_of(state, h.counts, opts), rel=1e-12, abs=1e-9)
    assert h.objective <= d.objective + 1e-9 * max(abs(d.objective), 1.0)


def test_early_finish_prefers_the_level_that_finishes_sooner_inside_the_step():
    """One waiting job that finishes inside a 5-minute step on 1 node (240 s) or 2 nodes (120 s):
    the paper's objective is indifferent (ties broken to the fewest nodes); early_finish takes 2."""
    from planner.allocators.horizon_milp import plan
    from planner.workload.trainers import Curve as C

    lin = C((0, 1, 2), (0.0, 100.0, 200.0))
    tr = TrainerState(id="a", nmin=1, nmax=2, curve=lin, remaining_samples=24_000.0)
    st = AllocState(pool=(0, 1), trainers=(tr,))
    base = AllocOptions(horizon_steps=3, step_min=5.0, extra={"spare_nodes": "none"})
    assert plan(st, base).counts[0]["a"] == 1
    early = plan(st, base.with_(extra={"spare_nodes": "none", "early_finish": True}))
    assert early.counts[0]["a"] == 2
    # objective: 3 steps of u = 1, plus the unused half of step 1 (1 - 24,000 / 60,000 = 0.6)
    assert early.objective == pytest.approx(3.6)
