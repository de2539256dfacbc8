"""Benchmark: horizon-milp's decision time over a 70-node study run (not a test).

    python benchmarks/bench_horizon.py [--pool 70] [--hours 8] [--count 500] [--mip-gap 1e-3] [--time-limit 1]

The run is the earlier cloud-pool study's base cell (the first 500 Philly jobs): a fixed pool of 70 nodes, the
first 500 Philly jobs, decisions every f = 5 min over T = 5 steps, speed rule `curve`, every job
visible to the allocator, 8 hours. Prints and writes artifacts/bench_horizon.json: HiGHS solve
seconds per decision (mean, median, p95, max), model build seconds, the allocator's wall time
(build + solve + map), jobs per model, statuses. Targets here: solve median <= 0.1 s and
p95 <= 0.5 s. `run()` is the entry the benchmark suite (benchmarks/run_all.py) calls.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OUT = ROOT / "artifacts" / "bench_horizon.json"
TARGET_MEDIAN_S, TARGET_P95_S = 0.1, 0.5


def _stats(a) -> dict:
    a = np.asarray(a, dtype=float)
    return {"mean": float(a.mean()), "median": float(np.median(a)), "p95": float(np.percentile(a, 95)),
            "max": float(a.max())}


def run(pool: int = 70, hours: float = 8.0, count: int = 500, mip_gap: float = 1e-3,
        time_limit_s: float = 1.0, horizon_steps: int = 5, step_min: float = 5.0,
        out: str | Path | None = OUT) -> dict:
    from planner.allocators.base import AllocOptions
    from planner.replay.pool import fixed_pool
    from planner.replay.simulator import simulate
    from planner.workload.generators import make_workload

    specs = make_workload("philly", seed=0, count=count)
    opts = AllocOptions(time_limit_s=time_limit_s, mip_gap=mip_gap, horizon_steps=horizon_steps,
                        speed_rule="curve")  # pj_max, step_min: the replay's (config below)
    from planner.allocators import get

    alloc = get("horizon-milp")
    cpu = []  # CPU seconds per decision (build + solve + map): robust to other load on the machine

    def timed(state, o):
        c0 = time.process_time()
        r = alloc(state, o)
        cpu.append(time.process_time() - c0)
        return r

    timed.__name__ = "horizon-milp"
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    res = simulate(fixed_pool(pool, 0.0, hours * 3600.0), specs, allocator=timed, opts=opts,
                   pj_max=100_000, cadence="interval", step_min=step_min, check=False)
    wall = time.perf_counter() - t0
    load1 = os.getloadavg()[0]
    d = res.decisions
    solve = _stats(d["solve_s"])
    out_d = {
        "setting": {"pool": pool, "hours": hours, "count": count, "workload": "philly",
                    "horizon_steps": horizon_steps, "step_min": step_min, "mip_gap": mip_gap,
                    "time_limit_s": time_limit_s, "cadence": "interval"},
        "decisions": int(len(d)),
        "solve_s": solve,
        "build_s": _stats(d["build_s"]),
        "wall_s_per_decision": _stats(d["wall_s"]),
        "cpu_s_per_decision": _stats(cpu),
        "load_average_1min": {"start": load0, "end": load1},
        "jobs_per_model": {"median": float(np.median(d["trainers"])), "max": int(d["trainers"].max())},
        "statuses": {str(k): int(v) for k, v in d["status"].value_counts().items()},
        "replay_wall_s": wall,
        "targets": {"solve_median_s": TARGET_MEDIAN_S, "solve_p95_s": TARGET_P95_S,
                    "met": bool(solve["median"] <= TARGET_MEDIAN_S and solve["p95"] <= TARGET_P95_S)},
    }
    out_d["headline"] = {"solve_median_s": solve["median"], "solve_p95_s": solve["p95"],
                         "solve_mean_s": solve["mean"], "solve_max_s": solve["max"],
                         "targets_met": out_d["targets"]["met"]}
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(out_d, indent=1))
    return out_d


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="horizon-milp solve times over a 70-node study run")
    ap.add_argument("--pool", type=int, default=70)
    ap.add_argument("--hours", type=float, default=8.0)
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--mip-gap", type=float, default=1e-3)
    ap.add_argument("--time-limit", type=float, default=1.0)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    r = run(pool=a.pool, hours=a.hours, count=a.count, mip_gap=a.mip_gap, time_limit_s=a.time_limit, out=a.out)
    s = r["solve_s"]
    print(f"horizon-milp, pool {a.pool}, {r['decisions']} decisions (median {r['jobs_per_model']['median']:.0f} "
          f"jobs, max {r['jobs_per_model']['max']}):")
    print(f"  solve s: mean {s['mean']:.4f}  median {s['median']:.4f}  p95 {s['p95']:.4f}  max {s['max']:.4f}")
    b, w = r["build_s"], r["wall_s_per_decision"]
    print(f"  build s: median {b['median']:.4f}  p95 {b['p95']:.4f};  wall per decision: median {w['median']:.4f}  "
          f"p95 {w['p95']:.4f}")
    c = r["cpu_s_per_decision"]
    print(f"  CPU s per decision (build+solve): mean {c['mean']:.4f}  median {c['median']:.4f}  p95 {c['p95']:.4f}  "
          f"max {c['max']:.4f}; load average {r['load_average_1min']['start']:.1f} -> "
          f"{r['load_average_1min']['end']:.1f} on {os.cpu_count()} cores")
    print(f"  statuses {r['statuses']}; targets (median <= {TARGET_MEDIAN_S}, p95 <= {TARGET_P95_S}): "
          f"{'met' if r['targets']['met'] else 'NOT met'}; replay {r['replay_wall_s']:.1f} s -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
