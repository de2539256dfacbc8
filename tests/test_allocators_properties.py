"""Property tests (hypothesis) for every allocator: capacity, bounds, no migration, determinism."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.allocators import AllocOptions, AllocState, TrainerState, allocate
from planner.allocators.base import STATUSES, objective_of
from planner.workload.trainers import Curve, imagenet_curves

FAST = ["dp", "equal-share", "greedy", "marginal-gain"]
MILPS = ["milp", "milp-node"]
CURVES = list(imagenet_curves().values())


@st.composite
def instances(draw, max_jobs=4, max_pool=12):
    P = draw(st.integers(0, max_pool))
    universe = P + 4
    pool = sorted(draw(st.sets(st.integers(0, universe - 1), min_size=P, max_size=P)))
    J = draw(st.integers(1, max_jobs))
    taken: set[int] = set()
    trainers = []
    for j in range(J):
        nmin = draw(st.integers(1, 4))
        nmax = draw(st.integers(nmin, nmin + 8))
        kind = draw(st.sampled_from(["shipped", "own", "flat", "zero"]))
        if kind == "shipped":
            curve = draw(st.sampled_from(CURVES))
        elif kind == "own":
            pts = sorted(draw(st.sets(st.integers(1, 12), min_size=1, max_size=4)))
            vals = draw(st.lists(st.floats(0, 5000, allow_nan=False), min_size=len(pts), max_size=len(pts)))
            curve = Curve(tuple(pts), tuple(vals))  # may be non-monotone and non-concave
        elif kind == "flat":
            v = draw(st.floats(1, 5000))
            curve = Curve((0, 1, 64), (0.0, v, v))
        else:
            curve = Curve((0, 1), (0.0, 0.0))
        # current nodes: some in the pool, some gone (preempted), disjoint across Trainers
        cand = [x for x in range(universe) if x not in taken]
        cur = draw(st.lists(st.sampled_from(cand), unique=True, max_size=min(len(cand), nmax + 2))) if cand else []
        taken.update(cur)
        trainers.append(TrainerState(
            id=f"t{j}", nmin=nmin, nmax=nmax, curve=curve, current=tuple(sorted(cur)),
            rup_s=draw(st.sampled_from([0.0, 1.0, 18.0, 60.0])), rdw_s=draw(st.sampled_from([0.0, 12.0, 40.0])),
            remaining_samples=draw(st.sampled_from([math.inf, 1e4, 1e6, 1e8])),
            priority=draw(st.sampled_from([0.5, 1.0, 2.0])), submit_s=float(draw(st.integers(0, 3))),
            running_s=float(draw(st.integers(0, 100))),
        ))
    opts = AllocOptions(
        tfwd_s=draw(st.sampled_from([1.0, 120.0, 600.0])),
        objective=draw(st.sampled_from(["throughput", "scaling-efficiency", "priority", "progress"])),
        pow2=draw(st.booleans()),
        pj_max=draw(st.sampled_from([None, None, 1, 2])),
        time_limit_s=20.0,
    )
    return AllocState(pool=tuple(pool), trainers=tuple(trainers)), opts


def check_result(state: AllocState, opts: AllocOptions, res) -> None:
    pool = set(state.pool)
    assert res.status in STATUSES
    assert set(res.counts) == {t.id for t in state.trainers}
    # capacity: a node serves at most one Trainer, only pool nodes are used
    used = [n for nodes in res.node_map.values() for n in nodes]
    assert len(used) == len(set(used))
    assert set(used) <= pool
    assert sum(res.counts.values()) <= len(pool)
    running = 0
    for t in state.trainers:
        k = res.counts[t.id]
        assert len(res.node_map[t.id]) == k
        # bounds: 0 or Nmin..Nmax, powers of two with pow2
        assert k == 0 or t.nmin <= k <= t.nmax
        if opts.pow2 and k:
            assert k & (k - 1) == 0
        running += k > 0
        # no migration: only grow (keep all held pool nodes) or only shrink (take no new node)
        mine, held = set(res.node_map[t.id]), set(t.current) & pool
        assert mine >= held or mine <= held, (t.id, sorted(held), sorted(mine))
    if opts.pj_max is not None:
        assert running <= opts.pj_max
    assert res.objective == pytest.approx(objective_of(state, res.counts, opts), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("name", FAST)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances())
def test_fast_allocators_invariants(name, inst):
    state, opts = inst
    a = allocate(name, state, opts)
    check_result(state, opts, a)
    b = allocate(name, state, opts)
    assert (a.counts, a.node_map, a.objective, a.status) == (b.counts, b.node_map, b.objective, b.status)


@pytest.mark.parametrize("name", MILPS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances(max_jobs=3, max_pool=8))
def test_milp_allocators_invariants(name, inst):
    state, opts = inst
    a = allocate(name, state, opts)
    check_result(state, opts, a)
    assert a.status in ("optimal", "optimal-within-gap")
    b = allocate(name, state, opts)
    assert (a.counts, a.node_map, a.status) == (b.counts, b.node_map, b.status)


@settings(max_examples=150, deadline=None)
@given(inst=instances())
def test_dp_is_at_least_every_heuristic(inst):
    state, opts = inst
    best = allocate("dp", state, opts).objective
    for name in ("equal-share", "greedy", "marginal-gain"):
        assert allocate(name, state, opts).objective <= best + 1e-9 * max(1.0, abs(best))
