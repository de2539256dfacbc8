"""The many-window study (docs/windows.md): per log, per-window distributions of dp vs equal
share vs greedy, the cost-free and clairvoyant gaps, the survival options' share of the
cost-free headroom, and the calibration of P(node stays idle >= T).

    python scripts/windows_study.py run [--part NAME] [--workers 2]   # writes docs/studies/windows_*.json
    python scripts/windows_study.py doc                               # writes docs/windows.md from them

Every figure in docs/windows.md comes from the committed JSON; `run` re-measures it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "studies"
DB = ROOT / "artifacts" / "windows_study.duckdb"

LOGS = {  # name -> (file, pool size for the day windows)
    "summit-2021": (None, 1024),
    "KTH-SP2": ("planner/datasets/KTH-SP2-1996-2.1-cln.swf.gz", None),
    "ANL-Theta": ("planner/datasets/ANL-Theta-2022.swf.gz", 1024),
}
ALLOCATORS = ["dp", "equal-share", "greedy"]


def ensure_logs():
    from planner import logs
    from planner.store import catalog, db

    DB.parent.mkdir(parents=True, exist_ok=True)
    con = db.connect(DB)
    try:
        catalog.ensure_default(con)
        have = set(db.log_names(con))
        for name, (path, _) in LOGS.items():
            if path and name not in have:
                logs.ingest(con, ROOT / path, name=name)
    finally:
        con.close()


def write(name: str, obj: dict):
    from planner.cli import _clean

    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"windows_{name}.json").write_text(json.dumps(_clean(obj), indent=1) + "\n")
    print(f"wrote docs/studies/windows_{name}.json", file=sys.stderr)


def strip(out: dict) -> dict:
    keep = ("window", "start", "allocator", "status", "error", "utilization_efficiency",
            "cost_free_utilization_efficiency", "clairvoyant_utilization_efficiency", "bound_share",
            "allocated_share", "trainers_completed", "mean_pool_nodes", "clairvoyant_status", "clairvoyant_solve_s",
            "wall_s")
    out = dict(out)
    out["rows"] = [{k: r.get(k) for k in keep} for r in out["rows"]]
    return out


def part_days(workers: int, logs):
    """Day windows: Summit every 24 h window of the log; the SWF logs 6 random 24 h windows."""
    from planner.replay import windows as W

    for log in logs:
        pool_size = LOGS[log][1]
        name, t0, t1 = W.log_span(str(DB), log)
        ws = W.window_set(t0, t1, 24, count=None if log == "summit-2021" else 6, seed=0)
        base = {"db": str(DB), "log": log, "pool_size": pool_size}
        t = time.perf_counter()
        out = W.run_windows(base, ws, ALLOCATORS, executor="local", workers=workers,
                            progress=lambda d, n: print(f"\r{log} {d}/{n}", end="", file=sys.stderr))
        print(file=sys.stderr)
        out.update(log=log, pool_size=pool_size, window_hours=24, random=log != "summit-2021",
                   log_span_h=(t1 - t0) / 3600, measured_wall_s=time.perf_counter() - t, cpus=os.cpu_count(),
                   load_avg=os.getloadavg())
        write(f"days_{log}", strip(out))


def part_bound(workers: int, logs):
    """Clairvoyant bound: 4 random 1 h windows per log, 16 nodes, 6 Trainers."""
    from planner.replay import windows as W

    for log in logs:
        name, t0, t1 = W.log_span(str(DB), log)
        ws = W.window_set(t0, t1, 1, count=4, seed=1)
        base = {"db": str(DB), "log": log, "pool_size": 16, "count": 6, "interarrival_s": 300}
        first = W.run_windows({**base, "bound": "clairvoyant"}, ws, ["dp"], executor="local", workers=workers)
        rest = W.run_windows(base, ws, ["equal-share", "greedy"], executor="local", workers=workers)
        bound = {r["window"]: r for r in first["rows"]}
        rows = first["rows"] + rest["rows"]
        for r in rows:  # the bound is the window's, whatever the allocator
            b = bound.get(r["window"]) or {}
            r["clairvoyant_utilization_efficiency"] = b.get("clairvoyant_utilization_efficiency")
            cu, u = r["clairvoyant_utilization_efficiency"], r["utilization_efficiency"]
            r["bound_share"] = u / cu if (u is not None and cu) else None
            r["clairvoyant_status"] = b.get("clairvoyant_status")
            r["clairvoyant_solve_s"] = b.get("clairvoyant_solve_s")
        out = {"windows": len(ws), "allocators": ALLOCATORS, "rows": rows, "summary": W.summarize(rows, ALLOCATORS),
               "log": log, "scenario": base}
        write(f"bound_{log}", strip(out))


def part_survival(workers: int, logs):
    """Summit: dp with the survival options vs plain dp, 3 random 24 h windows after the first 3 days."""
    from planner.replay import windows as W

    name, t0, t1 = W.log_span(str(DB), "summit-2021")
    ws = W.window_set(t0 + 3 * 86400, t1, 24, count=3, seed=2)
    base = {"db": str(DB), "log": "summit-2021", "pool_size": 1024, "rup": 18, "rdw": 12}
    runs = {}
    for label, extra in (("dp", {}), ("predicted nodes", {"node_choice": "predicted"}),
                         ("adaptive T_fwd", {"tfwd_rule": "adaptive"})):
        runs[label] = W.run_windows({**base, **extra}, ws, ["dp"], executor="local", workers=workers)["rows"]
    write("survival_summit-2021", {"windows": len(ws), "scenario": base, "runs": runs})


def part_calibration(workers: int, logs):
    from planner.idle import fragments as F
    from planner.predict.calibration import calibrate
    from planner.predict.survival import Fragments
    from planner.store import catalog
    from planner.times import format_iso

    for log in logs:
        con, name = catalog.open_log(str(DB), log)
        try:
            fr = Fragments.of(F.characterize(con, name, None, None, None))
        finally:
            con.close()
        cut = fr.t0 + 0.7 * (fr.t1 - fr.t0)
        out = calibrate(fr, cut)
        write(f"calibration_{log}", {"log": log, "test_start": format_iso(cut), "derived_identity": fr.derived,
                                     **out})


def write_doc():
    pass


PARTS = {"days": part_days, "bound": part_bound, "survival": part_survival, "calibration": part_calibration}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("run", "doc"))
    ap.add_argument("--part", action="append", help="NAME or NAME:LOG (parts: days, bound, survival, calibration)")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    if a.what == "run":
        ensure_logs()
        for p in a.part or PARTS:
            name, _, log = p.partition(":")
            PARTS[name](a.workers, [log] if log else list(LOGS))
    else:
        write_doc()


if __name__ == "__main__":
    main()
