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
and its error text; the sweep goes on, and a re-run retries it.

Entry points: `run_sweep(grid, executor=..., workers=..., out=..., progress=cb)` and
`load_results(out)`; `load_grid(path)` parses and checks a grid file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import os
import re
import socket
import sys
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from planner.errors import InputError

TABLE = "sweep_results"
EXECUTORS = ("local", "dask")
DASK_CONNECT_TIMEOUT_S = 20  # how long to try reaching a given --scheduler

# Bookkeeping columns, in table order. Parameter columns (one per option of the resolved
# scenario, so every grid option has its column) and the simulator's summary keys (flattened:
# solve_s -> solve_s_mean, ...) follow them.
BOOK_COLUMNS: dict[str, str] = {
    "cell_key": "VARCHAR",        # hash of the fully resolved scenario
    "cell_index": "BIGINT",       # position of the cell in its grid (row-major over the grid)
    "status": "VARCHAR",          # 'ok' | 'error'
    "error": "VARCHAR",           # one line: ExceptionType: message
    "traceback": "VARCHAR",
    "wall_s": "DOUBLE",           # the cell's wall time in its worker
    "finished_at": "TIMESTAMP",   # UTC, when the worker finished the cell
    "executor": "VARCHAR",
    "worker": "VARCHAR",          # host:pid of the worker process
    "grid_file": "VARCHAR",
    "grid_options": "VARCHAR",    # JSON list of the options this cell's grid varied
    "params_json": "VARCHAR",     # the fully resolved scenario as JSON
    "summary_json": "VARCHAR",    # the simulator's summary as JSON (null on error)
}
# A summary key equal to a bookkeeping or parameter column is stored as sim_<key>
# (e.g. sim_wall_s, sim_pool_size = the pool's node slots actually replayed).
SUMMARY_PREFIX = "sim_"

_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
_TYPE_RANK = {"BOOLEAN": 0, "BIGINT": 1, "DOUBLE": 2, "VARCHAR": 3}


# ----------------------------------------------------------------------------------- grids

@dataclass
class Cell:
    index: int
    key: str
    params: dict[str, Any]      # the fully resolved scenario (all fields)
    overrides: dict[str, Any]   # this cell's grid values


@dataclass
class Grid:
    base: dict[str, Any]
    grid: dict[str, list]       # option (underscores) -> values, in file order
    file: str | None = None
    cells: list[Cell] = field(default_factory=list)  # filled by resolve()

    @property
    def options(self) -> list[str]:
        return list(self.grid)

    def combos(self) -> list[dict[str, Any]]:
        """The grid's cells as override dicts (cartesian product, last option fastest)."""
        names = list(self.grid)
        return [dict(zip(names, vals)) for vals in itertools.product(*self.grid.values())]


def scenario_fields() -> list[str]:
    """Option names a grid may use: the fields of planner.scenario.Scenario."""
    from planner.scenario import Scenario

    return [f.name for f in dataclasses.fields(Scenario)]


def _norm(name: Any) -> str:
    return str(name).strip().replace("-", "_")


def _line_of(text: str, kind: str, section: str, name: str) -> int | None:
    """Best-effort 1-based line of key `name` under `section` in the grid file text."""
    if kind == "yaml":
        try:
            import yaml

            root = yaml.compose(text)
        except Exception:
            return None
        if not isinstance(root, yaml.MappingNode):
            return None
        for k, v in root.value:
            if k.value == section and isinstance(v, yaml.MappingNode):
                for kk, _ in v.value:
                    if kk.value == name:
                        return kk.start_mark.line + 1
        return None
    pat = re.compile(r'"%s"\s*:' % re.escape(name))
    for i, line in enumerate(text.splitlines(), 1):
        if pat.search(line):
            return i
    return None


def load_grid(path: str | Path, valid: list[str] | None = None) -> Grid:
    """Read and check a grid file (.json, .yaml, .yml). Bad input -> InputError (one line)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("grid file not found", file=str(path))
    text = path.read_text(encoding="utf-8")
    kind = "yaml" if path.suffix.lower() in (".yaml", ".yml") else "json"
    if path.suffix.lower() not in (".yaml", ".yml", ".json"):
        raise InputError("grid file must end in .json, .yaml or .yml", file=str(path))
    try:
        if kind == "yaml":
            import yaml

            obj = yaml.safe_load(text)
        else:
            obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg}", file=str(path), line=e.lineno) from None
    except Exception as e:  # yaml.YAMLError
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        msg = getattr(e, "problem", None) or str(e)
        raise InputError(f"not valid YAML: {msg}", file=str(path), line=line) from None
    return parse_grid(obj, file=str(path), valid=valid, text=text, kind=kind)


def parse_grid(obj: Any, file: str | None = None, valid: list[str] | None = None,
               text: str | None = None, kind: str = "json") -> Grid:
    """Check a grid given as a dict. `valid`: allowed option names (default: Scenario fields;
    pass [] to accept any identifier-like name, for custom cell functions)."""
    where = file or "<grid>"
    if valid is None:
        valid = scenario_fields()

    def err(msg, fld=None, section=None, name=None):
        line = _line_of(text, kind, section, name) if (text and section and name) else None
        return InputError(msg, file=where, line=line, field=fld)

    if not isinstance(obj, dict):
        raise err("a grid is a mapping with keys 'base' and 'grid'")
    extra = sorted(set(map(str, obj)) - {"base", "grid"})
    if extra:
        raise err(f"unknown top-level key '{extra[0]}' (expected 'base' and 'grid')", fld=extra[0])
    base_raw = obj.get("base") or {}
    grid_raw = obj.get("grid") or {}
    if not isinstance(base_raw, dict):
        raise err("'base' must be a mapping of option: value", fld="base")
    if not isinstance(grid_raw, dict):
        raise err("'grid' must be a mapping of option: [values]", fld="grid")

    def check_name(section, raw):
        name = _norm(raw)
        if not _IDENT.match(name):
            raise err(f"bad option name '{raw}'", fld=f"{section}.{raw}", section=section, name=raw)
        if valid and name not in valid:
            raise err(f"unknown option '{raw}' (known: {', '.join(valid)})",
                      fld=f"{section}.{raw}", section=section, name=raw)
        return name

    base: dict[str, Any] = {}
    for raw, val in base_raw.items():
        name = check_name("base", raw)
        if name in base:
            raise err(f"option '{raw}' given twice", fld=f"base.{raw}", section="base", name=raw)
        base[name] = val
    grid: dict[str, list] = {}
    for raw, vals in grid_raw.items():
        name = check_name("grid", raw)
        if name in grid:
            raise err(f"option '{raw}' given twice", fld=f"grid.{raw}", section="grid", name=raw)
        if not isinstance(vals, list) or not vals:
            raise err(f"grid option '{raw}' must be a non-empty list of values",
                      fld=f"grid.{raw}", section="grid", name=raw)
        for v in vals:
            if isinstance(v, (dict, list)):
                raise err(f"grid option '{raw}' has a non-scalar value {v!r}",
                          fld=f"grid.{raw}", section="grid", name=raw)
        grid[name] = list(vals)
    return Grid(base=base, grid=grid, file=file)


def _jsonable(v):
    if isinstance(v, Path):
        return str(v)
    if isinstance(v, datetime):
        return v.isoformat()
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return dataclasses.asdict(v)
    return str(v)


def cell_key(params: dict[str, Any]) -> str:
    """16 hex digits of SHA-256 over the resolved scenario as canonical JSON."""
    blob = json.dumps(params, sort_keys=True, default=_jsonable, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def resolve_scenario(params: dict[str, Any]) -> dict[str, Any]:
    """Fill defaults and validate through Scenario.from_dict; returns all fields as a dict."""
    from planner.scenario import Scenario

    sc = Scenario.from_dict(dict(params))
    d = dataclasses.asdict(sc)
    return json.loads(json.dumps(d, default=_jsonable))  # plain JSON types, stable keys


def resolve(grid: Grid, resolver: Callable[[dict], dict] | None = None) -> list[Cell]:
    """The grid's distinct cells, resolved. A value the scenario rejects -> InputError."""
    resolver = resolver or resolve_scenario
    cells: list[Cell] = []
    seen: set[str] = set()
    for i, combo in enumerate(grid.combos()):
        merged = {**grid.base, **combo}
        try:
            params = resolver(merged)
        except InputError as e:
            bad = e.field or ""
            sect = "grid" if bad in combo else "base"
            raise InputError(f"cell {i} ({_describe(combo)}): {e}", file=grid.file or "<grid>",
                             field=f"{sect}.{bad}" if bad else None) from None
        except (TypeError, ValueError) as e:
            raise InputError(f"cell {i} ({_describe(combo)}): {e}",
                             file=grid.file or "<grid>") from None
        key = cell_key(params)
        if key in seen:
            continue
        seen.add(key)
        cells.append(Cell(index=i, key=key, params=params, overrides=combo))
    grid.cells = cells
    return cells


def scenario_column_types() -> dict[str, str]:
    """SQL type of each Scenario field, from its annotation (so the schema is the same for every
    grid, whatever values a run happens to hold)."""
    from planner.scenario import Scenario

    out = {}
    for f in dataclasses.fields(Scenario):
        t = str(f.type)
        out[f.name] = ("BOOLEAN" if "bool" in t else "BIGINT" if "int" in t
                       else "DOUBLE" if "float" in t else "VARCHAR")
    return out


def _describe(combo: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in combo.items()) or "base"


# ------------------------------------------------------------------------------- the cells

def run_cell(params: dict[str, Any]) -> dict[str, Any]:
    """The default cell function: run one scenario on a read-only log DB; return its summary."""
    from planner import db as pdb
    from planner.scenario import Scenario, run_scenario

    sc = Scenario.from_dict(dict(params))
    if sc.pool != "log":  # a fixed pool reads no log
        return dict(run_scenario(sc).summary)
    con = pdb.connect(sc.db, read_only=True)
    try:
        res = run_scenario(sc, con=con)
    finally:
        con.close()
    return dict(res.summary)


def _execute(cell_fn: Callable[[dict], dict], index: int, key: str,
             params: dict[str, Any]) -> dict[str, Any]:
    """Run one cell in a worker. Never raises: errors come back as a row with status 'error'."""
    t0 = time.perf_counter()
    out: dict[str, Any] = {"index": index, "key": key,
                           "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        summary = cell_fn(params)
        if not isinstance(summary, dict):
            raise TypeError(f"cell function returned {type(summary).__name__}, not dict")
        out.update(status="ok", error=None, traceback=None, summary=summary)
    except BaseException as e:  # noqa: BLE001 - a cell's failure is data, not a crash
        if isinstance(e, KeyboardInterrupt):
            raise
        out.update(status="error", error=_one_line(e), traceback=traceback.format_exc(),
                   summary=None)
    out["wall_s"] = time.perf_counter() - t0
    out["finished_at"] = time.time()
    return out


def _one_line(e: BaseException) -> str:
    msg = " ".join(str(e).split())
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


# ---------------------------------------------------------------------------- the results DB

def flatten(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{'solve_s': {'mean': 1}} -> {'solve_s_mean': 1}; lists become JSON text."""
    flat: dict[str, Any] = {}
    for k, v in summary.items():
        name = f"{prefix}{_norm(k).lower()}"
        if isinstance(v, dict):
            flat.update(flatten(v, prefix=f"{name}_"))
        elif isinstance(v, (list, tuple)):
            flat[name] = json.dumps(v, default=_jsonable)
        else:
            flat[name] = v
    return flat


def _sql_type(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "BOOLEAN"
    if isinstance(v, int):
        return "BIGINT"
    if isinstance(v, float):
        return "DOUBLE"
    if hasattr(v, "item"):  # numpy scalar
        return _sql_type(v.item())
    return "VARCHAR"


def _value(v: Any, typ: str) -> Any:
    if v is None:
        return None
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if typ == "VARCHAR" and not isinstance(v, str):
        return json.dumps(v, default=_jsonable) if isinstance(v, (dict, list)) else str(v)
    return v


def _q(name: str) -> str:
    if not _IDENT.match(name):
        raise ValueError(f"bad column name {name!r}")
    return f'"{name}"'


class ResultsDB:
    """The parent's single writer on the results DuckDB file."""

    def __init__(self, path: str | Path):
        import duckdb

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = duckdb.connect(str(self.path))
        except duckdb.Error as e:
            raise InputError(f"cannot open the results database ({_one_line(e)})",
                             file=str(self.path)) from None
        cols = ", ".join(f"{_q(c)} {t}" for c, t in BOOK_COLUMNS.items())
        self.con.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} ({cols})")
        self.types: dict[str, str] = self._columns()

    def _columns(self) -> dict[str, str]:
        rows = self.con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = ? AND table_schema = 'main' ORDER BY ordinal_position",
            [TABLE]).fetchall()
        return {r[0]: r[1] for r in rows}

    def ensure(self, name: str, typ: str) -> None:
        """Add column `name`, or widen its type (BOOLEAN < BIGINT < DOUBLE < VARCHAR)."""
        cur = self.types.get(name)
        if cur is None:
            self.con.execute(f"ALTER TABLE {TABLE} ADD COLUMN {_q(name)} {typ}")
            self.types[name] = typ
        elif cur != typ and _TYPE_RANK.get(typ, 3) > _TYPE_RANK.get(cur, 3):
            self.con.execute(f"ALTER TABLE {TABLE} ALTER COLUMN {_q(name)} TYPE {typ}")
            self.types[name] = typ

    def done_keys(self) -> set[str]:
        return {r[0] for r in self.con.execute(
            f"SELECT cell_key FROM {TABLE} WHERE status = 'ok'").fetchall()}

    def write(self, row: dict[str, Any]) -> None:
        """Replace the row of row['cell_key'] in one transaction (commit per cell)."""
        for name, v in row.items():
            typ = _sql_type(v)  # None: the column appears with the first non-null value
            if typ is not None and typ != self.types.get(name):
                self.ensure(name, typ)  # adds it, or widens (BIGINT + float -> DOUBLE, ...)
        names = [n for n in row if n in self.types]
        vals = [_value(row[n], self.types[n]) for n in names]
        cols = ", ".join(_q(n) for n in names)
        marks = ", ".join("?" for _ in names)
        self.con.execute("BEGIN TRANSACTION")
        try:
            self.con.execute(f"DELETE FROM {TABLE} WHERE cell_key = ?", [row["cell_key"]])
            self.con.execute(f"INSERT INTO {TABLE} ({cols}) VALUES ({marks})", vals)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def export_parquet(self, path: Path) -> None:
        """Write the table to Parquet atomically (temp file + rename)."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        self.con.sql(f"SELECT * FROM {TABLE} ORDER BY finished_at, cell_key").write_parquet(str(tmp))
        os.replace(tmp, path)

    def close(self) -> None:
        self.con.close()


def parquet_path(out: str | Path) -> Path:
    out = Path(out)
    return out.with_suffix(".parquet") if out.suffix != ".parquet" else out.with_name(out.name + ".parquet")


def load_results(out: str | Path, grid: Grid | dict | str | Path | None = None,
                 resolver: Callable[[dict], dict] | None = None):
    """The sweep results in `out` as a pandas DataFrame (all rows, or the cells of `grid`).

    Reads the DuckDB file read-only; if another process is writing it (a sweep running), reads
    the Parquet copy instead, which the writer refreshes as cells finish.
    """
    import duckdb
    import pandas as pd

    out = Path(out)
    cols = list(BOOK_COLUMNS)
    if not out.exists():
        return pd.DataFrame(columns=cols)
    try:
        con = duckdb.connect(str(out), read_only=True)
    except duckdb.Error:
        pq = parquet_path(out)
        if not pq.exists():
            raise
        df = pd.read_parquet(pq)
    else:
        try:
            has = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                              [TABLE]).fetchone()[0]
            df = (con.execute(f"SELECT * FROM {TABLE} ORDER BY finished_at, cell_key").df()
                  if has else pd.DataFrame(columns=cols))
        finally:
            con.close()
    if grid is not None:
        g = _as_grid(grid, valid=[] if resolver else None)
        keys = {c.key: c.index for c in (g.cells or resolve(g, resolver))}
        df = df[df["cell_key"].isin(keys)].copy()
        df["cell_index"] = df["cell_key"].map(keys)
        df = df.sort_values("cell_index").reset_index(drop=True)
    return df


# ------------------------------------------------------------------------------- executors

def _local_results(cell_fn, todo: list[Cell], workers: int):
    """Yield result dicts as cells complete, on a spawn-started process pool.

    A worker process that dies (killed, out of memory) breaks the whole pool and every cell
    still in it; those cells then run again, each in a process of its own, so only the cell that
    kills its process is recorded as lost.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    lost: list[Cell] = []
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        futs = {pool.submit(_execute, cell_fn, c.index, c.key, c.params): c for c in todo}
        for fut in as_completed(futs):
            c = futs[fut]
            try:
                res = fut.result()
            except BrokenProcessPool:
                lost.append(c)
                continue
            except Exception as e:  # e.g. a summary that cannot be pickled back
                res = _lost(c, e)
            yield res
        pool.shutdown(wait=True)  # workers exit and are reaped before the sweep returns
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    if lost:
        yield from _solo_results(cell_fn, sorted(lost, key=lambda c: c.index), workers)


def _solo_results(cell_fn, cells: list[Cell], workers: int):
    """Each cell in a fresh one-process pool, up to `workers` at once (isolates a killer cell)."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    ctx = multiprocessing.get_context("spawn")
    pending = list(cells)
    running: dict = {}
    try:
        while pending or running:
            while pending and len(running) < workers:
                c = pending.pop(0)
                p = ProcessPoolExecutor(max_workers=1, mp_context=ctx)
                running[p.submit(_execute, cell_fn, c.index, c.key, c.params)] = (c, p)
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for f in done:
                c, p = running.pop(f)
                try:
                    res = f.result()
                except Exception as e:  # this cell's own process died
                    res = _lost(c, e)
                p.shutdown(wait=True)
                yield res
    finally:
        for c, p in running.values():
            p.shutdown(wait=False, cancel_futures=True)


def _dask_results(cell_fn, todo: list[Cell], workers: int, scheduler: str | None):
    """Yield result dicts as cells complete, on a Dask cluster (LocalCluster if no scheduler)."""
    import logging

    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler:
        try:
            client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as e:
            raise InputError(f"cannot reach the Dask scheduler ({_one_line(e)})",
                             field="scheduler") from None
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
    try:
        futs = {}
        for c in todo:
            f = client.submit(_execute, cell_fn, c.index, c.key, c.params,
                              key=f"planner-cell-{c.key}-{os.getpid()}-{time.time_ns()}",
                              pure=False, retries=0)
            futs[f] = c
        for fut in as_completed(list(futs)):
            c = futs[fut]
            try:
                yield fut.result()
            except Exception as e:  # KilledWorker, lost connection
                yield _lost(c, e)
            finally:
                fut.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _lost(c: Cell, e: BaseException) -> dict[str, Any]:
    return {"index": c.index, "key": c.key, "status": "error",
            "error": f"worker lost: {_one_line(e)}", "traceback": None, "summary": None,
            "wall_s": None, "finished_at": time.time(), "worker": None}


# ------------------------------------------------------------------------------- the sweep

def _as_grid(grid, valid) -> Grid:
    if isinstance(grid, Grid):
        return grid
    if isinstance(grid, (str, Path)):
        return load_grid(grid, valid=valid)
    if isinstance(grid, dict):
        return parse_grid(grid, valid=valid)
    raise InputError(f"a grid is a file path or a mapping, not {type(grid).__name__}")


def _db_path(params: dict) -> Path:
    """The log DB a cell reads, absolute (None -> the parent's planner.paths.default_db())."""
    from planner.paths import default_db

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
    import duckdb

    from planner import db as pdb
    from planner import logs as plogs

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
                plogs.ensure_default(con)  # only reads when the default log is there
            except duckdb.Error:
                if con is not None:
                    con.close()
                con = None
        if con is None:
            try:
                con = pdb.connect(path)
            except duckdb.Error as e:
                raise InputError(f"cannot open the log database ({_one_line(e)})",
                                 file=str(path)) from None
            try:
                plogs.ensure_default(con)
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


def run_sweep(grid: Grid | dict | str | Path, *, out: str | Path, executor: str = "local",
              workers: int | None = None, scheduler: str | None = None,
              progress: Callable[[int, int, dict | None], None] | None = None,
              cell_fn: Callable[[dict], dict] | None = None,
              resolver: Callable[[dict], dict] | None = None,
              bar: bool = False, parquet_every_s: float = 2.0) -> dict[str, Any]:
    """Run every cell of `grid` not already finished in `out`; return a report dict.

    grid: a grid file path, a dict {"base":..., "grid":...}, or a Grid.
    out: the results DuckDB file (table sweep_results); Parquet copy at out.with_suffix('.parquet').
    executor: 'local' (process pool of `workers`, default os.cpu_count()) or 'dask' (a
      LocalCluster of `workers` processes, or the cluster at `scheduler` if given).
    progress(done, total, row): called once at the start (row None) and after every cell is
      written (row = the dict written, with status, error, wall_s and the summary keys).
    cell_fn(params) -> summary dict: default run_cell (the simulator); must be picklable.
    resolver(merged options) -> full params: default resolve_scenario (Scenario.from_dict).
    """
    t_start = time.perf_counter()
    if executor not in EXECUTORS:
        raise InputError(f"unknown executor '{executor}' (known: {', '.join(EXECUTORS)})",
                         field="executor")
    if scheduler and executor != "dask":
        raise InputError("--scheduler needs --executor dask", field="scheduler")
    if workers is not None and workers < 1:
        raise InputError("workers must be >= 1", field="workers")
    custom = cell_fn is not None
    cell_fn = cell_fn or run_cell
    if resolver is None:
        resolver = (lambda d: dict(d)) if custom else resolve_scenario
    g = _as_grid(grid, valid=[] if custom else None)
    cells = resolve(g, resolver)

    out = Path(out).expanduser()
    if out.suffix == ".parquet":
        raise InputError("--out is the DuckDB file; the Parquet copy is written next to it",
                         field="out")
    if not custom:
        for p in _log_dbs(cells):
            if p == out.resolve():
                raise InputError(f"the results database must not be the log database {p}",
                                 field="out")
    created = not out.exists()
    store = ResultsDB(out)
    pq = parquet_path(out)
    try:
        if not custom:
            for name, typ in scenario_column_types().items():
                if name not in BOOK_COLUMNS:
                    store.ensure(name, typ)
        done = store.done_keys()
        todo = [c for c in cells if c.key not in done]
        skipped = len(cells) - len(todo)
        total = len(cells)
        n_workers = workers or os.cpu_count() or 1
        n_workers = max(1, min(n_workers, len(todo))) if todo else n_workers
        if progress:
            progress(skipped, total, None)
        counts = {"ok": 0, "error": 0}
        errors: list[dict] = []
        tq = None
        if bar:
            from tqdm import tqdm

            tq = tqdm(total=total, initial=skipped, file=sys.stderr, unit="cell",
                      desc="sweep", dynamic_ncols=True)
        try:
            if todo:
                if not custom:
                    prepare_logs(todo)
                    # workers read the log DB the parent prepared, wherever they run
                    todo = [dataclasses.replace(c, params={**c.params, "db": str(_db_path(c.params))})
                            if c.params.get("pool", "log") == "log" else c for c in todo]
                stream = (_local_results(cell_fn, todo, n_workers) if executor == "local"
                          else _dask_results(cell_fn, todo, n_workers, scheduler))
                by_key = {c.key: c for c in todo}
                last_pq = 0.0
                finished = skipped
                for res in stream:
                    c = by_key[res["key"]]
                    row = _row(c, res, g, executor)
                    store.write(row)
                    finished += 1
                    counts[row["status"]] += 1
                    if row["status"] != "ok":
                        errors.append({"cell_index": c.index, "cell_key": c.key,
                                       "params": c.overrides, "error": row["error"]})
                    now = time.perf_counter()
                    if now - last_pq >= parquet_every_s:
                        store.export_parquet(pq)
                        last_pq = now
                    if tq is not None:
                        wall = f"{row['wall_s']:.1f} s" if row.get("wall_s") is not None else "-"
                        tail = f": {row['error']}" if row["status"] != "ok" else ""
                        tq.write(f"cell {c.index} {row['status']} {_describe(c.overrides)} "
                                 f"({wall}){tail}", file=sys.stderr)
                        tq.update(1)
                    if progress:
                        progress(finished, total, row)
        except InputError:
            if created and not (counts["ok"] or counts["error"]):
                # bad grid, unknown log, unreachable scheduler: leave no empty results file
                store.close()
                for f in (out, out.with_name(out.name + ".wal"), pq):
                    f.unlink(missing_ok=True)
                created = None
            raise
        finally:
            if tq is not None:
                tq.close()
            if created is not None:
                store.export_parquet(pq)
    finally:
        if created is not None:
            store.close()
    return {
        "out": str(out),
        "parquet": str(pq),
        "table": TABLE,
        "grid_file": g.file,
        "options": g.options,
        "executor": executor,
        "scheduler": scheduler,
        "workers": n_workers if todo else 0,
        "cells": len(cells),
        "skipped": skipped,
        "ran": counts["ok"] + counts["error"],
        "ok": counts["ok"],
        "errors": counts["error"],
        "failed_cells": errors[:20],
        "wall_s": round(time.perf_counter() - t_start, 3),
    }


def _row(c: Cell, res: dict, g: Grid, executor: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "cell_key": c.key,
        "cell_index": c.index,
        "status": res["status"],
        "error": res.get("error"),
        "traceback": res.get("traceback"),
        "wall_s": res.get("wall_s"),
        "finished_at": datetime.fromtimestamp(res["finished_at"], tz=timezone.utc).replace(tzinfo=None),
        "executor": executor,
        "worker": res.get("worker"),
        "grid_file": g.file,
        "params_json": json.dumps(c.params, sort_keys=True, default=_jsonable),
        "summary_json": (json.dumps(res["summary"], default=_jsonable)
                         if res.get("summary") is not None else None),
    }
    row["grid_options"] = json.dumps(list(g.grid))
    for name, v in c.params.items():  # every option of the resolved scenario, one column each
        if _IDENT.match(name) and name not in row:
            row[name] = v
    if res.get("summary"):
        for k, v in flatten(res["summary"]).items():
            if not _IDENT.match(k):
                continue
            row[k if k not in row else SUMMARY_PREFIX + k] = v
    return row
