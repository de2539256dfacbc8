"""Shared Pyomo + HiGHS solve step for the MILP allocators.

`solve(model, time_limit_s, mip_gap)` runs HiGHS through Pyomo's persistent highspy interface
(pyomo.contrib.solver "highs") and maps the outcome to the allocator statuses:

  optimal               HiGHS proved optimality (remaining relative gap <= 1e-9)
  optimal-within-gap    HiGHS stopped because the relative gap fell under mip_gap
  time-limit-feasible   the time limit (or another limit) hit with a feasible solution in hand
  fallback              no usable solution: infeasible, error, HiGHS raised or is unavailable

Variable values are loaded into the model only when there is a solution (status != fallback).
Never raises for solver trouble: the caller decides what a fallback means (keep the current map).

With `warm_start=True` the model's current variable values are handed to HiGHS as a MIP start
(HiGHS checks it and uses it as the first incumbent if feasible). That path goes through Pyomo's
APPSI highspy interface (pyomo.contrib.appsi.solvers.highs, the solver behind
`SolverFactory("appsi_highs")`), since the newer interface has no warm start.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

# HiGHS options that help these small models: the RINS/RENS sub-MIP heuristics dominate the
# run time on multiple-choice knapsacks and rarely pay off (measured in docs/allocators.md).
FAST_OPTIONS = {
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
    "mip_heuristic_run_zi_round": False,
}

_AVAILABLE: bool | None = None


@dataclass
class SolveOutcome:
    status: str  # one of base.STATUSES except "heuristic"
    objective: float | None  # HiGHS' incumbent objective (model units)
    bound: float | None
    solve_s: float
    message: str = ""

    @property
    def has_solution(self) -> bool:
        return self.status != "fallback"


def available() -> bool:
    """True when Pyomo's HiGHS interface and highspy load."""
    global _AVAILABLE
    if _AVAILABLE is None:
        try:
            from pyomo.contrib.solver.solvers.highs import Highs  # lazy: heavy (pyomo)

            _AVAILABLE = bool(Highs().available())
        except Exception:  # pragma: no cover - depends on the installation
            _AVAILABLE = False
    return _AVAILABLE


def solve(model, time_limit_s: float, mip_gap: float, solver_options: dict | None = None,
          tee: bool = False, warm_start: bool = False, optimal_abs_tol: float = 0.0) -> SolveOutcome:
    """Solve `model` with HiGHS; see the module docstring. optimal_abs_tol: a converged solve is
    "optimal" when |bound - objective| <= 1e-9 * |objective| + optimal_abs_tol (0: relative only;
    horizon-milp, whose objective can be near 0, passes 1e-9)."""
    t0 = time.perf_counter()
    if not available():
        return SolveOutcome("fallback", None, None, time.perf_counter() - t0, "HiGHS is not available")
    if warm_start:
        return _solve_warm(model, time_limit_s, mip_gap, solver_options, tee, t0, optimal_abs_tol)
    try:
        from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition  # lazy: heavy (pyomo)
        from pyomo.contrib.solver.solvers.highs import Highs  # lazy: heavy (pyomo)

        res = Highs().solve(
            model,
            tee=tee,
            time_limit=max(float(time_limit_s), 1e-3),
            rel_gap=max(float(mip_gap), 0.0),
            load_solutions=False,
            raise_exception_on_nonoptimal_result=False,
            solver_options=dict(solver_options or {}),
        )
    except Exception as e:  # HiGHS or Pyomo raised: the caller falls back
        return SolveOutcome("fallback", None, None, time.perf_counter() - t0,
                            f"solver raised {type(e).__name__}: {' '.join(str(e).split())[:200]}")
    tc = res.termination_condition
    feasible = res.solution_status in (SolutionStatus.feasible, SolutionStatus.optimal)
    return _outcome(res, res.incumbent_objective if feasible else None, res.objective_bound,
                    tc == TerminationCondition.convergenceCriteriaSatisfied, tc.name, t0, optimal_abs_tol)


def _solve_warm(model, time_limit_s, mip_gap, solver_options, tee, t0, optimal_abs_tol=0.0) -> SolveOutcome:
    """solve() with the model's variable values as HiGHS' MIP start (APPSI interface)."""
    try:
        from pyomo.contrib.appsi.base import TerminationCondition  # lazy: heavy (pyomo)
        from pyomo.contrib.appsi.solvers.highs import Highs  # lazy: heavy (pyomo)

        solver = Highs(only_child_vars=True)
        solver.config.time_limit = max(float(time_limit_s), 1e-3)
        solver.config.mip_gap = max(float(mip_gap), 0.0)
        solver.config.load_solution = False
        solver.config.stream_solver = bool(tee)
        solver.config.warmstart = True
        solver.highs_options = dict(solver_options or {})
        res = solver.solve(model)
    except Exception as e:  # HiGHS or Pyomo raised: the caller falls back
        return SolveOutcome("fallback", None, None, time.perf_counter() - t0,
                            f"solver raised {type(e).__name__}: {' '.join(str(e).split())[:200]}")
    tc = res.termination_condition
    return _outcome(res, res.best_feasible_objective, res.best_objective_bound,
                    tc == TerminationCondition.optimal, tc.name, t0, optimal_abs_tol)


def _outcome(res, obj, bound, converged: bool, tc_name: str, t0: float, optimal_abs_tol: float = 0.0) -> SolveOutcome:
    """Status of a finished solve (either Pyomo interface): load the incumbent into the model,
    or fall back when there is none or it cannot be loaded."""
    if bound is not None and not math.isfinite(bound):
        bound = None
    if obj is None or not math.isfinite(obj):
        return SolveOutcome("fallback", None, bound, time.perf_counter() - t0,
                            f"no feasible solution ({tc_name})")
    try:
        res.solution_loader.load_vars()
    except Exception as e:
        return SolveOutcome("fallback", None, bound, time.perf_counter() - t0,
                            f"could not load the solution: {type(e).__name__}")
    if converged:
        gap = rel_gap(obj, bound)
        proved = gap is not None and (gap <= 1e-9 or abs(bound - obj) <= 1e-9 * abs(obj) + optimal_abs_tol)
        status = "optimal" if proved else "optimal-within-gap"
        msg = "" if gap is None else f"relative gap {gap:.2e}"
    else:
        status, msg = "time-limit-feasible", f"stopped: {tc_name}"
    return SolveOutcome(status, float(obj), None if bound is None else float(bound),
                        time.perf_counter() - t0, msg)


def rel_gap(obj: float | None, bound: float | None) -> float | None:
    if obj is None or bound is None or not (math.isfinite(obj) and math.isfinite(bound)):
        return None
    return abs(bound - obj) / max(abs(obj), 1e-10)
