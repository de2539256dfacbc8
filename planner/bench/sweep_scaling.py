"""Sweep scaling: the same 16-cell grid on 1 and on 2 local worker processes.

    python benchmarks/bench_sweep.py [--hours 120] [--out artifacts/bench_sweep.json]

Cells: 120-hour windows of the shipped Summit log from BFTrainer's replay start, pool size 1024,
HPO workload, dp allocator, T_fwd x Pj_max = 4 x 4 (each cell ~2-4 s of CPU, heavy
enough that process start-up does not dominate). The log DB is a fresh temporary file loaded
before the clock starts; each run writes a fresh results DB. The wall time of `run_sweep`
includes starting the worker processes. Speed-up = wall(1 worker) / wall(2 workers); target
>= 1.7 on 2 cores. The two runs' results must agree (timings excluded). The machine is shared:
each run first waits (up to --quiet-wait s) for the 1-minute load average to drop below 0.7,
and records the load it started at; with --repeat R the runs interleave and the best is kept.

`run()` returns the figures (the benchmark suite imports it) and writes the JSON artifact.

Also `python -m planner.bench.sweep_scaling`; benchmarks/ holds a thin caller.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from planner.paths import artifacts_dir
from planner.store import catalog
from planner.store import db as pdb
from planner.sweep import load_results, run_sweep

OUT = artifacts_dir() / "bench_sweep.json"

TIMING = ("wall_s", "solve_s", "build_s")


def best_i(xs: list[float]) -> int:
    return xs.index(min(xs))


def grid(db: Path, hours: float) -> dict:
    return {"base": {"db": str(db), "log": "summit-2021", "start": "2021-02-10T20:21:15",
                     "hours": hours, "pool_size": 1024, "workload": "hpo", "allocator": "dp"},
            "grid": {"tfwd": [60, 120, 300, 600], "pj_max": [5, 10, 15, 20]}}


def _deterministic(df) -> dict:
    out = {}
    for key, s in zip(df["cell_key"], df["summary_json"]):
        d = json.loads(s)
        out[key] = {k: v for k, v in d.items() if not any(k.startswith(t) for t in TIMING)}
    return out


def wait_quiet(max_load: float = 0.7, max_wait_s: float = 300.0) -> float:
    """Wait (up to max_wait_s) until the 1-minute load average drops below max_load: the
    machine is shared, and a speed-up measured beside other work says little. Returns it."""
    t0 = time.monotonic()
    while os.getloadavg()[0] >= max_load and time.monotonic() - t0 < max_wait_s:
        time.sleep(5)
    return os.getloadavg()[0]


def run(hours: float = 120.0, workers: tuple[int, ...] = (1, 2), out: Path | None = OUT,
        repeat: int = 1, quiet_wait_s: float = 300.0) -> dict:

    with tempfile.TemporaryDirectory(prefix="bench_sweep_") as tmp:
        tmp = Path(tmp)
        logdb = tmp / "logs.duckdb"
        con = pdb.connect(logdb)
        try:
            catalog.ensure_default(con)
        finally:
            con.close()
        g = grid(logdb, hours)
        runs = {}
        frames = {}
        walls: dict[int, list[float]] = {n: [] for n in workers}
        loads: dict[int, list[float]] = {n: [] for n in workers}
        cpus: dict[int, list[float]] = {n: [] for n in workers}
        for r in range(repeat):  # interleaved: 1, 2, 1, 2, ...
            for n in workers:
                res_db = tmp / f"sweep_w{n}_r{r}.duckdb"
                loads[n].append(round(wait_quiet(max_wait_s=quiet_wait_s), 2))
                ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                rep = run_sweep(g, out=res_db, executor="local", workers=n)
                wall = time.perf_counter() - t0
                ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the workers, once reaped
                cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
                walls[n].append(round(wall, 2))
                cpus[n].append(round(cpu, 2))
                print(f"[bench_sweep] {n} worker(s): {wall:.1f} s for {rep['cells']} cells "
                      f"(load before {loads[n][-1]})", file=sys.stderr)
                if walls[n][-1] <= min(walls[n]):
                    frames[n] = (load_results(res_db), rep)
        for n in workers:
            df, rep = frames[n]
            frames[n] = df
            best = best_i(walls[n])  # best of the repeats: the least disturbed run
            wall, cpu = walls[n][best], cpus[n][best]
            cell_s = df["wall_s"].astype(float)
            runs[str(n)] = {
                "workers": n, "wall_s": round(wall, 2), "wall_s_runs": walls[n],
                "cells": rep["cells"], "ok": rep["ok"],
                "errors": rep["errors"], "cells_per_min": round(60 * rep["cells"] / wall, 2),
                "cell_s_median": round(float(cell_s.median()), 3),
                "cell_s_min": round(float(cell_s.min()), 3),
                "cell_s_max": round(float(cell_s.max()), 3),
                "cell_s_sum": round(float(cell_s.sum()), 2),
                # cells in flight on average: ~n when the engine keeps every worker busy
                "concurrency": round(float(cell_s.sum()) / wall, 2),
                # CPU seconds the worker processes got, per worker per wall second: < 1 when
                # other work on the machine takes the cores
                "worker_cpu_s": cpu,
                "cpu_share_per_worker": round(cpu / (wall * n), 2),
                "loadavg_1min_before": loads[n],
            }
    w1, w2 = str(workers[0]), str(workers[-1])
    speedup = runs[w1]["wall_s"] / runs[w2]["wall_s"]
    equal = _deterministic(frames[workers[0]]) == _deterministic(frames[workers[-1]])
    fig = {
        "grid": {"cells": runs[w1]["cells"], "hours": hours, "pool_size": 1024,
                 "allocator": "dp", "workload": "hpo", "options": ["tfwd", "pj_max"]},
        "runs": runs,
        "speedup": round(speedup, 3),
        "parallel_efficiency": round(speedup / (workers[-1] / workers[0]), 3),
        "target_speedup": 1.7,
        "meets_target": speedup >= 1.7,
        "results_equal": equal,
        "cpu_count": os.cpu_count(),
        "headline": {
            f"16 cells, {w1} worker (s)": runs[w1]["wall_s"],
            f"16 cells, {w2} workers (s)": runs[w2]["wall_s"],
            "median cell (s)": runs[w1]["cell_s_median"],
            f"speed-up {w2} vs {w1} workers": round(speedup, 2),
            f"cells in flight, {w2} workers": runs[w2]["concurrency"],
            f"CPU share per worker, {w1} / {w2} workers":
                f"{runs[w1]['cpu_share_per_worker']} / {runs[w2]['cpu_share_per_worker']}",
            "load avg before (1 / 2 workers)":
                f"{runs[w1]['loadavg_1min_before'][best_i(walls[workers[0]])]} / "
                f"{runs[w2]['loadavg_1min_before'][best_i(walls[workers[-1]])]}",
            "same results": equal,
        },
    }
    if out:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(fig, indent=2))
    return fig


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=120.0, help="window per cell (default 120)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per worker count (best is kept)")
    ap.add_argument("--quiet-wait", type=float, default=300.0,
                    help="seconds to wait for a quiet machine before each run (default 300)")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    fig = run(hours=a.hours, out=Path(a.out), repeat=a.repeat, quiet_wait_s=a.quiet_wait)
    print(json.dumps({k: v for k, v in fig.items() if k != "headline"}, indent=2))
    return 0 if fig["results_equal"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
