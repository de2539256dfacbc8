"""The results store: table `sweep_results` in a DuckDB file, written by the parent process
only (one committed row per finished cell), and a Parquet copy next to it."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from planner.errors import InputError
from planner.sweep.grid import IDENT, Cell, Grid, as_grid, jsonable, norm, one_line, resolve

TABLE = "sweep_results"
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

_TYPE_RANK = {"BOOLEAN": 0, "BIGINT": 1, "DOUBLE": 2, "VARCHAR": 3}


def flatten(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{'solve_s': {'mean': 1}} -> {'solve_s_mean': 1}; lists become JSON text."""
    flat: dict[str, Any] = {}
    for k, v in summary.items():
        name = f"{prefix}{norm(k).lower()}"
        if isinstance(v, dict):
            flat.update(flatten(v, prefix=f"{name}_"))
        elif isinstance(v, (list, tuple)):
            flat[name] = json.dumps(v, default=jsonable)
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
        return json.dumps(v, default=jsonable) if isinstance(v, (dict, list)) else str(v)
    return v


def _q(name: str) -> str:
    if not IDENT.match(name):
        raise ValueError(f"bad column name {name!r}")
    return f'"{name}"'


class ResultsDB:
    """The parent's single writer on the results DuckDB file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = duckdb.connect(str(self.path))
        except duckdb.Error as e:
            raise InputError(f"cannot open the results database ({one_line(e)})",
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
    out = Path(out)
    cols = list(BOOK_COLUMNS)
    if not out.exists():
        return pd.DataFrame(columns=cols)
    try:
        con = duckdb.connect(str(out), read_only=True)
    except duckdb.Error as e:
        pq = parquet_path(out)
        if not pq.exists():
            raise InputError(f"cannot read the results database ({one_line(e)})", file=str(out)) from None
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
        g = as_grid(grid, valid=[] if resolver else None)
        keys = {c.key: c.index for c in (g.cells or resolve(g, resolver))}
        df = df[df["cell_key"].isin(keys)].copy()
        df["cell_index"] = df["cell_key"].map(keys)
        df = df.sort_values("cell_index").reset_index(drop=True)
    return df


def make_row(c: Cell, res: dict, g: Grid, executor: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "cell_key": c.key,
        "cell_index": c.index,
        "status": res["status"],
        "error": res.get("error"),
        "traceback": res.get("traceback"),
        "wall_s": res.get("wall_s"),
        "finished_at": datetime.fromtimestamp(res["finished_at"], tz=UTC).replace(tzinfo=None),
        "executor": executor,
        "worker": res.get("worker"),
        "grid_file": g.file,
        "params_json": json.dumps(c.params, sort_keys=True, default=jsonable),
        "summary_json": (json.dumps(res["summary"], default=jsonable)
                         if res.get("summary") is not None else None),
    }
    row["grid_options"] = json.dumps(list(g.grid))
    for name, v in c.params.items():  # every option of the resolved scenario, one column each
        if IDENT.match(name) and name not in row:
            row[name] = v
    if res.get("summary"):
        for k, v in flatten(res["summary"]).items():
            if not IDENT.match(k):
                continue
            row[k if k not in row else SUMMARY_PREFIX + k] = v
    return row
