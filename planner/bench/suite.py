"""Benchmarks behind `planner bench <what>`: timing figures, not tests.

BENCHMARKS maps a name to a function returning JSON-able figures (a list of rows or a dict).
To add one, define a function here (or import it) and add an entry; `planner bench <name>`
passes it the command-line options its signature accepts (jobs, pool, reps, allocators,
node_reps, time_limit_s, out, progress).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from planner import allocators as _allocators
from planner.allocators import AllocOptions, allocate
from planner.allocators.instances import fig5_instance
from planner.bench import large, sweep_scaling
from planner.paths import artifacts_dir
from planner.scenario.defaults import DEFAULT_TFWD_S

ARTIFACTS = artifacts_dir()

FIG5_JOBS = (5, 10, 20, 30)
FIG5_POOL = (100, 200, 400, 800)
# the allocators whose record (planner.allocators.ALLOCATORS) puts them in the Fig. 5 benchmark
ALLOCATORS = tuple(_allocators.names(bench=True))


def _p95(xs) -> float:
    return float(np.percentile(xs, 95)) if len(xs) else float("nan")


def _warm_up(allocators) -> None:
    """Import Pyomo/HiGHS and run each allocator once on a tiny instance (not timed)."""
    st = fig5_instance(3, 12, seed=0)
    for name in allocators:
        allocate(name, st, AllocOptions(time_limit_s=5.0))


def allocator_calls(jobs=FIG5_JOBS, pool=FIG5_POOL, reps: int = 5, allocators=ALLOCATORS,
                    node_reps: int | None = 2, time_limit_s: float = 10.0, tfwd_s: float = DEFAULT_TFWD_S,
                    progress=None) -> list[dict]:
    """The Fig. 5 grid's allocate() calls, one row each: allocator, jobs, pool, rep, build_s,
    solve_s, e2e_s (the call, end to end), objective, status, dp_objective (the exact optimum on
    the same instance) and gap_to_dp ((dp - objective) / |dp|). Instances: fig5_instance(J, P,
    seed=rep), so every allocator sees the same ones; milp-node only on the first `node_reps`
    (None: all). Imports and first calls are not timed. progress(fraction, text) after each call.
    The benchmark (bench_allocators) and the app's Solver page both read these rows."""
    allocators = list(allocators)
    _warm_up(allocators)
    opts = AllocOptions(tfwd_s=float(tfwd_s), time_limit_s=float(time_limit_s))
    cells = [(int(J), int(P)) for J in jobs for P in pool]

    def n_for(name):
        return reps if name != "milp-node" or node_reps is None else min(reps, node_reps)

    total = max(sum(n_for(a) for a in allocators) * len(cells), 1)
    rows, done = [], 0
    for J, P in cells:
        for r in range(int(reps)):
            state = fig5_instance(J, P, seed=r)
            best = allocate("dp", state, opts).objective
            for name in allocators:
                if r >= n_for(name):
                    continue
                t0 = time.perf_counter()
                res = allocate(name, state, opts)
                e2e = time.perf_counter() - t0
                rows.append({"allocator": name, "jobs": J, "pool": P, "rep": r, "build_s": res.build_s,
                             "solve_s": res.solve_s, "e2e_s": e2e, "objective": res.objective,
                             "status": res.status, "dp_objective": best,
                             "gap_to_dp": (best - res.objective) / abs(best) if best else 0.0})
                done += 1
                if progress:
                    progress(done / total, f"{name}: J={J}, pool={P}, rep {r + 1}/{reps}")
    return rows


def bench_allocators(jobs=FIG5_JOBS, pool=FIG5_POOL, reps: int = 5, allocators=ALLOCATORS,
                     node_reps: int | None = 2, time_limit_s: float = 10.0, tfwd_s: float = DEFAULT_TFWD_S,
                     out: str | Path | None = ARTIFACTS / "bench_allocators.json", progress=None) -> list[dict]:
    """BFTrainer's Fig. 5 grid: every allocator on `reps` random current maps per (J, pool) cell.

    ShuffleNet curve, Nmin 1, Nmax 64, BFTrainer's Rup/Rdw and T_fwd (planner.allocators.instances.
    fig5_instance, seed = rep index, so every allocator sees the same instances). `milp-node`
    runs on the first `node_reps` of them with `time_limit_s`. The calls: allocator_calls. A row
    per allocator and cell: median and p95 of build and solve seconds, median end-to-end seconds
    (the allocate() call), median objective, status counts, `exact` (from the allocator's record),
    `matches_dp` (fraction of reps within 1e-6 relative of the exact optimum from dp) and
    `matches_milp_node` (the same against milp-node, over reps where milp-node proved
    optimality; None if it never did). progress(fraction) after each call.
    """
    calls = allocator_calls(jobs, pool, reps, allocators, node_reps, time_limit_s, tfwd_s,
                            progress=(lambda f, _text: progress(f)) if progress else None)
    rows = []
    for J in jobs:
        for P in pool:
            cell = [c for c in calls if c["jobs"] == int(J) and c["pool"] == int(P)]
            node_obj = {c["rep"]: c["objective"] for c in cell
                        if c["allocator"] == "milp-node" and c["status"] == "optimal"}
            for name in allocators:
                rec = [c for c in cell if c["allocator"] == name]
                obj = np.asarray([c["objective"] for c in rec])
                dp_obj = np.asarray([c["dp_objective"] for c in rec])
                statuses: dict[str, int] = {}
                for c in rec:
                    statuses[c["status"]] = statuses.get(c["status"], 0) + 1
                node_cmp = [abs(c["objective"] - node_obj[c["rep"]]) <= 1e-6 * max(1.0, abs(node_obj[c["rep"]]))
                            for c in rec if c["rep"] in node_obj]
                rows.append({
                    "allocator": name, "exact": _allocators.info(name).exact, "jobs": J, "pool": P, "reps": len(rec),
                    "build_s_median": float(np.median([c["build_s"] for c in rec])),
                    "build_s_p95": _p95([c["build_s"] for c in rec]),
                    "solve_s_median": float(np.median([c["solve_s"] for c in rec])),
                    "solve_s_p95": _p95([c["solve_s"] for c in rec]),
                    "end_to_end_s_median": float(np.median([c["e2e_s"] for c in rec])),
                    "objective_median": float(np.median(obj)),
                    "objective_vs_dp_median": float(np.median(obj / dp_obj)) if dp_obj.all() else None,
                    "matches_dp": float(np.mean(np.abs(obj - dp_obj) <= 1e-6 * np.maximum(1.0, np.abs(dp_obj)))),
                    "matches_milp_node": float(np.mean(node_cmp)) if node_cmp else None,
                    "statuses": statuses,
                })
    if out:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rows, indent=1) + "\n")
    return rows


def headline(rows: list[dict], jobs: int = 30, pool: int = 800) -> dict:
    """The figures the README quotes: dp / milp / milp-node at one cell and the ratio."""
    cell = {r["allocator"]: r for r in rows if r["jobs"] == jobs and r["pool"] == pool}
    out = {"jobs": jobs, "pool": pool}
    for name, key in (("dp", "dp"), ("milp", "milp"), ("milp-node", "milp_node")):
        if name in cell:
            out[f"{key}_end_to_end_s_median"] = cell[name]["end_to_end_s_median"]
            out[f"{key}_solve_s_median"] = cell[name]["solve_s_median"]
            out[f"{key}_matches_dp"] = cell[name]["matches_dp"]
    if "dp" in cell and "milp-node" in cell and cell["dp"]["end_to_end_s_median"] > 0:
        out["milp_node_over_dp"] = cell["milp-node"]["end_to_end_s_median"] / cell["dp"]["end_to_end_s_median"]
    if "milp" in cell and "milp-node" in cell and cell["milp"]["end_to_end_s_median"] > 0:
        out["milp_node_over_milp"] = cell["milp-node"]["end_to_end_s_median"] / cell["milp"]["end_to_end_s_median"]
    if "milp-node" in cell:
        out["milp_node_statuses"] = cell["milp-node"]["statuses"]
    return out


BENCHMARKS = {
    "allocators": bench_allocators,
}

DESCRIPTIONS = {
    "allocators": "BFTrainer Fig. 5 grid: build/solve seconds and objective per allocator, J x pool",
}


# --- sweep scaling and exact allocation at cloud scale (planner.bench.sweep_scaling, .large) -------

def bench_sweep(out: str | Path | None = ARTIFACTS / "bench_sweep.json", progress=None) -> dict:
    """16-cell sweep grid on 1 vs 2 local worker processes: wall times and speed-up
    (planner.bench.sweep_scaling; writes artifacts/bench_sweep.json)."""
    return sweep_scaling.run(out=out)


BENCHMARKS["sweep"] = bench_sweep
DESCRIPTIONS["sweep"] = "16-cell sweep on 1 vs 2 worker processes: wall times, speed-up (target >= 1.7)"


def bench_large(out: str | Path | None = ARTIFACTS / "bench_large.json", reps: int = 5) -> dict:
    """hull and auto (dp, dp-reduced or hull by size) over J x N from 30 x 800 to 10,000 x 100,000:
    decision time, peak memory, share proven optimal, agreement with dp where affordable
    (planner.bench.large; writes artifacts/bench_large.json)."""
    return large.run(reps=reps, out=out)


BENCHMARKS["large"] = bench_large
DESCRIPTIONS["large"] = "auto and hull at cloud scale, 30 x 800 .. 10,000 x 100,000: time, memory, share proven optimal"
