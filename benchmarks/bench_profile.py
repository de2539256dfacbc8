"""Benchmark: the operator views (planner.idle.views) on the whole shipped logs.

    python benchmarks/bench_profile.py [--db PATH]

Loads the shipped KTH SP2 and ANL Theta SWF logs and the Summit node log into a database (a
temporary one by default) and times each view over each whole log, best of 3 (seconds).
Writes artifacts/bench_profile.json. Target: every view of every shipped log within 1 s, so the
Idle page's operator views draw in interactive time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner import logs, paths  # noqa: E402
from planner.bench.suite import ARTIFACTS  # noqa: E402
from planner.idle import job_views, views
from planner.store import catalog, db

DATA = paths.DATASETS
SHIPPED = ("KTH-SP2-1996-2.1-cln.swf.gz", "ANL-Theta-2022.swf.gz")
VIEWS = {"by_hour_weekday": views.by_hour_weekday, "by_day": views.by_day, "holes": views.holes,
         "idle_while_waiting": job_views.idle_while_waiting, "by_partition": job_views.by_partition}


def run(db_path: str | None = None, reps: int = 3) -> dict:
    tmp = None
    if db_path is None:
        tmp = tempfile.TemporaryDirectory()
        db_path = str(Path(tmp.name) / "bench.duckdb")
    con = db.connect(db_path)
    names = [logs.ingest(con, DATA / f)["log"] for f in SHIPPED] + [catalog.ensure_default(con)]
    rows = []
    for name in names:
        steps = con.execute("SELECT count(*) FROM idle_series JOIN logs USING (log_id) WHERE name = ?",
                            [name]).fetchone()[0]
        for view, fn in VIEWS.items():
            best = min(_timed(fn, con, name) for _ in range(reps))
            rows.append({"log": name, "view": view, "steps": int(steps), "best_s": best})
            print(f"{name:28s} {view:20s} {steps:>8,} steps {best:7.3f} s")
    con.close()
    out = {"rows": rows, "max_s": max(r["best_s"] for r in rows), "target_s": 1.0}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "bench_profile.json").write_text(json.dumps(out, indent=2))
    if tmp is not None:
        tmp.cleanup()
    return out


def _timed(fn, con, name) -> float:
    t = time.perf_counter()
    fn(con, name)
    return time.perf_counter() - t


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=None, help="database file (default: a temporary one)")
    r = run(ap.parse_args().db)
    print(f"slowest view: {r['max_s']:.3f} s (target {r['target_s']} s)")
