"""Peak memory of a 10,000-cell sweep: the engine's own cost (resolve, results table, Parquet copy).

    python benchmarks/bench_sweep_memory.py [--cells-per-side 100] [--workers 2] [--out FILE]

The grid is seed x pj_max = 100 x 100 = 10,000 real simulator cells, each kept tiny (a fixed
pool of 8 nodes, 15 minutes, 2 HPO Trainers: ~20 ms of replay) so that the figure measures the
sweep machinery, not one big replay. Run with the cap lifted (max_cells=None). Recorded:
peak RSS of the parent process (resolving the 10,000 cells, writing one committed row per cell,
refreshing the Parquet copy) sampled every 50 ms and from getrusage, peak RSS of one worker
process, the results file size, wall time and cells per second.

`run()` returns the figures (the benchmark suite imports it) and writes the JSON artifact.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.paths import artifacts_dir  # noqa: E402

OUT = artifacts_dir() / "bench_sweep_memory.json"
MIB = 1 << 20


def grid(side: int) -> dict:
    return {"base": {"pool": "fixed", "pool_size": 8, "hours": 0.25, "count": 2, "workload": "hpo"},
            "grid": {"seed": list(range(side)), "pj_max": list(range(1, side + 1))}}


class PeakRSS:
    """Samples this process's RSS and its children's (the workers) every `every_s` seconds."""

    def __init__(self, every_s: float = 0.05):
        import psutil

        self.proc, self.every_s = psutil.Process(), every_s
        self.parent = self.child = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        import psutil

        while not self._stop.wait(self.every_s):
            try:
                self.parent = max(self.parent, self.proc.memory_info().rss)
                for c in self.proc.children(recursive=True):
                    self.child = max(self.child, c.memory_info().rss)
            except psutil.Error:
                pass

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def run(side: int = 100, workers: int = 2, out: Path | None = OUT) -> dict:
    from planner.sweep import load_results, resolve, run_sweep
    from planner.sweep.grid import parse_grid

    g = grid(side)
    n = side * side
    with tempfile.TemporaryDirectory() as tmp:
        res = Path(tmp) / "res.duckdb"
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        t0 = time.perf_counter()
        cells = resolve(parse_grid(g), max_cells=None)
        resolve_s = time.perf_counter() - t0
        assert len(cells) == n
        del cells
        with PeakRSS() as peak:
            t0 = time.perf_counter()
            rep = run_sweep(g, out=res, workers=workers, max_cells=None)
            wall = time.perf_counter() - t0
        peak_parent = max(peak.parent, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
        df = load_results(res)
        ok = int((df["status"] == "ok").sum())
        figures = {
            "cells": n, "ok": ok, "errors": rep["errors"], "workers": workers,
            "resolve_10k_s": round(resolve_s, 2),
            "wall_s": round(wall, 1), "cells_per_s": round(n / wall, 1),
            "parent_peak_rss_mib": round(peak_parent / MIB, 1),
            "parent_rss_before_mib": round(rss0 / MIB, 1),
            "worker_peak_rss_mib": round(peak.child / MIB, 1),
            "results_db_mib": round(res.stat().st_size / MIB, 2),
            "parquet_mib": round(Path(rep["parquet"]).stat().st_size / MIB, 2),
        }
    figures["headline"] = {"10k-cell sweep: parent peak MiB": figures["parent_peak_rss_mib"],
                           "worker peak MiB": figures["worker_peak_rss_mib"],
                           "cells/s": figures["cells_per_s"]}
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(figures, indent=2))
    return figures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells-per-side", type=int, default=100, help="grid side (cells = side^2)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    print(json.dumps(run(a.cells_per_side, a.workers, Path(a.out)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
