"""`hull` (exact at scale), `dp-reduced` and `auto` against `dp` and `milp`: differential tests, the certificate,
ties, memory independent of the pool size. Big counts run under -m slow."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from planner.allocators import (
    AllocOptions,
    AllocState,
    TrainerState,
    allocate,
    auto,
    dp_reduced,
    hull,
    hull_groups,
    hull_levels,
    hull_repair,
)
from planner.allocators.base import is_feasible, level_tables, objective_of
from planner.allocators.instances import fig5_instance, random_instance
from planner.workload.trainers import Curve, imagenet_curves
from tests.helpers import EDGES, OPTION_SETS, check_result, examples, instances, same, seeds

CURVES = list(imagenet_curves().values())


def check(state, opts, against=("dp",)) -> dict:
    """hull and dp-reduced are feasible, proven optimal, equal to the references, and their
    bounds hold. Returns {name: result} of both."""
    cap, items = level_tables(state, opts)
    bounds = {"hull": hull.solve(state, opts)[2]["bound"],
              "dp-reduced": dp_reduced.solve_levels(cap, [i[1] for i in items], [i[2] for i in items])[2]["bound"]}
    refs = {name: allocate(name, state, opts) for name in against}
    out = {}
    for fast, bound in bounds.items():
        h = out[fast] = allocate(fast, state, opts)
        assert is_feasible(state, h.counts, opts.pow2)
        assert h.status == "optimal", h.message
        assert h.objective == pytest.approx(objective_of(state, h.counts, opts), rel=1e-9, abs=1e-9)
        for name, r in refs.items():
            assert same(r.objective, h.objective, 1e-9 if name == "dp" else opts.mip_gap), (fast, name, r.counts,
                                                                                               h.counts)
            # the certificate's bound is an upper bound of the true optimum
            assert bound >= r.objective - 1e-9 * max(1.0, abs(r.objective))
    return out


def big_random(seed: int, jobs: int, pool: int, held_share: float = 0.75) -> AllocState:
    """Many Trainers: shipped and own (non-concave, non-monotone) curves, Nmin 1..6, held and
    preempted nodes, Rup/Rdw 0..60 s, priorities; pool may be below the sum of the minima."""
    rng = np.random.default_rng(seed)
    nodes = rng.permutation(pool + jobs)
    pos, ts = 0, []
    for j in range(jobs):
        nmin = int(rng.integers(1, 7))
        nmax = nmin + int(rng.integers(0, 40))
        if rng.random() < 0.4:
            pts = sorted(set(int(x) for x in rng.integers(1, 50, size=4)))
            curve = Curve(tuple(pts), tuple(float(v) for v in rng.uniform(0, 5000, size=len(pts))))
        else:
            curve = CURVES[int(rng.integers(len(CURVES)))]
        c = int(rng.integers(0, nmax + 2)) if rng.random() < held_share else 0
        cur = tuple(sorted(int(x) for x in nodes[pos:pos + c]))
        pos += c
        ts.append(TrainerState(id=f"j{j}", nmin=nmin, nmax=nmax, curve=curve, current=cur,
                               rup_s=float(rng.choice([0.0, 18.0, 60.0])), rdw_s=float(rng.choice([0.0, 12.0])),
                               priority=float(rng.choice([0.5, 1.0, 2.0])), submit_s=float(rng.integers(0, 5)),
                               remaining_samples=float(rng.choice([math.inf, 1e6, 1e8]))))
    return AllocState(pool=tuple(int(x) for x in sorted(rng.permutation(pool + jobs)[:pool])), trainers=tuple(ts))


# 600 small random instances (120 seeds x 5 option sets) against dp
@pytest.mark.parametrize("seed", seeds(120))
def test_hull_matches_dp_random(seed):
    state = random_instance(5000 + seed, max_jobs=8, max_pool=40, max_nmax=12)
    for opts in OPTION_SETS:
        check(state, opts)


@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("seed", range(6))
def test_hull_edge_cases(edge, seed):
    state = random_instance(7000 + seed, max_jobs=5, max_pool=12, max_nmax=8, edge=edge)
    for opts in OPTION_SETS:
        results = check(state, opts)
        if edge in ("empty-pool", "nmin-above-pool"):
            assert all(sum(r.counts.values()) == 0 for r in results.values())


@pytest.mark.parametrize("budget", examples(150))
def test_hull_matches_dp_hypothesis(budget):
    """Equal to dp, plus every allocator invariant (capacity, bounds, no migration, Pj_max,
    objective) and determinism, for hull and auto."""
    @settings(max_examples=budget, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(instances(max_jobs=5, max_pool=14))
    def example(inst):
        state, opts = inst
        check(state, opts)
        for name in ("hull", "dp-reduced", "auto"):
            a = allocate(name, state, opts)
            check_result(state, opts, a)
            b = allocate(name, state, opts)
            assert (a.counts, a.node_map, a.objective, a.status) == (b.counts, b.node_map, b.objective, b.status)

    example()


@pytest.mark.parametrize("seed", seeds(12))
def test_hull_matches_milp(seed):
    """The independent reference: HiGHS on the count MILP, cold (it does not see dp's answer)."""
    state = random_instance(9000 + seed, max_jobs=6, max_pool=30, max_nmax=10)
    opts = OPTION_SETS[seed % len(OPTION_SETS)]
    r = allocate("milp", state, opts.with_(extra={"warm_start": False}))
    assert r.status in ("optimal", "optimal-within-gap"), r.message
    assert same(allocate("hull", state, opts).objective, r.objective, opts.mip_gap)


@pytest.mark.parametrize("seed", range(4))
def test_hull_many_trainers_pool_below_minima(seed):
    """40 Trainers with Nmin up to 6 on 30 nodes: most cannot start; some repair work."""
    state = big_random(seed, 40, 30)
    for opts in OPTION_SETS[:4]:
        check(state, opts)


@pytest.mark.parametrize("seed", range(3))
def test_hull_medium_against_dp(seed):
    state = big_random(100 + seed, 60, 600)
    for opts in (AllocOptions(), AllocOptions(objective="progress", pj_max=40), AllocOptions(pow2=True)):
        check(state, opts)


@pytest.mark.parametrize("seed", range(6))
def test_hull_wide_levels_against_dp(seed):
    """Nmax up to the pool (hundreds of levels per Trainer, long affine runs): the repair works
    on runs, not levels, and stays exact."""
    rng = np.random.default_rng(seed)
    N = 600
    ts = []
    for j in range(6):
        pts = tuple(sorted(set(int(x) for x in rng.integers(1, N, size=4))))
        curve = (Curve(pts, tuple(float(v) for v in np.cumsum(rng.uniform(0, 1000, size=len(pts)))))
                 if j % 2 else CURVES[j])
        cur = tuple(range(100 * j, 100 * j + int(rng.integers(0, 100))))
        ts.append(TrainerState(id=f"w{j}", nmin=int(rng.integers(1, 20)), nmax=N, curve=curve, current=cur,
                               rup_s=float(rng.choice([0.0, 18.0])), rdw_s=12.0))
    state = AllocState(pool=tuple(range(N)), trainers=tuple(ts))
    for opts in (AllocOptions(), AllocOptions(objective="priority", tfwd_s=30.0)):
        check(state, opts)


def test_ties_identical_trainers_deterministic():
    """Identical Trainers with a linear curve: every split is optimal; the answer is the same
    every time and in order (lower rows first)."""
    curve = Curve((0, 64), (0.0, 6400.0))
    ts = tuple(TrainerState(id=f"t{j}", nmin=2, nmax=10, curve=curve) for j in range(12))
    state = AllocState(pool=tuple(range(37)), trainers=ts)
    a = allocate("hull", state, AllocOptions())
    b = allocate("hull", state, AllocOptions())
    assert a.counts == b.counts and a.node_map == b.node_map and a.status == "optimal"
    assert sum(a.counts.values()) == 37
    assert same(a.objective, allocate("dp", state, AllocOptions()).objective, 1e-12)


def test_candidates_do_not_grow_with_pool_or_nmax():
    """Memory is Trainers x ~20 candidates: no Trainers x nodes or x levels table."""
    curve = CURVES[0]
    ts = tuple(TrainerState(id=f"t{j}", nmin=1, nmax=100_000, curve=curve, current=(j,)) for j in range(50))
    for pool in (1_000, 200_000):
        L = hull_levels.build(AllocState(pool=tuple(range(pool)), trainers=ts), AllocOptions())
        assert L.K.shape == (50, len(L.K[0])) and L.K.shape[1] <= 6 + len(curve.nodes)


def test_budget_exceeded_reports_gap(monkeypatch):
    """Past the repair budget a DP over a window of deviations runs: proven if the window cut
    nothing, else the map is feasible, not claimed optimal, the gap in the message; auto then
    falls back to dp."""
    state = fig5_instance(30, 800, 0)
    opts = AllocOptions()
    _, _, info = hull.solve(state, opts)
    assert info["proof"] == "dp"  # this instance needs the repair
    d = allocate("dp", state, opts)
    monkeypatch.setattr(hull_repair, "BUDGET", 0)
    monkeypatch.setattr(hull_repair, "MIN_WINDOW", 10 ** 6)  # a window that cuts nothing: a proof
    h = allocate("hull", state, opts)
    assert h.status == "optimal" and same(h.objective, d.objective, 1e-9), h.message
    for w in (0, 8, 64):  # windows that cut states: no claim beyond the gap
        monkeypatch.setattr(hull_repair, "MIN_WINDOW", w)
        h = allocate("hull", state, opts)
        assert is_feasible(state, h.counts) and "windowed DP" in h.message
        assert h.status in ("optimal-within-gap", "heuristic")
        assert h.objective <= d.objective + 1e-6
    monkeypatch.setattr(auto, "DP_MAX_CELLS", 0)
    a = allocate("auto", state, opts)
    assert a.allocator == "auto:dp" and a.status == "optimal" and same(a.objective, d.objective, 1e-12)


def test_sliding_max_matches_naive():
    rng = np.random.default_rng(0)
    for n, L in ((1, 1), (7, 1), (7, 3), (20, 8), (33, 33), (50, 17)):
        P = rng.normal(size=(n, 3))
        P[rng.random(P.shape) < 0.2] = -np.inf
        want = np.stack([P[i:i + L].max(axis=0) for i in range(n - L + 1)])
        assert np.array_equal(hull_groups.sliding_max(P, L), want)


@pytest.mark.slow  # 2.5 s CPU measured in the default run: the slow tier
@pytest.mark.parametrize("seed", seeds(4, 1))
def test_identical_trainers_grouped_and_exact(seed, monkeypatch):
    """Fig. 5 instances (all ShuffleNet): many tied Trainers on both ends of a gappy hull
    segment; the repair folds them into pair steps and is still exact (equal to dp)."""
    calls = []
    real = hull_groups.step
    monkeypatch.setattr(hull_groups, "step", lambda F, lo, p: calls.append(p.M) or real(F, lo, p))
    used = False
    for J, N in ((200, 2000), (400, 3000)):
        state = fig5_instance(J, N, seed)
        for opts in (AllocOptions(), AllocOptions(pow2=True), AllocOptions(objective="priority", pj_max=J // 2)):
            check(state, opts)
            used |= bool(calls)
    assert used  # the pair step ran


def test_auto_picks_by_size():
    opts = AllocOptions()
    for (J, N), want in (((10, 100), "auto:dp"), ((30, 800), "auto:dp-reduced"), ((100, 8000), "auto:hull")):
        state = fig5_instance(J, N, 1)
        r = allocate("auto", state, opts)
        assert r.allocator == want and r.status == "optimal", (J, N, r.allocator)
        assert same(r.objective, allocate("dp", state, opts).objective, 1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1000))
def test_hull_matches_dp_random_many(seed):
    state = random_instance(20000 + seed, max_jobs=12, max_pool=80, max_nmax=20)
    for opts in OPTION_SETS:
        check(state, opts)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(200))
def test_hull_matches_milp_many(seed):
    state = random_instance(40000 + seed, max_jobs=8, max_pool=60, max_nmax=12)
    for opts in OPTION_SETS:
        check(state, opts, against=("dp", "milp"))


@pytest.mark.slow
@pytest.mark.parametrize("cell", [(30, 800), (100, 2000), (300, 3000), (1000, 10000)])
@pytest.mark.parametrize("seed", range(3))
def test_hull_large_against_dp(cell, seed):
    J, N = cell
    for state in (fig5_instance(J, N, seed), big_random(seed, J, N)):
        check(state, AllocOptions())


@pytest.mark.slow  # 1.0 s CPU measured in the default run: the slow tier
def test_an_auto_replay_says_which_allocator_answered(summit_db):
    """The decisions record the allocator that answered (auto's dp, dp-reduced or hull), and the
    summary counts them; the Planner's note reads them."""
    from appkit.runs import answered_note
    from planner.scenario.record import run_scenario

    base = dict(pool="log", db=str(summit_db), start="2021-02-10 20:00:00", hours=3, pool_size=900)
    r = run_scenario(dict(base, allocator="auto"))
    by = r.summary["answered_by"]
    assert by and all(k.startswith("auto:") for k in by) and sum(by.values()) == r.summary["decisions"]
    assert set(r.decisions["allocator"]) == set(by)
    assert len(by) > 1, by  # this window has small decisions (dp) and larger ones (dp-reduced)
    note = answered_note(r.summary)
    assert note.startswith("auto answered with ") and f"of {r.summary['decisions']:,} decisions" in note
    d = run_scenario(dict(base, allocator="dp"))
    assert d.summary["answered_by"] == {"dp": d.summary["decisions"]} and answered_note(d.summary) == ""
