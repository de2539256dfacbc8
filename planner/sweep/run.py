"""The run loop: resolve the cells, prepare the log databases, run what is not finished on an
executor, write each result as it comes, and stop cleanly when told (SIGINT, SIGTERM)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
from tqdm import tqdm

from planner import logs as plogs
from planner.errors import InputError
from planner.paths import default_db
from planner.scenario.schema import column_types
from planner.store import catalog
from planner.store import db as pdb
from planner.sweep.executors import EXECUTORS, make_executor, run_cell
from planner.sweep.grid import (
    MAX_CELLS,
    Cell,
    Grid,
    as_grid,
    describe,
    one_line,
    resolve,
    resolve_scenario,
)
from planner.sweep.store import BOOK_COLUMNS, TABLE, ResultsDB, make_row, parquet_path

OUTPUT_CLOSED = "output closed"  # the reason of a sweep stopped because its progress output broke


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by SIGINT/SIGTERM (or Ctrl-C); str() says what was kept."""

    def __init__(self, message: str, report: dict):
        super().__init__(message)
        self.report = report


def _db_path(params: dict) -> Path:
    """The log DB a cell reads, absolute (None -> the parent's planner.paths.default_db())."""
    p = params.get("db")
    return (Path(p).expanduser() if p else default_db()).resolve()


def _log_dbs(cells: list[Cell]) -> list[Path]:
    return sorted({_db_path(c.params) for c in cells if c.params.get("pool", "log") == "log"})


def prepare_logs(cells: list[Cell]) -> None:
    """In the parent, before any worker starts: make sure each log DB exists and holds the
    shipped default log and every log a cell names; then close it (workers open it read-only).

    Checks read-only first, so a caller that holds the log DB open read-only (the app) can run
    sweeps; opens it for writing only when the default log still has to be loaded.
    """

    by_db: dict[Path, set] = {}
    for c in cells:
        if c.params.get("pool", "log") != "log":
            continue
        by_db.setdefault(_db_path(c.params), set()).add(c.params.get("log"))
    for path, names in by_db.items():
        con = None
        if path.exists():
            try:
                con = pdb.connect(path, read_only=True)
                catalog.ensure_default(con)  # only reads when the default log is there
            except duckdb.Error:
                if con is not None:
                    con.close()
                con = None
        if con is None:
            try:
                con = pdb.connect(path)
            except duckdb.Error as e:
                raise InputError(f"cannot open the log database ({one_line(e)})",
                                 file=str(path)) from None
            try:
                catalog.ensure_default(con)
            except BaseException:
                con.close()
                raise
        try:
            df = plogs.list_logs(con)
            have = set(df["name"].astype(str)) | set(df["log_id"].astype(str))
            missing = sorted(str(n) for n in names if n and str(n) not in have)
            if missing:
                loaded = ", ".join(sorted(map(str, df["name"]))) or "none"
                raise InputError(f"log '{missing[0]}' is not in the database {path} "
                                 f"(loaded: {loaded})", field="log")
        finally:
            con.close()


class StopRequest:
    """What stop_on_signals() hands out: the signal that asked the sweep to stop (None: none yet).

    The handler raises KeyboardInterrupt at once only while the sweep waits for results
    (`waiting()`); elsewhere (writing a row in DuckDB, loading a log) it only records the
    request, and the sweep stops at its next check, so no library call is interrupted midway.
    """

    def __init__(self):
        self.reason: str | None = None
        self._waiting = False

    @contextlib.contextmanager
    def waiting(self):
        self._waiting = True
        try:
            yield
        finally:
            self._waiting = False

    def check(self) -> None:
        if self.reason is not None:
            raise KeyboardInterrupt(self.reason)


@contextlib.contextmanager
def stop_on_signals():
    """SIGINT and SIGTERM ask the sweep to stop (once: further ones are ignored while it stops
    its workers and saves what finished); yields the StopRequest. A signal the caller ignores
    (nohup, a background job's SIGINT) stays ignored. Only in the main thread; elsewhere (a
    Streamlit script thread) signal handlers cannot be set and nothing changes."""
    stop = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    old = {s: h for s, h in old.items() if h is not signal.SIG_IGN}  # e.g. nohup: stays ignored

    def handler(signum, frame):
        if stop.reason is not None:  # already stopping: a second Ctrl-C must not break the cleanup
            return
        for s in old:
            signal.signal(s, signal.SIG_IGN)
        stop.reason = signal.Signals(signum).name
        if stop._waiting:
            stop.check()

    for s in old:
        signal.signal(s, handler)
    try:
        yield stop
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


def _check_args(executor: str, scheduler: str | None, workers: int | None) -> None:
    if executor not in EXECUTORS:
        raise InputError(f"unknown executor '{executor}' (known: {', '.join(EXECUTORS)})",
                         field="executor")
    if scheduler and executor != "dask":
        raise InputError("--scheduler needs --executor dask", field="scheduler")
    if workers is not None and workers < 1:
        raise InputError("workers must be >= 1", field="workers")
    if workers is not None and not scheduler and workers > max_workers():
        raise InputError(f"workers must be at most {max_workers()} (the CPU count, {os.cpu_count() or 1}; "
                         "each worker process takes ~150 MiB and more workers than CPUs do not go faster)",
                         field="workers")
    if scheduler:
        check_scheduler(scheduler)


def max_workers() -> int:
    """Most local worker processes of one sweep: the CPU count."""
    return max(1, os.cpu_count() or 1)


_SCHEDULER = re.compile(r"^(tcp|tls|inproc|ucx|ws|wss)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})/?$")


def check_scheduler(address: str) -> None:
    """A Dask scheduler address as tcp://HOST:PORT (or tls://, ws://...); InputError otherwise."""
    m = _SCHEDULER.match(str(address).strip())
    if not m or not 0 < int(m.group(3)) < 65536:
        raise InputError(f"not a scheduler address: {str(address)[:60]!r} (expected tcp://HOST:PORT)",
                         field="scheduler")


def _check_out(out: str | Path, cells: list[Cell], custom: bool) -> Path:
    out = Path(out).expanduser()
    if out.suffix == ".parquet":
        raise InputError("--out is the DuckDB file; the Parquet copy is written next to it",
                         field="out")
    if not custom:
        for p in _log_dbs(cells):
            if p == out.resolve() or _same_file(p, out):  # a hard link or another path to it
                raise InputError(f"the results database must not be the log database {p}",
                                 field="out")
    return out


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


class _Sweep:
    """One run of a sweep: the results store, the counters, the progress outputs."""

    def __init__(self, g: Grid, cells: list[Cell], out: Path, executor: str, custom: bool,
                 progress, bar: bool, parquet_every_s: float):
        self.g, self.cells, self.out, self.executor = g, cells, out, executor
        self.progress, self.parquet_every_s = progress, parquet_every_s
        self.created = not out.exists()
        self.store = ResultsDB(out)
        self.pq = parquet_path(out)
        if not custom:
            for name, typ in column_types().items():  # one type per Scenario field (its schema)
                if name not in BOOK_COLUMNS:
                    self.store.ensure(name, typ)
        done = self.store.done_keys()
        self.todo = [c for c in cells if c.key not in done]
        self.skipped = len(cells) - len(self.todo)
        self.finished = self.skipped
        self.counts = {"ok": 0, "error": 0}
        self.errors: list[dict] = []
        self.last_pq = 0.0
        self.tq = None
        if bar:
            self.tq = tqdm(total=len(cells), initial=self.skipped, file=sys.stderr, unit="cell",
                           desc="sweep", dynamic_ncols=True)
        if progress:
            progress(self.skipped, len(cells), None)

    def write(self, c: Cell, res: dict) -> None:
        row = make_row(c, res, self.g, self.executor)
        self.store.write(row)
        self.finished += 1
        self.counts[row["status"]] += 1
        if row["status"] != "ok":
            self.errors.append({"cell_index": c.index, "cell_key": c.key,
                                "params": c.overrides, "error": row["error"]})
        now = time.perf_counter()
        if now - self.last_pq >= self.parquet_every_s:
            self.store.export_parquet(self.pq)
            self.last_pq = now
        if self.tq is not None:
            wall = f"{row['wall_s']:.1f} s" if row.get("wall_s") is not None else "-"
            tail = f": {row['error']}" if row["status"] != "ok" else ""
            try:
                self.tq.write(f"cell {c.index} {row['status']} {describe(c.overrides)} "
                              f"({wall}){tail}", file=sys.stderr)
                self.tq.update(1)
            except BrokenPipeError:  # its reader went away (`2>&1 | head`): stop, keep what finished
                self.tq = None
                raise KeyboardInterrupt(OUTPUT_CLOSED) from None
        if self.progress:
            self.progress(self.finished, len(self.cells), row)

    def run(self, cell_fn, todo: list[Cell], workers: int, scheduler: str | None,
            stop: StopRequest) -> None:
        by_key = {c.key: c for c in todo}
        stop.check()
        with make_executor(self.executor, workers, scheduler) as ex:
            results = ex.results(cell_fn, todo)
            while True:
                with stop.waiting():
                    stop.check()
                    res = next(results, None)
                if res is None:
                    break
                self.write(by_key[res["key"]], res)

    def discard(self) -> None:
        """Remove the results file this run created (nothing was written into it)."""
        self.store.close()
        for f in (self.out, self.out.with_name(self.out.name + ".wal"), self.pq):
            f.unlink(missing_ok=True)
        self.created = None

    def close(self) -> None:
        if self.tq is not None:
            with contextlib.suppress(OSError):
                self.tq.close()
            self.tq = None
        if self.created is not None:
            self.store.export_parquet(self.pq)
            self.store.close()
            self.created = None

    @property
    def ran(self) -> int:
        return self.counts["ok"] + self.counts["error"]


def run_sweep(grid: Grid | dict | str | Path, *, out: str | Path, executor: str = "local",
              workers: int | None = None, scheduler: str | None = None,
              progress: Callable[[int, int, dict | None], None] | None = None,
              cell_fn: Callable[[dict], dict] | None = None,
              resolver: Callable[[dict], dict] | None = None,
              bar: bool = False, parquet_every_s: float = 2.0,
              max_cells: int | None = MAX_CELLS) -> dict[str, Any]:
    """Run every cell of `grid` not already finished in `out`; return a report dict.

    grid: a grid file path, a dict {"base":..., "grid":...}, or a Grid.
    out: the results DuckDB file (table sweep_results); Parquet copy at out.with_suffix('.parquet').
    executor: 'local' (process pool of `workers`, default os.cpu_count()) or 'dask' (a
      LocalCluster of `workers` processes, or the cluster at `scheduler` if given).
    progress(done, total, row): called once at the start (row None) and after every cell is
      written (row = the dict written, with status, error, wall_s and the summary keys).
    cell_fn(params) -> summary dict: default run_cell (the simulator); must be picklable.
    resolver(merged options) -> full params: default resolve_scenario (Scenario.from_dict).
    max_cells: refuse a grid of more cells (counted before any is built); None: no cap.
    SIGINT/SIGTERM (main thread) or KeyboardInterrupt: the workers are stopped, the finished
      cells kept, and SweepInterrupted (a KeyboardInterrupt) is raised with the report.
    """
    t_start = time.perf_counter()
    _check_args(executor, scheduler, workers)
    custom = cell_fn is not None
    cell_fn = cell_fn or run_cell
    if resolver is None:
        resolver = (lambda d: dict(d)) if custom else resolve_scenario
    g = as_grid(grid, valid=[] if custom else None)
    cells = resolve(g, resolver, max_cells=max_cells)
    out = _check_out(out, cells, custom)
    n_workers = workers or os.cpu_count() or 1
    interrupted = None
    with stop_on_signals() as stop:
        sw = _Sweep(g, cells, out, executor, custom, progress, bar, parquet_every_s)
        todo = sw.todo
        n_workers = max(1, min(n_workers, len(todo))) if todo else n_workers
        try:
            if todo:
                if not custom:
                    prepare_logs(todo)
                    # workers read the log DB the parent prepared, wherever they run
                    todo = [dataclasses.replace(c, params={**c.params, "db": str(_db_path(c.params))})
                            if c.params.get("pool", "log") == "log" else c for c in todo]
                sw.run(cell_fn, todo, n_workers, scheduler, stop)
        except InputError:
            if sw.created and not sw.ran:
                sw.discard()  # bad grid, unknown log, unreachable scheduler: no empty results file
            raise
        except KeyboardInterrupt as e:
            interrupted = str(e) or "interrupted"
        finally:
            sw.close()
    report = {
        "out": str(out), "parquet": str(sw.pq), "table": TABLE, "grid_file": g.file,
        "options": g.options, "executor": executor, "scheduler": scheduler,
        "workers": n_workers if todo else 0, "cells": len(cells), "skipped": sw.skipped,
        "ran": sw.ran, "ok": sw.counts["ok"], "errors": sw.counts["error"],
        "failed_cells": sw.errors[:20], "wall_s": round(time.perf_counter() - t_start, 3),
    }
    if interrupted is not None:
        report["interrupted"] = interrupted
        left = len(cells) - sw.skipped - sw.ran
        raise SweepInterrupted(f"interrupted ({interrupted}): {sw.ran} cells finished in this run and "
                               f"{sw.skipped} before are kept in {out}; run the same command again "
                               f"for the other {left}", report)
    return report
