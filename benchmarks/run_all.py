"""The benchmark suite: every benchmark of the project, one JSON with figures, machine, versions, date.

    python benchmarks/run_all.py [--out artifacts/bench_suite.json] [--only NAME ...] [--update] [--list]
    planner bench --json [--out FILE]          (the same, through the CLI)

Each benchmark is a script under benchmarks/ exposing a function that returns a dict of figures
(`run()` by convention; then `bench()`, then `main([])` if it returns a dict). The suite runs each one in its
own Python process (isolation: memory figures stay honest, a crash stays local), with a time
limit, and records its status: 'ok', 'missing' (script or function absent), 'error' (it raised
or timed out; the error text is kept). A missing or failing benchmark never stops the suite.

A benchmark dict may hold a "headline" dict: the few figures scripts/bench_table.py puts in
the README table (otherwise the table shows its top-level numeric figures).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "benchmarks"  # $PLANNER_BENCH_DIR overrides it (tests)
ARTIFACTS = ROOT / "artifacts"
DEFAULT_OUT = ARTIFACTS / "bench_suite.json"

# name -> (script under benchmarks/, what it measures). Order = run order.
BENCHMARKS: dict[str, tuple[str, str]] = {
    "ingest": ("bench_ingest.py", "log ingest into DuckDB: time, rows/s, peak memory"),
    "allocators": ("bench_allocators.py", "allocator grid: solve time per allocator and size"),
    "replay": ("bench_replay.py", "full replay of the Summit window: wall time, events/s"),
    "horizon": ("bench_horizon.py", "rolling-horizon MILP: build and solve time"),
    "sweep": ("bench_sweep.py", "16-cell sweep on 1 vs 2 workers: speed-up"),
    "profile": ("bench_profile.py", "operator views (hour x weekday, days, holes, waiting) on the shipped logs"),
    "sweep_memory": ("bench_sweep_memory.py", "10,000-cell sweep: peak memory of parent and workers"),
    "large": ("bench_large.py", "exact allocation at scale (hull, auto): 30x800 to 10,000x100,000"),
    "survival": ("bench_survival.py", "survival model fit on Summit; 14.9-day replay with and without the predictor"),
    "app": ("bench_app.py", "app response times: run to charts, page loads in Chromium"),
    "load": ("bench_load.py", "10 concurrent browser sessions: response times, server memory"),
    "upload_memory": ("bench_upload_memory.py", "a 300 MiB upload in Chromium: server peak RSS while it arrives"),
    "estimate": ("bench_estimate.py", "the run-time estimate against the replays' wall time (MILPs, paper links)"),
}
# Entry functions tried in order; main() is called with an empty argv (its defaults).
FUNCTIONS = ("run", "bench", "main")


def bench_dir() -> Path:
    return Path(os.environ.get("PLANNER_BENCH_DIR") or BENCH_DIR)
VERSION_PACKAGES = ("duckdb", "pyomo", "highspy", "streamlit", "pandas", "numpy", "pyarrow",
                    "dask", "distributed", "plotly")


def machine() -> dict:
    """CPU count and model, memory, OS."""
    model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gb = round(int(line.split()[1]) / 1024 ** 2, 2)
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        usable = os.cpu_count()
    return {"cpu_count": os.cpu_count(), "cpus_usable": usable,
            "cpu_model": model or platform.processor() or None, "memory_gb": mem_gb,
            "platform": platform.platform(), "hostname": platform.node()}


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in VERSION_PACKAGES:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    try:
        out["planner"] = version("harvest-planner")
    except PackageNotFoundError:
        out["planner"] = None
    try:
        out["git_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                           capture_output=True, text=True,
                                           timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        out["git_commit"] = None
    return out


def _load(script: Path):
    """The benchmark module, compiled from its source each time, never from a bytecode cache: Python
    validates a cache by the source's mtime in whole seconds and its size, so a benchmark edited
    within a second of its last load (as `--update` after an edit may) would otherwise run stale."""
    spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(script.parent))
    exec(compile(script.read_bytes(), str(script), "exec"), mod.__dict__)  # noqa: S102 (our own benchmark)
    return mod


def find_function(script: Path):
    """(module, function name) of the benchmark's dict-returning entry, or (module, None)."""
    mod = _load(script)
    for name in FUNCTIONS:
        fn = getattr(mod, name, None)
        if callable(fn):
            return mod, name
    return mod, None


def run_one(name: str, timeout_s: float | None = None) -> dict:
    """Run benchmark `name` in a child process; never raises."""
    script_name, what = BENCHMARKS[name]
    script = bench_dir() / script_name
    rec = {"script": f"benchmarks/{script_name}", "what": what}
    if not script.is_file():
        return {**rec, "status": "missing", "error": f"benchmarks/{script_name} not found"}
    with tempfile.TemporaryDirectory() as tmp:
        res_path = Path(tmp) / "result.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--one", name,
               "--result", str(res_path)]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return {**rec, "status": "error", "error": f"timed out after {timeout_s:.0f} s",
                    "wall_s": round(time.perf_counter() - t0, 2)}
        wall = round(time.perf_counter() - t0, 2)
        if res_path.is_file():
            child = json.loads(res_path.read_text())
            return {**rec, **child, "wall_s": wall}
        tail = " | ".join((proc.stderr or proc.stdout or "").strip().splitlines()[-3:])
        return {**rec, "status": "error", "error": f"exit {proc.returncode}: {tail}"[:2000],
                "wall_s": wall}


def _child(name: str, result: Path) -> int:
    """In the child process: import the script, call its function, write the result JSON."""
    script = bench_dir() / BENCHMARKS[name][0]
    try:
        mod, fn_name = find_function(script)
        if fn_name is None:
            out = {"status": "missing",
                   "error": f"{script.name} defines no {' or '.join(f + '()' for f in FUNCTIONS)}"}
        else:
            fn = getattr(mod, fn_name)
            figures = fn([]) if fn_name == "main" else fn()
            if not isinstance(figures, dict):
                out = {"status": "error",
                       "error": f"{script.name}:{fn_name}() returned {type(figures).__name__}, not dict"}
            else:
                out = {"status": "ok", "function": fn_name, "figures": figures}
    except BaseException as e:  # noqa: BLE001 - the suite records it
        msg = " ".join(str(e).split())
        out = {"status": "error", "error": f"{type(e).__name__}: {msg}"[:2000]}
    result.write_text(json.dumps(out, default=str))
    return 0


def run_suite(out: str | Path | None = DEFAULT_OUT, only: list[str] | None = None,
              timeout_s: float | None = 1800, progress=None, update: bool = False) -> dict:
    """Run the benchmarks (all, or `only`), write the suite JSON to `out` (None: don't write).

    update=True keeps the other benchmarks' records of an existing `out` (each record has its
    own date), so one benchmark can be re-run without re-running the suite."""
    names = list(BENCHMARKS) if not only else list(only)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        from planner.errors import InputError

        raise InputError(f"unknown benchmark '{unknown[0]}' (known: {', '.join(BENCHMARKS)}, all)",
                         field="what")
    t0 = time.perf_counter()
    started = _dt.datetime.now(_dt.UTC)
    results = {}
    if update and out and Path(out).is_file():
        old = json.loads(Path(out).read_text()).get("benchmarks", {})
        results = {n: old[n] for n in BENCHMARKS if n in old and n not in names}
    for i, name in enumerate(names):
        if progress:
            progress(i, len(names), name)
        when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        results[name] = {"date": when, **run_one(name, timeout_s=timeout_s)}
        print(f"[suite] {name}: {results[name]['status']} ({results[name].get('wall_s', '-')} s)",
              file=sys.stderr)
    suite = {
        "date": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "versions": versions(),
        "wall_s": round(time.perf_counter() - t0, 2),
        "counts": {s: sum(r["status"] == s for r in results.values()) for s in ("ok", "missing", "error")},
        "benchmarks": {n: results[n] for n in BENCHMARKS if n in results},
    }
    if out:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(suite, indent=2, default=str))
        suite["out"] = str(out)
    return suite


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="suite JSON (default %(default)s)")
    ap.add_argument("--only", nargs="*", choices=list(BENCHMARKS), help="run only these")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per benchmark")
    ap.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    ap.add_argument("--update", action="store_true",
                    help="keep the other benchmarks' results already in --out")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        return _child(a.one, Path(a.result))
    if a.list:
        for n, (s, w) in BENCHMARKS.items():
            print(f"{n:12s} benchmarks/{s:22s} {'present' if (bench_dir() / s).is_file() else 'MISSING'}  {w}")
        return 0
    suite = run_suite(out=a.out, only=a.only, timeout_s=a.timeout, update=a.update)
    print(json.dumps({k: suite[k] for k in ("date", "wall_s", "counts")} | {"out": suite.get("out")},
                     indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
