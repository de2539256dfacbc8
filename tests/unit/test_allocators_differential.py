"""Differential tests: milp-node, milp and dp reach the same optimum (and brute force agrees)."""

from __future__ import annotations

import itertools

import pytest

from planner.allocators import AllocOptions, allocate
from planner.allocators.base import is_feasible, level_tables, objective_of
from planner.allocators.instances import fig5_instance, random_instance
from tests.helpers import EDGES, OPTION_SETS, same, seeds


def brute_force(state, opts) -> float:
    """Best objective over every combination of levels (tiny instances only)."""
    cap, items = level_tables(state, opts)
    best = None
    for combo in itertools.product(*[range(len(lv)) for _, lv, _ in items]):
        counts = {items[j][0].id: int(items[j][1][i]) for j, i in enumerate(combo)}
        if sum(counts.values()) <= cap:
            val = objective_of(state, counts, opts)
            best = val if best is None else max(best, val)
    return best


def check_three(state, opts):
    d = allocate("dp", state, opts)
    m = allocate("milp", state, opts)
    cold = allocate("milp", state, opts.with_(extra={"warm_start": False}))  # no MIP start from dp
    n = allocate("milp-node", state, opts)
    assert m.status in ("optimal", "optimal-within-gap"), m.message
    assert cold.status in ("optimal", "optimal-within-gap"), cold.message
    assert n.status in ("optimal", "optimal-within-gap"), n.message
    for r in (d, m, cold, n):
        assert is_feasible(state, r.counts, opts.pow2)
    assert same(d.objective, m.objective, opts.mip_gap), (d.counts, m.counts)
    assert same(d.objective, cold.objective, opts.mip_gap), (d.counts, cold.counts)
    assert same(d.objective, n.objective, opts.mip_gap), (d.counts, n.counts)
    return d


# 210 random instances (42 seeds x 5 option sets) plus 6 edge cases x 5 seeds
@pytest.mark.parametrize("seed", seeds(42))
def test_three_exact_allocators_agree(seed):
    state = random_instance(seed, max_jobs=4, max_pool=10, max_nmax=6)
    for opts in OPTION_SETS:
        check_three(state, opts)


@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("seed", range(5))
def test_edge_cases_agree(edge, seed):
    state = random_instance(100 + seed, max_jobs=4, max_pool=10, max_nmax=6, edge=edge)
    for opts in OPTION_SETS[:3]:
        d = check_three(state, opts)
        if edge in ("empty-pool", "nmin-above-pool"):
            assert sum(d.counts.values()) == 0
        if edge == "zero-curves":
            # nothing to gain: nobody grows, nobody starts (starting pays nothing, costs nothing)
            assert d.objective <= 0.0


@pytest.mark.parametrize("seed", seeds(60))
def test_dp_matches_brute_force(seed):
    state = random_instance(1000 + seed, max_jobs=3, max_pool=9, max_nmax=5)
    for opts in OPTION_SETS:
        assert same(allocate("dp", state, opts).objective, brute_force(state, opts), 1e-12)


def test_fig5_cell_dp_equals_milp():
    for seed in range(2):
        state = fig5_instance(10, 100, seed)
        d = allocate("dp", state, AllocOptions())
        m = allocate("milp", state, AllocOptions())
        cold = allocate("milp", state, AllocOptions(extra={"warm_start": False}))
        assert m.status in ("optimal", "optimal-within-gap")
        assert cold.status in ("optimal", "optimal-within-gap")
        assert same(d.objective, m.objective)
        assert same(d.objective, cold.objective)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100))
def test_three_agree_bigger(seed):
    state = random_instance(5000 + seed, max_jobs=8, max_pool=40, max_nmax=16)
    for opts in OPTION_SETS:
        check_three(state, opts.with_(time_limit_s=120.0))


@pytest.mark.slow
@pytest.mark.parametrize("cell", [(5, 100), (10, 100), (5, 200)])
def test_fig5_three_agree(cell):
    for seed in range(3):
        check_three(fig5_instance(*cell, seed), AllocOptions(time_limit_s=300.0))
