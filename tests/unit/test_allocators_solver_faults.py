"""Solver faults: time limit hit, infeasible, HiGHS unavailable or raising.

For every MILP allocator (milp, milp-node, horizon-milp) the allocator returns the fallback map
(every Trainer keeps the nodes it still holds, base.keep_current) with status 'fallback', or
the best feasible map with 'time-limit-feasible' when the time limit hits after a feasible
point; a replay goes on through such decisions (its maps are checked by the simulator), and
the Planner page reports the fallback decisions (tests/app/test_pages.py).
(tests/unit/test_allocators.py adds a time-limited milp-node decision; its copies of the
unavailable/raising cases for milp and milp-node went, test_fault_gives_the_fallback_map
covers them on the same state, counts and map.)
"""

from __future__ import annotations

import math

import pyomo.environ as pyo
import pytest
from pyomo.contrib.appsi.base import Results as AppsiResults
from pyomo.contrib.appsi.base import TerminationCondition as AppsiTC
from pyomo.contrib.appsi.solvers.highs import Highs as AppsiHighs
from pyomo.contrib.solver.solvers.highs import Highs

from planner.allocators import AllocOptions, AllocState, TrainerState, _pyomo, allocate
from planner.allocators.base import is_feasible, keep_current
from planner.allocators.instances import fig5_instance
from planner.replay.pool import fixed_pool
from planner.replay.simulator import simulate
from planner.workload.generators import make_workload
from planner.workload.trainers import imagenet_curves

MILPS = ["milp", "milp-node", "horizon-milp"]


def running_state() -> AllocState:
    """A holds 3 nodes, B holds 2 of which node 9 left the pool, C holds 4 (not a power of two
    after trimming: horizon-milp keeps 4), D is new; 4 more pool nodes are free."""
    c = imagenet_curves()["shufflenet"]
    ts = (TrainerState("A", 1, 64, c, current=(0, 1, 2), remaining_samples=1e8),
          TrainerState("B", 1, 64, c, current=(3, 9), remaining_samples=1e8),
          TrainerState("C", 2, 64, c, current=(4, 5, 6, 7), remaining_samples=1e8),
          TrainerState("D", 1, 64, c, remaining_samples=1e8))
    return AllocState(pool=tuple(range(12)), trainers=ts)


def expected_fallback(name: str, st: AllocState) -> dict:
    counts = keep_current(st, pow2=False)
    if name == "horizon-milp":  # its levels are powers of two: trimmed down
        counts = {k: (1 << (v.bit_length() - 1)) if v else 0 for k, v in counts.items()}
    return counts


def assert_fallback(name: str, res, st: AllocState, why: str):
    assert res.status == "fallback", (res.status, res.message)
    assert any(w in res.message for w in why), res.message
    assert res.counts == expected_fallback(name, st)
    pool = set(st.pool)
    for t in st.trainers:  # nobody moves: a subset of what it holds, nothing new
        assert set(res.node_map[t.id]) <= set(t.current) & pool
        assert len(res.node_map[t.id]) == res.counts[t.id]
    assert math.isfinite(res.objective)


# ---------------------------------------------------------------- fault injectors

def fail_raise(monkeypatch):
    def boom(self, *a, **k):
        raise RuntimeError("simulated HiGHS crash")
    monkeypatch.setattr(Highs, "solve", boom)
    monkeypatch.setattr(AppsiHighs, "solve", boom)
    return ("simulated HiGHS crash",)


def fail_unavailable(monkeypatch):
    """highspy missing: the shared helper's availability probe says no; the appsi interface
    horizon-milp uses raises when it tries to load the solver."""
    monkeypatch.setattr(_pyomo, "_AVAILABLE", False)

    def missing(self, *a, **k):
        raise ImportError("No module named 'highspy'")
    monkeypatch.setattr(AppsiHighs, "solve", missing)
    return ("HiGHS is not available", "ImportError")


def fail_infeasible(monkeypatch):
    """HiGHS reports the model infeasible, no solution (what a wrong model or bad data gives)."""
    def infeasible_outcome(model, *a, **k):
        return _pyomo.SolveOutcome("fallback", None, None, 0.001, "no feasible solution (provenInfeasible)")
    monkeypatch.setattr(_pyomo, "solve", infeasible_outcome)

    def appsi_infeasible(self, model, *a, **k):
        r = AppsiResults()
        r.termination_condition = AppsiTC.infeasible
        r.best_feasible_objective = None
        return r
    monkeypatch.setattr(AppsiHighs, "solve", appsi_infeasible)
    return ("no feasible",)


FAULTS = {"raise": fail_raise, "unavailable": fail_unavailable, "infeasible": fail_infeasible}


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("name", MILPS)
def test_fault_gives_the_fallback_map(name, fault, monkeypatch):
    why = FAULTS[fault](monkeypatch)
    st = running_state()
    res = allocate(name, st, AllocOptions(time_limit_s=5.0))
    assert_fallback(name, res, st, why)


@pytest.mark.parametrize("name", MILPS)
def test_without_fault_the_same_state_is_solved(name):
    """The control: the same state solves normally (so the fallback above is the fault's doing)."""
    st = running_state()
    res = allocate(name, st, AllocOptions(time_limit_s=10.0))
    assert res.status in ("optimal", "optimal-within-gap")
    assert sum(res.counts.values()) > sum(expected_fallback(name, st).values())


def test_real_infeasible_model_maps_to_fallback():
    """Not monkeypatched: HiGHS proves a model infeasible; the helper says fallback, never raises."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 3))
    m.c = pyo.Constraint(expr=m.x + m.y >= 5)
    m.o = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    out = _pyomo.solve(m, 5.0, 1e-6)
    assert out.status == "fallback" and not out.has_solution
    assert "no feasible solution" in out.message and "nfeasib" in out.message


@pytest.mark.slow  # a 20 ms time limit on a 24,000-binary model (building it is the cost)
def test_time_limit_hit_on_a_big_node_level_instance():
    """milp-node with 30 Trainers on 800 nodes (~24,000 binaries) and a 20 ms limit: HiGHS stops
    early; the result is its best feasible map or the fallback, never a broken map."""
    st = fig5_instance(30, 800, seed=5)
    res = allocate("milp-node", st, AllocOptions(time_limit_s=0.02))
    assert res.status in ("time-limit-feasible", "fallback"), res.status
    assert is_feasible(st, res.counts)
    pool = set(st.pool)
    used = [n for v in res.node_map.values() for n in v]
    assert len(used) == len(set(used)) and set(used) <= pool
    for t in st.trainers:
        mine, held = set(res.node_map[t.id]), set(t.current) & pool
        assert mine >= held or mine <= held  # no migration
    if res.status == "fallback":
        assert res.counts == keep_current(st)
    else:
        assert "stopped" in res.message
    assert res.solve_s < 10.0  # the limit was honoured (loosely: a shared 2-core machine)


# ---------------------------------------------------------------- the replay goes on

def small_replay(allocator: str, cadence: str = "events"):
    specs = make_workload("hpo", seed=1, count=8, interarrival_s=60.0)
    pool = fixed_pool(48, 0.0, 4 * 3600.0)
    return simulate(pool, specs, allocator=allocator, opts=AllocOptions(time_limit_s=5.0), pj_max=4,
                    cadence=cadence, step_min=10.0, check=True)


@pytest.mark.slow  # 0.7 s CPU measured in the default run: the slow tier
@pytest.mark.parametrize("name", ["milp", "milp-node"])
def test_replay_goes_on_through_intermittent_solver_failures(name, monkeypatch):
    real = _pyomo.solve
    calls = {"n": 0}

    def flaky(model, *a, **k):
        calls["n"] += 1
        if calls["n"] % 3 == 0:  # every third decision: HiGHS blows up (either Pyomo interface)
            saved = Highs.solve, AppsiHighs.solve

            def boom(self, *aa, **kk):
                raise RuntimeError("intermittent HiGHS failure")
            monkeypatch.setattr(Highs, "solve", boom)
            monkeypatch.setattr(AppsiHighs, "solve", boom)
            try:
                return real(model, *a, **k)
            finally:
                monkeypatch.setattr(Highs, "solve", saved[0])
                monkeypatch.setattr(AppsiHighs, "solve", saved[1])
        return real(model, *a, **k)

    monkeypatch.setattr(_pyomo, "solve", flaky)
    res = small_replay(name)
    dec = res.decisions
    st = dec["status"].value_counts().to_dict()
    assert st.get("fallback", 0) >= 1 and (st.get("optimal", 0) + st.get("optimal-within-gap", 0)) >= 1, st
    assert res.summary["fallback_decisions"] == st["fallback"]
    assert res.summary["statuses"] == {k: int(v) for k, v in st.items()}
    assert res.summary["trainers_completed"] >= 1  # work got done between the failures
    assert res.timeline["t_s"].iloc[-1] == pytest.approx(4 * 3600.0)  # the whole window replayed


@pytest.mark.parametrize("name", MILPS)
def test_replay_completes_when_the_solver_always_fails(name, monkeypatch):
    fail_raise(monkeypatch)
    res = small_replay(name, cadence="interval" if name == "horizon-milp" else "events")
    dec = res.decisions
    assert len(dec) > 0 and set(dec["status"]) == {"fallback"}
    assert res.summary["fallback_decisions"] == len(dec)
    assert res.timeline["t_s"].iloc[-1] == pytest.approx(4 * 3600.0)
    if name != "horizon-milp":
        # every Trainer starts with nothing and the fallback keeps what it holds: no one ever runs
        assert res.summary["trainers_completed"] == 0 and (res.timeline["allocated_nodes"] == 0).all()
    else:
        # interval cadence starts waiting Trainers between ticks (quick start), so work goes on
        assert res.summary["trainers_completed"] >= 1 and (res.timeline["allocated_nodes"] > 0).any()






def test_node_level_model_too_large_falls_back_at_once():
    """10 Trainers on a 60,000-node pool would be 600,000 x[j,n] binaries (GBs of Pyomo model, a
    minute to build): refused in milliseconds with the fallback map and a reason."""
    from planner.allocators import milp_node

    st = fig5_instance(10, 60_000, seed=1)
    assert 10 * 60_000 > milp_node.MAX_BINARIES
    res = allocate("milp-node", st, AllocOptions(time_limit_s=5.0))
    assert res.status == "fallback" and "model too large" in res.message
    assert res.counts == keep_current(st)
    exact = allocate("dp", st, AllocOptions())  # the exact fast form still decides this instance
    assert exact.status == "optimal" and sum(exact.counts.values()) > 0


@pytest.mark.slow  # a wall-clock bound: the slow tier (a loaded machine must not fail the default run)
def test_node_level_model_too_large_is_refused_within_the_time_limit():
    import time

    st = fig5_instance(10, 60_000, seed=1)
    t0 = time.perf_counter()
    res = allocate("milp-node", st, AllocOptions(time_limit_s=5.0))
    assert time.perf_counter() - t0 < 5.0 and res.status == "fallback"
