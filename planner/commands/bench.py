"""`planner bench <what>`: run a benchmark of planner.bench.suite (figures, not tests).

`planner bench allocators --json [--jobs 5,10 --pool 100,200 --reps N]` prints the rows of the
allocator grid and writes artifacts/bench_allocators.json. Without <what>, the whole suite of
benchmarks/run_all.py runs (if present) and writes artifacts/bench_suite.json.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

from planner import paths
from planner.allocators import REGISTRY
from planner.bench import suite
from planner.bench.suite import BENCHMARKS
from planner.errors import InputError

NAME = "bench"
HELP = "run a benchmark: `allocators` (BFTrainer Fig. 5 grid), or the whole suite without a name"


def _ints(text: str, what: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(x) for x in str(text).split(",") if x.strip())
    except ValueError:
        raise InputError(f"must be a comma list of integers, got {text!r}", field=what) from None
    if not vals or any(v < 0 for v in vals):
        raise InputError(f"must be a comma list of integers >= 0, got {text!r}", field=what)
    return vals


def _suite(out: str | None) -> dict:
    """The whole suite: benchmarks/run_all.py (a checkout's program: each benchmark script in its
    own process) run as a child program; its JSON summarized. The library imports no script."""
    script = paths.ROOT / "benchmarks" / "run_all.py"
    if not script.is_file():
        raise InputError("benchmarks/run_all.py not found (a source checkout has it); name a benchmark",
                         field="what")
    out = Path(out) if out else paths.artifacts_dir() / "bench_suite.json"
    proc = subprocess.run([sys.executable, str(script), "--out", str(out)], cwd=paths.ROOT,
                          stdout=subprocess.DEVNULL)  # its progress goes to stderr, as ours
    if proc.returncode != 0 or not out.is_file():
        raise RuntimeError(f"benchmarks/run_all.py exited with {proc.returncode}")
    suite = json.loads(out.read_text())
    return {k: suite.get(k) for k in ("date", "wall_s", "counts")} | {"out": str(out)} | {
        "benchmarks": {n: {k: r.get(k) for k in ("status", "wall_s", "error") if r.get(k) is not None}
                       | ({"headline": r["figures"]["headline"]}
                          if isinstance((r.get("figures") or {}).get("headline"), dict) else {})
                       for n, r in suite.get("benchmarks", {}).items()}}


def add_arguments(p):
    p.add_argument("what", nargs="?", default=None, choices=list(BENCHMARKS) + ["suite", "all"],
                   help="which benchmark (default: the whole suite of benchmarks/run_all.py)")
    p.add_argument("--jobs", default=None, help="comma list of Trainer counts J (default 5,10,20,30)")
    p.add_argument("--pool", default=None, help="comma list of pool sizes (default 100,200,400,800)")
    p.add_argument("--reps", type=int, default=None, help="random instances per cell (default 5)")
    p.add_argument("--allocators", default=None, help="comma list of allocators (default: all but horizon-milp)")
    p.add_argument("--node-reps", type=int, default=None,
                   help="instances per cell for milp-node (default 2; it is slow)")
    p.add_argument("--time-limit", type=float, default=None, help="MILP time limit per decision, s (default 10)")
    p.add_argument("--out", default=None, help="where to write the JSON (default artifacts/bench_<what>.json)")


def run(args):
    if args.what in (None, "suite", "all"):
        return _suite(args.out)
    kw = {}
    if args.jobs is not None:
        kw["jobs"] = _ints(args.jobs, "jobs")
    if args.pool is not None:
        kw["pool"] = _ints(args.pool, "pool")
    if args.reps is not None:
        if args.reps < 1:
            raise InputError("must be >= 1", field="reps")
        kw["reps"] = args.reps
    if args.node_reps is not None:
        kw["node_reps"] = max(args.node_reps, 0)
    if args.time_limit is not None:
        if args.time_limit <= 0:
            raise InputError("must be > 0", field="time-limit")
        kw["time_limit_s"] = args.time_limit
    if args.allocators is not None:
        names = [x.strip() for x in args.allocators.split(",") if x.strip()]
        for n in names:
            if n not in REGISTRY:
                raise InputError(f"unknown allocator {n!r}; choose from {', '.join(REGISTRY)}", field="allocators")
        kw["allocators"] = names
    if args.out is not None:
        kw["out"] = args.out
    fn = suite.BENCHMARKS[args.what]
    accepted = inspect.signature(fn).parameters
    return fn(**{k: v for k, v in kw.items() if k in accepted})
