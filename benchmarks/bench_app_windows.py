"""bench_app_windows: the app's many-window run of the whole Summit log (every 24 h window, dp vs
equal share, the Planner's defaults: 1,024 nodes, HPO, each replay with its cost-free twin) as
the Planner and Compare start it (appkit.worker.start -> appkit.jobs.job_windows, a budgeted
worker process), with 1 process (in the worker itself, as before issue 24's executors) and with
a pool of 2 local processes.

    python benchmarks/bench_app_windows.py [--procs 1 2] [--out docs/studies/windows_app_summit-2021.json]

Wall = from start() to the outcome (worker start-up, imports, the pool's spawn included); CPU =
the worker's and its pool processes' user + system time (RUSAGE_CHILDREN: reaped descendants). The
machine is shared: each run first waits (up to 300 s) for the 1-minute load average to drop
below 0.7 and records the load it started at.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.bench.sweep_scaling import wait_quiet  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "docs" / "studies" / "windows_app_summit-2021.json"


def run(procs=(1, 2), out: Path | None = OUT, quiet_wait_s: float = 300.0) -> dict:
    from appkit import windows_view, worker, workspace
    from appkit.state import DEFAULTS
    from planner.store import catalog
    from planner.store import db as pdb

    os.environ["PLANNER_APP_USER_PROCS"] = str(max(procs))
    os.environ["PLANNER_APP_TIME_S"] = "3600"
    res = {"what": "whole Summit log, every 24 h window, dp vs equal-share, app defaults (1,024 nodes, HPO, "
                   "cost-free twin per replay), through appkit.worker as the pages start it",
           "cpus": os.cpu_count(), "runs": []}
    with tempfile.TemporaryDirectory(prefix="bench_app_windows_") as tmp:
        tmp = Path(tmp)
        db = tmp / "logs.duckdb"
        con = pdb.connect(db)
        try:
            catalog.ensure_default(con)
        finally:
            con.close()
        sc = {**DEFAULTS, "allocator": "dp", "baseline": "equal-share"}
        for n in procs:
            ws = workspace.path(tmp, workspace.create(tmp))
            load = wait_quiet(0.7, quiet_wait_s)
            cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            job = worker.start(ws, "windows", {"scenario": sc, "db": str(db), "hours": 24.0, "count": None,
                                               "stride": None, "ws_dir": str(ws), "allocators": ["dp", "equal-share"],
                                               "baseline": "equal-share", "name": "latest", "scheduler": None},
                               procs=n)
            outcome = worker.run_to_end(job, poll_s=0.2)
            wall = time.perf_counter() - t0
            cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the worker and its reaped pool processes
            cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
            if outcome["status"] != "ok":
                raise SystemExit(f"the run with {n} processes ended {outcome}")
            saved = windows_view.load(ws)
            p = saved["summary"]["paired"]["dp"]
            row = {"procs_asked": n, "procs_granted": job.procs, "executor": outcome["result"]["executor"],
                   "windows": saved["windows"], "replays": len(saved["rows"]),
                   "distinct_processes": len({r["worker"] for r in saved["rows"]}),
                   "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "run_windows_wall_s": round(saved["wall_s"], 1),
                   "load_avg_before": round(load, 2), "load_avg_after": round(os.getloadavg()[0], 2),
                   "sentence": p["sentence"]}
            print(json.dumps(row), flush=True)
            res["runs"].append(row)
            worker.cleanup(job)
            shutil.rmtree(ws, ignore_errors=True)
    if len(res["runs"]) >= 2:
        res["speedup"] = round(res["runs"][0]["wall_s"] / res["runs"][-1]["wall_s"], 2)
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(res, indent=1) + "\n")
        print(f"wrote {out}", file=sys.stderr)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--quiet-wait", type=float, default=300.0)
    a = ap.parse_args(argv)
    run(tuple(a.procs), a.out, a.quiet_wait)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
