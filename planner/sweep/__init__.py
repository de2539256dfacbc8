"""Scenario sweeps: a grid of `planner simulate` scenarios on local processes or a Dask cluster.

A grid file (JSON or YAML) holds `{"base": {option: value}, "grid": {option: [values, ...]}}`
where options are `planner simulate` option names (dashes or underscores). The cells are the
cartesian product of the grid lists, each laid over `base`. Every cell runs the simulator in a
worker process; the parent process alone writes the results, one committed row per finished
cell, into the table `sweep_results` of a DuckDB file (the `out` database, never the log
database) and refreshes a Parquet copy next to it (`out` with suffix `.parquet`).

Re-running the same grid into the same `out` skips the cells already finished with status 'ok'
(cells are identified by `cell_key`, a hash of the fully resolved scenario), so a killed sweep
loses at most the cells that were in flight. A cell that fails is recorded with status 'error'
and its error text; the sweep goes on, and a re-run retries it. SIGINT/SIGTERM stop a sweep
within seconds: the workers are stopped, the finished cells kept (SweepInterrupted).

Modules, by concern:
  grid       parse and check grid files, count and resolve the cells (bounded input)
  store      the results table (DuckDB + Parquet), load_results
  executors  one protocol over local processes and Dask; the worker-side cell runner
  run        the run loop: run_sweep

Entry points: `run_sweep(grid, executor=..., workers=..., out=..., progress=cb)` and
`load_results(out)`; `load_grid(path)` parses and checks a grid file.
"""

from planner.sweep.executors import (
    DASK_CONNECT_TIMEOUT_S,
    EXECUTORS,
    DaskExecutor,
    Executor,
    LocalExecutor,
    make_executor,
    run_cell,
)
from planner.sweep.grid import (
    MAX_CELLS,
    MAX_GRID_BYTES,
    MAX_WORKLOAD_BYTES,
    Cell,
    Grid,
    cell_key,
    load_grid,
    parse_grid,
    resolve,
    resolve_scenario,
    scenario_fields,
)
from planner.sweep.run import SweepInterrupted, prepare_logs, run_sweep
from planner.sweep.store import (
    BOOK_COLUMNS,
    SUMMARY_PREFIX,
    TABLE,
    ResultsDB,
    flatten,
    load_results,
    parquet_path,
)

__all__ = [
    "BOOK_COLUMNS", "DASK_CONNECT_TIMEOUT_S", "EXECUTORS", "MAX_CELLS", "MAX_GRID_BYTES",
    "MAX_WORKLOAD_BYTES", "SUMMARY_PREFIX", "TABLE", "Cell", "DaskExecutor", "Executor", "Grid",
    "LocalExecutor", "ResultsDB", "SweepInterrupted", "cell_key", "flatten", "load_grid",
    "load_results", "make_executor", "parquet_path", "parse_grid", "prepare_logs", "resolve",
    "resolve_scenario", "run_cell", "run_sweep", "scenario_fields",
]
