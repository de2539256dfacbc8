"""What the Live page shows, read from a recording (planner.live.store's tables), and the recording
turned into a log file of its own for the other pages.

    latest(con, log)                 the last poll: time, ok, message, per-partition figures
    partition_series(con, log, h)    harvestable nodes per partition over the last h hours (step series)
    recommendations(con, log, n)     the last n recommendations with their scores (DataFrame)
    export_log(src, log, dst)        copy the live log's schema rows into a new DuckDB file (a node log)
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd

from planner.errors import InputError
from planner.live.store import ensure_schema
from planner.store import db
from planner.times import format_iso

REC_COLUMNS = ("time", "job", "from_nodes", "to_nodes", "nodes_to_add", "nodes_to_release", "p_stays_idle",
               "expected_gain_samples", "command", "stayed_share", "hindsight_gain_samples", "best_gain_samples",
               "regret_samples", "model")


def _log_id(con, log: str) -> int | None:
    r = con.execute("SELECT log_id FROM logs WHERE name = ?", [log]).fetchone()
    return None if r is None else int(r[0])


def latest(con, log: str) -> dict | None:
    lid = _log_id(con, log)
    if lid is None:
        return None
    ok = con.execute("SELECT t_s, harvestable, nodes, by_partition, meta FROM live_polls WHERE log_id = ? AND ok "
                     "ORDER BY t_s DESC LIMIT 1", [lid]).fetchone()
    last = con.execute("SELECT t_s, ok, message FROM live_polls WHERE log_id = ? ORDER BY t_s DESC LIMIT 1",
                       [lid]).fetchone()
    if ok is None:
        return {"t_s": last[0] if last else None, "ok": False, "message": last[2] if last else None,
                "partitions": {}}
    return {"t_s": ok[0], "harvestable": ok[1], "nodes": ok[2], "partitions": json.loads(ok[3] or "{}"),
            "meta": json.loads(ok[4] or "{}"), "ok": bool(last[1]), "message": last[2],
            "last_poll_s": last[0]}


def partition_series(con, log: str, hours: float = 6.0) -> dict[str, tuple[list, list]]:
    """{partition: (t_s, harvestable)} over the last `hours` of successful polls."""
    lid = _log_id(con, log)
    if lid is None:
        return {}
    rows = con.execute("SELECT t_s, by_partition FROM live_polls WHERE log_id = ? AND ok AND t_s >= "
                       "(SELECT max(t_s) FROM live_polls WHERE log_id = ?) - ? ORDER BY t_s",
                       [lid, lid, float(hours) * 3600.0]).fetchall()
    out: dict = {}
    for t, bp in rows:
        for p, d in json.loads(bp or "{}").items():
            ts, vs = out.setdefault(p, ([], []))
            ts.append(float(t))
            vs.append(int(d.get("harvestable", 0)))
    return out


def recommendations(con, log: str, limit: int = 50) -> pd.DataFrame:
    lid = _log_id(con, log)
    if lid is None:
        return pd.DataFrame(columns=list(REC_COLUMNS))
    rows = con.execute("SELECT rec, score FROM live_recommendations WHERE log_id = ? ORDER BY t_s DESC LIMIT ?",
                       [lid, int(limit)]).fetchall()
    recs = []
    for rec, score in rows:
        r = json.loads(rec)
        r.update(json.loads(score) if score else {})
        r["nodes_to_add"] = ",".join(r.get("nodes_to_add") or [])
        r["nodes_to_release"] = ",".join(r.get("nodes_to_release") or [])
        r["time"] = format_iso(r.get("time"))
        recs.append({k: r.get(k) for k in REC_COLUMNS})
    return pd.DataFrame(recs, columns=list(REC_COLUMNS))


_COPY = ("logs", "nodes", "node_events", "idle_series", "fragments")


def export_log(src: Path, log: str, dst: Path, name: str | None = None) -> dict:
    """The live log `log` of database src as a log file dst (its own DuckDB, the planner schema),
    named `name` (default: the live log's name). Refuses to overwrite dst."""
    dst = Path(dst)
    if dst.exists():
        raise InputError(f"a log file {dst.name!r} exists already; choose another name", field="name")
    with db.connect(src, read_only=True) as s:
        lid = _log_id(s, log)
        if lid is None:
            raise InputError(f"no recording named {log!r}", field="log")
        n_polls = s.execute("SELECT rows FROM logs WHERE log_id = ?", [lid]).fetchone()[0]
        if n_polls < 2:
            raise InputError("the recording has fewer than 2 polls: nothing spans time yet", field="log")
    tmp = dst.with_name(f".{dst.name}.part")
    tmp.unlink(missing_ok=True)
    con = db.connect(tmp)
    try:
        con.execute("ATTACH ? AS src (READ_ONLY)", [str(src)])
        con.execute("BEGIN TRANSACTION")
        for t in _COPY:  # fixed names
            cols = ", ".join(c for (c,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND "
                "table_name = ? ORDER BY column_index", [t]).fetchall())
            con.execute(f"INSERT INTO {t} ({cols}) SELECT {cols} FROM src.{t} WHERE log_id = ?", [lid])
        if name:
            con.execute("UPDATE logs SET name = ? WHERE log_id = ?", [name, lid])
        con.execute("COMMIT")
        con.execute("DETACH src")
        ensure_schema(con)
    except (duckdb.Error, InputError):
        con.close()
        tmp.unlink(missing_ok=True)
        raise
    con.close()
    tmp.rename(dst)
    return {"log": name or log, "file": str(dst), "polls": int(n_polls)}
