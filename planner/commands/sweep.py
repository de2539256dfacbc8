"""`planner sweep`: run a grid of simulate scenarios on local processes or a Dask cluster."""

from __future__ import annotations

import sys

from planner.errors import InputError
from planner.sweep import MAX_CELLS, SweepInterrupted, run_sweep
from planner.sweep.run import OUTPUT_CLOSED

NAME = "sweep"
HELP = ("run a grid of `planner simulate` scenarios (JSON/YAML grid file) on local processes "
        "or a Dask cluster; resumable results in a DuckDB table + Parquet")


def add_arguments(p) -> None:
    p.add_argument("--grid", required=True, metavar="FILE",
                   help='grid file (.json/.yaml): {"base": {option: value}, '
                        '"grid": {option: [values, ...]}}, options named as in `planner simulate`')
    p.add_argument("--executor", choices=["local", "dask"], default="local",
                   help="local: a process pool; dask: a Dask LocalCluster, or --scheduler")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                   help="address of a running Dask scheduler (with --executor dask)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes (default: the CPU count; ignored with --scheduler)")
    p.add_argument("--out", required=True, metavar="PATH",
                   help="results DuckDB file (table sweep_results); Parquet copy next to it. "
                        "Must not be the log database. Re-running skips finished cells.")

    p.add_argument("--max-cells", type=int, default=None, metavar="N",
                   help=f"run a grid of up to N cells (default {MAX_CELLS}, the cap of the app's Compare "
                        "page); a bigger grid is refused before anything runs")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def run(args) -> dict:
    max_cells = MAX_CELLS if args.max_cells is None else args.max_cells
    if max_cells < 1:
        raise InputError(f"must be >= 1, got {max_cells}", field="max-cells")
    try:
        return run_sweep(args.grid, out=args.out, executor=args.executor, workers=args.workers,
                         scheduler=args.scheduler, bar=not args.no_progress, max_cells=max_cells)
    except SweepInterrupted as e:
        if e.report.get("interrupted") == OUTPUT_CLOSED:  # `2>&1 | head`: report what ran, exit 0
            return e.report
        try:  # the CLI exits 130; say what was kept
            print(f"planner sweep: {e}", file=sys.stderr)
        except OSError:
            pass
        raise
