"""Benchmark: exact allocation at cloud scale, `hull` (and `dp` where it is affordable).

    python benchmarks/bench_large.py [--reps 5] [--sizes 30x800,1000x10000] [--dp-max-cells 2e7]
                                     [--out artifacts/bench_large.json]

Instances (large_instance): J Trainers on a pool of N nodes; each Trainer runs one of the 7
shipped ImageNet curves (random), Nmin 1..4, Nmax 16..64, Rup 18 s, Rdw 12 s, T_fwd 120 s;
with probability 3/4 it holds a uniform Nmin..Nmax share of random pool nodes (cut to what is
left), a few of those nodes preempted (not in the pool any more). Seed = rep. Family
"identical": BFTrainer's Fig. 5 instances (planner.allocators.instances.fig5_instance: every Trainer
ShuffleNet, Nmin 1, Nmax 64), the degenerate case for the repair (many tied Trainers).

Per size: median and p95 decision time of `allocate("hull")` end to end (value structure,
bound, repair, node map, objective), in wall and in CPU time (the machine is shared), median
solve time, peak memory of the allocate call (tracemalloc, numpy included), the share of
instances proven optimal (status optimal), how they were proven (bound alone / repair DP),
and, where J x N <= --dp-max-cells, whether `dp` agrees and its time. The same figures for
`allocate("auto")` (dp, dp-reduced or hull by size, as replays choose it), which answered,
and a check that it equals hull's value. Targets (issue 17), on auto's median: 30x800 <= 0.5
ms, 1,000x10,000 <= 20 ms, 10,000x100,000 <= 1 s. Writes artifacts/bench_large.json.

Also `python -m planner.bench.large`; benchmarks/ holds a thin caller.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from planner.allocators import AllocOptions, allocate
from planner.allocators.base import AllocState, TrainerState
from planner.allocators.instances import fig5_instance
from planner.paths import artifacts_dir
from planner.workload.trainers import imagenet_curves

OUT = artifacts_dir() / "bench_large.json"
SIZES = ((30, 800), (100, 2000), (1000, 10000), (3000, 30000), (10000, 100000))
TARGETS_MS = {(30, 800): 0.5, (1000, 10000): 20.0, (10000, 100000): 1000.0}


def large_instance(jobs: int, pool: int, seed: int):
    """A cloud-scale decision (see the module docstring)."""

    rng = np.random.default_rng(seed)
    curves = list(imagenet_curves().items())
    nodes = rng.permutation(pool)
    model = rng.integers(len(curves), size=jobs)
    nmin = rng.integers(1, 5, size=jobs)
    nmax = rng.integers(16, 65, size=jobs)
    holds = rng.random(jobs) < 0.75
    size = rng.integers(0, 1 << 30, size=jobs)
    pos = 0
    ts = []
    for j in range(jobs):
        c = 0
        if holds[j]:
            c = min(int(nmin[j] + size[j] % (nmax[j] - nmin[j] + 1)), pool - pos)
            c = c if c >= nmin[j] else 0
        cur = nodes[pos:pos + c].tolist()
        pos += c
        if c and j % 10 == 0:
            cur.append(pool + j)  # preempted: no longer in the pool
        name, curve = curves[int(model[j])]
        ts.append(TrainerState(id=f"t{j:05d}", nmin=int(nmin[j]), nmax=int(nmax[j]), curve=curve,
                               current=tuple(sorted(cur)), submit_s=float(j), model=name))
    return AllocState(pool=tuple(range(pool)), trainers=tuple(ts))


def measure(jobs: int, pool: int, reps: int, dp_max_cells: float, family: str = "mixed") -> dict:

    opts = AllocOptions()
    e2e, cpu, solve, peak, statuses, proofs, agree, dp_s, gaps = [], [], [], [], {}, {}, [], [], []
    auto_e2e, auto_cpu, auto_peak, auto_paths, auto_optimal = [], [], [], {}, 0
    for rep in range(reps):
        st = large_instance(jobs, pool, rep) if family == "mixed" else fig5_instance(jobs, pool, rep)
        allocate("hull", st, opts)  # warm the caches of this process once per instance shape
        t0, c0 = time.perf_counter(), time.process_time()
        r = allocate("hull", st, opts)
        e2e.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        solve.append(r.solve_s)
        tracemalloc.start()
        allocate("hull", st, opts)
        peak.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        statuses[r.status] = statuses.get(r.status, 0) + 1
        gap = float(r.message.split(", gap ")[1].split(" ")[0])
        bound = float(r.message.split("; bound ")[1].split(",")[0])
        gaps.append(0.0 if r.status == "optimal" else gap / max(1.0, abs(bound)))
        proof = r.message.split("proof: ")[1].split(" (")[0]
        proofs[proof] = proofs.get(proof, 0) + 1
        allocate("auto", st, opts)
        t0, c0 = time.perf_counter(), time.process_time()
        a = allocate("auto", st, opts)
        auto_e2e.append(time.perf_counter() - t0)
        auto_cpu.append(time.process_time() - c0)
        tracemalloc.start()
        allocate("auto", st, opts)
        auto_peak.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        auto_paths[a.allocator] = auto_paths.get(a.allocator, 0) + 1
        auto_optimal += a.status == "optimal"
        if abs(a.objective - r.objective) > 1e-9 * max(1.0, abs(r.objective)):
            raise AssertionError(f"auto and hull differ at {jobs}x{pool} seed {rep}: {a.objective} vs {r.objective}")
        if jobs * pool <= dp_max_cells:
            t0 = time.perf_counter()
            d = allocate("dp", st, opts)
            dp_s.append(time.perf_counter() - t0)
            agree.append(abs(d.objective - r.objective) <= 1e-9 * max(1.0, abs(d.objective)))
    row = {
        "family": family, "jobs": jobs, "pool": pool, "reps": reps,
        "hull_e2e_ms_median": 1e3 * statistics.median(e2e),
        "hull_e2e_ms_p95": 1e3 * float(np.percentile(e2e, 95)),
        "hull_e2e_cpu_ms_median": 1e3 * statistics.median(cpu),  # CPU time: less sensitive to load
        "hull_solve_ms_median": 1e3 * statistics.median(solve),
        "peak_mem_mb_median": statistics.median(peak) / 2 ** 20,
        "proven_optimal_share": statuses.get("optimal", 0) / reps,
        "rel_gap_max": max(gaps),
        "statuses": statuses, "proofs": proofs,
        "dp_e2e_ms_median": 1e3 * statistics.median(dp_s) if dp_s else None,
        "matches_dp": sum(agree) / len(agree) if agree else None,
        # auto: the exact allocator chosen by size (dp, dp-reduced or hull), as a replay runs it
        "auto_e2e_ms_median": 1e3 * statistics.median(auto_e2e),
        "auto_e2e_ms_p95": 1e3 * float(np.percentile(auto_e2e, 95)),
        "auto_e2e_cpu_ms_median": 1e3 * statistics.median(auto_cpu),
        "auto_peak_mem_mb_median": statistics.median(auto_peak) / 2 ** 20,
        "auto_proven_optimal_share": auto_optimal / reps,
        "auto_paths": auto_paths,
        "target_ms": TARGETS_MS.get((jobs, pool)),
    }
    row["meets_target"] = None if row["target_ms"] is None else row["auto_e2e_ms_median"] <= row["target_ms"]
    return row


def run(sizes=SIZES, reps: int = 5, dp_max_cells: float = 2e7, out: str | Path | None = OUT,
        families=("mixed", "identical")) -> dict:
    rows = []
    for family in families:
        for J, N in sizes:
            row = measure(J, N, reps, dp_max_cells, family)
            print(json.dumps(row), file=sys.stderr)
            rows.append(row)
    res = {"benchmark": "large", "load_avg_1min": os.getloadavg()[0], "rows": rows,
           "headline": {f"{k}_{r['family']}_{r['jobs']}x{r['pool']}_ms": round(r[f"{k}_e2e_ms_median"], 3)
                        for r in rows for k in ("auto", "hull")}}
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(res, indent=2))
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default=",".join(f"{j}x{n}" for j, n in SIZES))
    ap.add_argument("--dp-max-cells", type=float, default=2e7, help="run dp too where J*N <= this")
    ap.add_argument("--families", default="mixed,identical",
                    help="mixed: large_instance; identical: Fig. 5 (all ShuffleNet, Nmin 1, Nmax 64)")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    sizes = [tuple(int(v) for v in s.split("x")) for s in a.sizes.split(",")]
    res = run(sizes, a.reps, a.dp_max_cells, a.out, tuple(a.families.split(",")))
    print(json.dumps(res["headline"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
