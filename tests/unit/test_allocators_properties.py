"""Property tests (hypothesis) for every allocator: capacity, bounds, no migration, determinism."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from planner.allocators import allocate
from tests.helpers import check_result, examples, instances

FAST = ["dp", "equal-share", "greedy", "marginal-gain"]
MILPS = ["milp", "milp-node"]


@pytest.mark.parametrize("name", FAST)
@pytest.mark.parametrize("budget", examples(150))
def test_fast_allocators_invariants(name, budget):
    @settings(max_examples=budget, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(inst=instances())
    def example(inst):
        state, opts = inst
        a = allocate(name, state, opts)
        check_result(state, opts, a)
        b = allocate(name, state, opts)
        assert (a.counts, a.node_map, a.objective, a.status) == (b.counts, b.node_map, b.objective, b.status)

    example()


@pytest.mark.slow  # 0.5 s CPU measured in the default run: the slow tier
@pytest.mark.parametrize("name", MILPS)
@pytest.mark.parametrize("budget", examples(30))
def test_milp_allocators_invariants(name, budget):
    @settings(max_examples=budget, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(inst=instances(max_jobs=3, max_pool=8))
    def example(inst):
        state, opts = inst
        a = allocate(name, state, opts)
        check_result(state, opts, a)
        assert a.status in ("optimal", "optimal-within-gap")
        b = allocate(name, state, opts)
        assert (a.counts, a.node_map, a.status) == (b.counts, b.node_map, b.status)

    example()


@pytest.mark.parametrize("budget", examples(150))
def test_dp_is_at_least_every_heuristic(budget):
    @settings(max_examples=budget, deadline=None)
    @given(inst=instances())
    def example(inst):
        state, opts = inst
        best = allocate("dp", state, opts).objective
        for name in ("equal-share", "greedy", "marginal-gain"):
            assert allocate(name, state, opts).objective <= best + 1e-9 * max(1.0, abs(best))

    example()
