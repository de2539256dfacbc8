"""Benchmark: allocators on BFTrainer's Fig. 5 grid (J in 5,10,20,30 x pool 100,200,400,800).

    python benchmarks/bench_allocators.py [--reps 5] [--node-reps 2] [--time-limit 10]
    planner bench allocators --json [--jobs 5,10 --pool 100,200 --reps N]   (the same)

Writes artifacts/bench_allocators.json (one row per allocator and cell, see planner.bench.suite).
Targets (issue 3), at J=30 and pool 800: dp median <= 1 ms, milp median <= 50 ms end to end,
both equal to the milp-node optimum; milp-node's time reported beside them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.bench.suite import ARTIFACTS, bench_allocators, headline  # noqa: E402


def run(reps: int = 5, node_reps: int = 2, time_limit_s: float = 10.0) -> dict:
    rows = bench_allocators(reps=reps, node_reps=node_reps, time_limit_s=time_limit_s,
                            out=ARTIFACTS / "bench_allocators.json")
    return {"headline": headline(rows), "rows": rows, "out": str(ARTIFACTS / "bench_allocators.json")}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--node-reps", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=10.0)
    a = ap.parse_args()
    print(json.dumps(run(a.reps, a.node_reps, a.time_limit)["headline"], indent=2))
