"""Scheduler log readers -> one DuckDB schema (see planner.store.db).

    ingest(con, path, format=None, name=None, machine_nodes=None, mapping=None, tz=None,
           max_bytes=None) -> dict
    list_logs(con) -> pandas.DataFrame
    load_report(con, log) -> dict (the report stored at load time)
    remove_log(con, log) -> bool
    detect_format(path) -> 'swf' | 'nodestate' | 'slurm' | 'csv'

Formats (one module each, registered in planner.logs.registry): nodestate (`time,node,idle`
events), swf (Standard Workload Format), slurm (`sacct -P`), csv (generic job CSV with a column
mapping). Plain or gzip, read as a bounded stream (planner.logs.limits). A load is one
transaction; the same content (decompressed, by sha256) with the same options loads once.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
import zlib
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from planner.errors import InputError
from planner.idle.states import STATES
from planner.logs import limits, registry
from planner.logs.common import UNSAFE_TEXT, JobLog, NodeLog
from planner.logs.limits import MAX_MACHINE_NODES, MAX_NAME_CHARS
from planner.logs.partitions import node_home_partition
from planner.logs.registry import FORMATS  # noqa: F401 (re-exported: planner.logs.FORMATS)
from planner.logs.store import (
    OVERSUB_REFUSE_FRACTION,
    changes_only,
    count_series,
    exact_from_jobs,
    idle_series_from_events,
    node_busy_steps,
    node_fragments,
    node_overlaps,
)
from planner.logs.stream import content_sha256, head_lines, read_head
from planner.paths import as_text
from planner.store.db import LIVE_TABLES, TABLES, log_row
from planner.times import format_iso

# Node names and job ids with control characters (newlines, C1, separators...) or a leading
# '=', '+', '@' (formulas when a table is opened in a spreadsheet) are refused: common.UNSAFE_TEXT.
_UNSAFE_NAME = UNSAFE_TEXT


# Bounds on what a log may declare: planner.logs.limits (re-exported here).


def iso(t_s: float | None) -> str | None:
    """Epoch seconds -> '2021-02-10T20:21:15Z' ('...15.250000Z' with a fraction; None where there is no
    date): planner.times."""
    return format_iso(t_s, timespec="auto")  # fractions of a second shown when there are any


def _head_lines(path, scan_bytes: int | None = None) -> list[str]:
    if b"\x00" in read_head(path, 4096):
        raise InputError("binary file, not a text log", file=Path(path).name)
    return head_lines(path, scan_bytes=scan_bytes)


def detect_format(path, scan_bytes: int | None = None) -> str:
    """Guess the format from the content (not the name), reading at most scan_bytes decompressed
    bytes (default limits.HEAD_SCAN_BYTES; the app's preview uses less)."""
    path = Path(path)
    nonblank = _head_lines(path, scan_bytes)
    if not nonblank:
        limit = limits.HEAD_SCAN_BYTES if scan_bytes is None else int(scan_bytes)
        raise InputError(f"empty file (no text in the first {limit / 2**20:,.3g} MiB, only blank lines)",
                         file=path.name)
    fmt = registry.detect(nonblank)
    if fmt is not None:
        return fmt
    first = nonblank[0]
    sep = next((name for ch, name in ((";", "';'"), ("\t", "tabs")) if ch in first and "," not in first
                and "|" not in first and not first.lstrip().startswith(";")), None)
    hint = f"; the first line is separated by {sep}, expected ',' (or '|' for sacct -P)" if sep else ""
    raise InputError("unknown log format (expected SWF, time,node,idle CSV, sacct -P or a job CSV)" + hint,
                     file=path.name, line=1)


def default_name(path) -> str:
    """The file name without .gz, cleaned to a safe log name (control characters -> '_',
    no leading '=', '+', '@')."""
    name = Path(path).name
    name = name.removesuffix(".gz")
    name = "".join("_" if unicodedata.category(c)[0] == "C" else c for c in name)
    return name.lstrip("=+@ ") or "log"


def clean_name(name: str, field: str = "name") -> str:
    """A log name as given: stripped; control characters (newlines...), a leading '=', '+' or
    '@' (spreadsheet formulas) or more than MAX_NAME_CHARS characters raise InputError."""
    name = str(name).strip()
    bad = next((c for c in name if unicodedata.category(c)[0] == "C"), None)
    if bad is not None:
        raise InputError(f"control character {bad!r} in the log name {name[:40]!r}", field=field)
    if not name or name[0] in "=+@":
        raise InputError(f"log name {name[:40]!r} is empty or starts with '=', '+' or '@'", field=field)
    if len(name) > MAX_NAME_CHARS:
        raise InputError(f"log name of {len(name):,} characters (limit {MAX_NAME_CHARS})", field=field)
    return name


def _options_key(content_sha: str, options: dict) -> str:
    """The dedup key of a load: the decompressed content's hash plus the options that change
    what is stored (format, machine size, column mapping, time zone)."""
    text = json.dumps({"content": content_sha, **options}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _read(path, fmt, options: dict, max_bytes):
    try:
        return registry.read(fmt, path, max_bytes=max_bytes, **options)
    except InputError:
        raise
    except (EOFError, zlib.error) as e:
        raise InputError(f"truncated or corrupt gzip ({e})", file=path.name) from None
    except pd.errors.EmptyDataError:
        raise InputError("no data rows", file=path.name) from None
    except pd.errors.ParserError as e:
        m = re.search(r"line (\d+)", str(e))
        raise InputError(f"does not parse as {fmt}: {str(e).splitlines()[-1]}", file=path.name,
                         line=int(m.group(1)) if m else None) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", file=path.name) from None
    except MemoryError:
        raise InputError("too large to load in this process's memory", file=path.name) from None
    except OSError as e:
        raise InputError(f"cannot read ({e})", file=path.name) from None


def _report_from_row(row: dict, existing: bool) -> dict:
    rep = json.loads(row["report"]) if row.get("report") else {}
    rep["already_loaded"] = existing
    return rep


def _check_args(path: Path, machine_nodes, max_bytes) -> None:
    if not path.exists():
        raise InputError("no such file", file=str(path))
    if not path.is_file():
        raise InputError("not a regular file" + (" (a directory)" if path.is_dir() else ""), file=str(path))
    if path.stat().st_size == 0:
        raise InputError("empty file", file=path.name)
    if machine_nodes is not None and (int(machine_nodes) != machine_nodes or machine_nodes <= 0):
        raise InputError(f"machine nodes must be a positive whole number, got {machine_nodes}",
                         field="machine-nodes")
    if machine_nodes is not None and machine_nodes > MAX_MACHINE_NODES:
        raise InputError(f"machine nodes {machine_nodes} exceeds the limit {MAX_MACHINE_NODES:,}",
                         field="machine-nodes")
    if max_bytes is not None and (int(max_bytes) != max_bytes or max_bytes <= 0):
        raise InputError(f"max bytes must be a positive whole number, got {max_bytes}", field="max-bytes")


def ingest(con, path, format: str | None = None, name: str | None = None,
           machine_nodes: int | None = None, mapping: dict | None = None, tz: str | None = None,
           max_bytes: int | None = None, max_store_bytes: int | None = None) -> dict:
    """Load one log file into the database in one transaction; return the load report.

    Loads are keyed on the decompressed content plus the options (format, machine_nodes,
    mapping, tz): loading the same content with the same options again (plain or gzip) returns
    the existing report with already_loaded = True and a note naming the log. The same content
    with other options loads again under another name (a note says so); under the same name it
    is an InputError saying what to do. max_bytes: limit on the decompressed size (default
    planner.logs.limits.MAX_INPUT_BYTES), enforced while reading. max_store_bytes: refuse (StoreTooLarge)
    before anything is written when the parsed tables take more than this many bytes (estimate_store_bytes;
    the app's workspace quota).
    """
    path = Path(path)
    _check_args(path, machine_nodes, max_bytes)
    if format is not None:  # a bad format name is refused before the file is read
        registry.get(format)
    content_sha, _size = content_sha256(path, max_bytes)  # refuses an oversized input first
    fmt = format or detect_format(path)
    if mapping and format is None:  # a column mapping means a job CSV
        fmt = "csv"
    options = {"format": fmt, "machine_nodes": None if machine_nodes is None else int(machine_nodes),
               "mapping": dict(sorted(mapping.items())) if mapping else None, "tz": tz or None}
    key = _options_key(content_sha, options)
    row = con.execute("SELECT * FROM logs WHERE sha256 = ?", [key]).fetchone()
    if row is not None:
        rep = _report_from_row(dict(zip([d[0] for d in con.description], row)), True)
        rep["notes"] = list(rep.get("notes", [])) + [
            f"already loaded as {rep.get('log')!r} (same content and options): nothing stored"]
        return rep
    name = clean_name(name or default_name(path), "name")
    same = _same_content(con, content_sha)
    if same is not None and (name == same[0] or con.execute("SELECT 1 FROM logs WHERE name = ?", [name]).fetchone()):
        raise InputError(f"this content is already loaded as {same[0]!r} with other options "
                         f"({same[1]}); pass another name to load it again with these options, or "
                         f"remove {same[0]!r} first", file=path.name, field="name")
    if con.execute("SELECT 1 FROM logs WHERE name = ?", [name]).fetchone():
        raise InputError(f"a different log named {name!r} is already loaded; pass another name",
                         file=path.name, field="name")
    parsed = _read(path, fmt, {"mapping": mapping, "tz": tz}, max_bytes)
    built = _build(parsed, fmt, path, machine_nodes)
    if same is not None:
        built["notes"].append(f"same content as log {same[0]!r} ({same[1]}), loaded again with these options")
    if max_store_bytes is not None and (need := estimate_store_bytes(built)) > int(max_store_bytes):
        raise StoreTooLarge(need, int(max_store_bytes), path.name)
    return _store(con, built, fmt, path, name, key, content_sha, options)


STORE_FIXED_BYTES = 5 * 2**19  # 2.5 MiB


class StoreTooLarge(InputError):
    """A load whose tables would take more than the bytes it may store (nothing was written)."""

    def __init__(self, need: int, allowed: int, file: str):
        self.need, self.allowed = int(need), int(allowed)
        super().__init__(f"storing this log needs about {need / 2**20:,.1f} MiB, more than the "
                         f"{max(allowed, 0) / 2**20:,.1f} MiB allowed", file=file)


def estimate_store_bytes(b: dict) -> int:
    """The bytes a parsed log will store: its tables uncompressed (names and host lists at their
    length, numbers at their width) plus DuckDB's fixed cost of a log's tables (STORE_FIXED_BYTES:
    blocks of 256 KiB per table and column). Measured against the checkpointed DuckDB file
    (estimate / stored): KTH SP2 4.1 / 2.0 MiB, Theta 2022 3.8 / 1.75, the Summit node log
    21.5 / 7.0, a sacct whose host list names 10,000 nodes 3.1 / 2.25 (100,000 nodes: 8.7 / 2.5,
    and 8.3 at the file's peak while loading)."""
    n = STORE_FIXED_BYTES
    if b.get("names") is not None:
        n += sum(len(str(x)) for x in b["names"]) + 12 * len(b["names"])
    if b.get("events") is not None:
        n += 13 * len(b["events"][0]) + 20 * len(b["fragments"][0])
        if b.get("states") is not None:
            n += 13 * len(b["states"][0])
    job = b.get("jobs")
    if job is not None:
        n += 36 * len(job.job_id)
        if job.node_list_text is not None:
            n += sum(len(str(x)) for x in job.node_list_text if x is not None)
    return n + 12 * len(b["series"][0])


def _same_content(con, content_sha: str):
    """(name, its options as text) of a log holding this content, or None."""
    row = con.execute("SELECT name, report FROM logs WHERE json_extract_string(report, '$.content_sha256') = ? "
                      "ORDER BY log_id LIMIT 1", [content_sha]).fetchone()
    if row is None:
        return None
    opts = json.loads(row[1]).get("options") or {}
    return row[0], ", ".join(f"{k}={v}" for k, v in opts.items() if v is not None) or "defaults"


def _build(parsed, fmt, path, machine_nodes):
    """Turn a parsed log into table arrays and the report fields."""
    fname = path.name
    out = {"notes": list(getattr(parsed, "notes", []))}
    if isinstance(parsed, NodeLog):
        n_nodes = len(parsed.names)
        if machine_nodes is not None and machine_nodes != n_nodes:
            out["notes"].append(f"--machine-nodes {machine_nodes} ignored: the node log names {n_nodes} nodes")
        t0 = float(parsed.t_s[0])
        t1 = float(parsed.end_s if parsed.end_s is not None else parsed.t_s[-1])
        if t1 <= t0:
            raise InputError("the node log spans no time (one timestamp)", file=fname)
        ev = ((parsed.t_s, parsed.node, parsed.idle) if parsed.reduced
              else changes_only(parsed.t_s, parsed.node, parsed.idle, t0, n_nodes))
        rows = int(parsed.rows if parsed.rows is not None else len(parsed.t_s))
        if parsed.states is not None:
            out["states"] = parsed.states
        out.update(kind="node", names=parsed.names, events=ev, machine=n_nodes,
                   machine_from="node set", start=t0, end=t1, rows=rows,
                   skipped=parsed.skipped, identity="exact", jobs=None,
                   redundant_rows=int(rows - len(ev[0])))
        late = (parsed.late if parsed.late is not None
                else int(n_nodes - np.unique(parsed.node[parsed.t_s == t0]).size))
        if late:
            out["notes"].append(f"{late} nodes missing from the opening snapshot: busy until first named")
    else:
        job: JobLog = parsed
        if len(job.start_s) == 0:
            raise InputError(f"no usable jobs ({job.skipped} skipped: {job.skipped_why})", file=fname)
        t0, t1 = float(job.start_s.min()), float(job.end_s.max())
        if t1 <= t0:
            raise InputError("the job log spans no time", file=fname)
        out.update(kind="jobs", start=t0, end=t1, rows=len(job.start_s), skipped=job.skipped,
                   skipped_why=job.skipped_why, jobs=job)
        if job.node_list is not None:
            steps = node_busy_steps(job)
            ev, names = exact_from_jobs(steps, t0, machine_nodes)
            n_over, over_s, busy_s, first = node_overlaps(steps)
            if busy_s > 0 and over_s / busy_s > OVERSUB_REFUSE_FRACTION:
                raise InputError(
                    f"overlapping use of nodes: two or more jobs hold the same node (first: {first}) "
                    f"during {over_s / busy_s:.0%} of the busy node-time; refused as not a real schedule",
                    file=fname, field="NodeList")
            if n_over:
                out["notes"].append(f"{n_over} nodes held by two or more jobs at once ({over_s / 3600.0:.2f} "
                                    "node-hours in total): shared nodes, busy while any job holds them")
            out.update(names=names, events=ev, machine=len(names), identity="exact",
                       machine_from="flag" if machine_nodes else "node set",
                       node_partition=node_home_partition(job, names))
        else:
            if machine_nodes is not None:
                machine, src = int(machine_nodes), "flag"
            elif job.machine_nodes:
                machine, src = int(job.machine_nodes), job.machine_nodes_from or "header"
            else:
                machine, src = None, "max concurrent"
            t, idle, rep, machine = count_series(job, machine)
            if rep["oversub_fraction"] > OVERSUB_REFUSE_FRACTION:
                raise InputError(
                    f"busy nodes exceed the machine size {machine} ({src}) during "
                    f"{rep['oversub_fraction']:.0%} of the log; give the right --machine-nodes",
                    file=fname, field="machine-nodes")
            out.update(names=None, events=None, machine=machine, machine_from=src,
                       identity="derived", series=(t, idle), oversub=rep)
    _check_sizes(out, fname)
    if out.get("events") is not None:
        t, node, idle = out["events"]
        out["series"] = idle_series_from_events(t, idle)
        out["fragments"] = node_fragments(t, node, idle, out["end"])
    return out


def _check_sizes(out: dict, fname: str) -> None:
    """Refuse machine sizes, node counts and names beyond the limits (they would overflow the
    INTEGER columns or bloat the store): a one-line InputError naming the field."""
    if int(out["machine"]) > MAX_MACHINE_NODES:
        raise InputError(f"machine of {int(out['machine']):,} nodes ({out['machine_from']}) exceeds the "
                         f"limit {MAX_MACHINE_NODES:,}", file=fname, field="machine-nodes")
    job = out.get("jobs")
    if job is not None and len(job.nodes) and int(job.nodes.max()) > MAX_MACHINE_NODES:
        i = int(np.argmax(job.nodes))
        raise InputError(f"job {str(job.job_id[i])[:40]!r} asks for {int(job.nodes[i]):,} nodes (limit "
                         f"{MAX_MACHINE_NODES:,})", file=fname, field="nodes")
    if job is not None and len(job.job_id) and not np.issubdtype(np.asarray(job.job_id).dtype, np.integer):
        ids = pd.Series(job.job_id, dtype=object).astype(str)  # text ids: converted once for both checks
        lens = ids.str.len()
        if int(lens.max()) > MAX_NAME_CHARS:
            i = int(lens.to_numpy().argmax())
            raise InputError(f"job id of {int(lens.iloc[i]):,} characters (limit {MAX_NAME_CHARS})",
                             file=fname, field="job id")
        bad = ids.str.contains(_UNSAFE_NAME.pattern, regex=True)
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise InputError(f"job id {str(job.job_id[i])[:40]!r} holds a control character or starts "
                             "with '=', '+' or '@' (a spreadsheet formula)", file=fname, field="job id")
    for what, lab in (("partition", None if job is None else job.partition),
                      ("queue", None if job is None else job.queue),
                      ("user", None if job is None else job.user),
                      ("group", None if job is None else job.group)):
        if lab is None or not len(lab):
            continue
        uniq = [str(v) for v in pd.unique(pd.Series(lab, dtype=object))]
        long = next((v for v in uniq if len(v) > MAX_NAME_CHARS), None)
        if long is not None:
            raise InputError(f"{what} name of {len(long):,} characters (limit {MAX_NAME_CHARS})",
                             file=fname, field=what)
        unsafe = next((v for v in uniq if _UNSAFE_NAME.search(v)), None)
        if unsafe is not None:
            raise InputError(f"{what} name {unsafe[:40]!r} holds a control character or starts with '=', "
                             "'+' or '@' (a spreadsheet formula)", file=fname, field=what)
    names = out.get("names")
    if names:
        long = next((n for n in names if len(n) > MAX_NAME_CHARS), None)
        if long is not None:
            raise InputError(f"node name of {len(long):,} characters (limit {MAX_NAME_CHARS}): "
                             f"{long[:40]!r}...", file=fname, field="node")
        unsafe = next((n for n in names if _UNSAFE_NAME.search(n)), None)
        if unsafe is not None:
            raise InputError(f"node name {unsafe[:40]!r} holds a control character or starts with '=', "
                             "'+' or '@' (a spreadsheet formula)", file=fname, field="node")


def _insert(con, table: str, select: str, df: pd.DataFrame, log_id) -> None:
    """INSERT INTO table SELECT log_id, <select> FROM df (table and select are fixed strings of
    this module, never user text)."""
    con.register("_rows", df)
    try:
        con.execute(f"INSERT INTO {table} SELECT ?, {select} FROM _rows", [log_id])
    finally:
        con.unregister("_rows")


def _store(con, b, fmt, path, name, sha, content_sha, options) -> dict:
    over = b.get("oversub") or {"oversub_intervals": 0, "oversub_s": 0.0, "oversub_max_nodes": 0,
                                "oversub_fraction": 0.0}
    report = {"log": name, "kind": b["kind"], "format": fmt, "rows": int(b["rows"]),
              "nodes": int(b["machine"]), "start": iso(b["start"]), "end": iso(b["end"]),
              "start_s": float(b["start"]), "end_s": float(b["end"]),
              "skipped": int(b["skipped"]), "skipped_why": b.get("skipped_why", {}),
              "machine_nodes_from": b["machine_from"], "node_identity": b["identity"],
              "span_h": round((b["end"] - b["start"]) / 3600.0, 6),
              "oversubscription": over, "notes": b["notes"], "source": as_text(path),
              "already_loaded": False, "content_sha256": content_sha, "options": options}
    if "redundant_rows" in b:
        report["repeated_state_rows"] = b["redundant_rows"]
    con.execute("BEGIN TRANSACTION")
    try:
        log_id = con.execute("SELECT nextval('log_id_seq')").fetchone()[0]
        report["log_id"] = int(log_id)
        con.execute(
            "INSERT INTO logs (log_id, name, kind, format, source, sha256, machine_nodes, "
            "machine_nodes_from, start_s, end_s, rows, skipped, node_identity, oversub_intervals, "
            "oversub_s, oversub_max_nodes, report) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [log_id, name, b["kind"], fmt, as_text(path), sha, int(b["machine"]), b["machine_from"],
             b["start"], b["end"], int(b["rows"]), int(b["skipped"]), b["identity"],
             int(over["oversub_intervals"]), float(over["oversub_s"]), int(over["oversub_max_nodes"]),
             json.dumps(report)])
        if b.get("names") is not None:
            nd = pd.DataFrame({"node_idx": np.arange(len(b["names"]), dtype=np.int32),
                               "name": pd.Series(b["names"], dtype=object),
                               "part": pd.Series(b.get("node_partition"), index=range(len(b["names"])),
                                                 dtype=object)})
            _insert(con, "nodes", "node_idx, name, CAST(part AS VARCHAR)", nd, log_id)
        if b.get("events") is not None:
            t, node, idle = b["events"]
            ev = pd.DataFrame({"t_s": t, "node_idx": node.astype(np.int32), "idle": idle})
            _insert(con, "node_events", "t_s, node_idx, idle", ev, log_id)
            if b.get("states") is not None:
                st_t, st_n, st_c = b["states"]
                sd = pd.DataFrame({"t_s": st_t, "node_idx": np.asarray(st_n, np.int32),
                                   "state": pd.Categorical.from_codes(np.asarray(st_c, np.int8), STATES)})
                _insert(con, "node_states", "t_s, node_idx, CAST(state AS VARCHAR)", sd, log_id)
            fn, fs, fe = b["fragments"]
            fr = pd.DataFrame({"node_idx": fn.astype(np.int32), "start_s": fs, "end_s": fe})
            _insert(con, "fragments", "node_idx, start_s, end_s, 1, false", fr, log_id)
        job = b.get("jobs")
        if job is not None:
            ids = np.asarray(job.job_id)
            cols = {"job_id": ids if np.issubdtype(ids.dtype, np.integer) else pd.Series(ids, dtype=object),
                    "submit_s": job.submit_s, "start_s": job.start_s, "end_s": job.end_s,
                    "nodes": job.nodes.astype(np.int32)}
            if job.node_list_text is not None:
                cols["node_list"] = pd.Series(job.node_list_text, dtype=object)
            nl_sql = "node_list" if job.node_list_text is not None else "NULL"
            for key, lab in (("part", job.partition), ("queue", job.queue), ("usr", job.user), ("grp", job.group)):
                cols[key] = pd.Series(lab if lab is not None else [None] * len(ids), dtype=object)
            _insert(con, "jobs", f"CAST(job_id AS VARCHAR), submit_s, start_s, end_s, nodes, {nl_sql}, "
                    "nullif(CAST(part AS VARCHAR), ''), nullif(CAST(queue AS VARCHAR), ''), "
                    "nullif(CAST(usr AS VARCHAR), ''), nullif(CAST(grp AS VARCHAR), '')",
                    pd.DataFrame(cols), log_id)
        t, idle = b["series"]
        se = pd.DataFrame({"t_s": t, "idle_nodes": np.asarray(idle, dtype=np.int32)})
        _insert(con, "idle_series", "t_s, idle_nodes", se, log_id)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return report


UNITS = ("node", "GPU")  # what one unit of a log's machine size is (a GPU trace counts GPUs)


def set_unit(con, log, unit: str) -> None:
    """Record what one "node" of a loaded log is: 'node' or 'GPU' (its node-hours are GPU-hours)."""
    if unit not in UNITS:
        raise InputError(f"unit must be one of {', '.join(UNITS)}, got {unit!r}", field="unit")
    con.execute("UPDATE logs SET unit = ? WHERE name = ?", [unit, str(log)])


def unit_of(con, log) -> str:
    """'node' or 'GPU' (set_unit); 'node' for a database written before the unit existed."""
    try:
        r = con.execute("SELECT unit FROM logs WHERE name = ?", [str(log)]).fetchone()
    except Exception:  # noqa: BLE001  (an older database opened read-only: no unit column)
        return "node"
    return (r[0] if r and r[0] else "node")


def list_logs(con) -> pd.DataFrame:
    """One row per loaded log: name, kind, format, nodes, unit, start, end, span_h, rows, skipped..."""
    cols = ("SELECT log_id, name, kind, format, machine_nodes AS nodes, {unit} AS unit, machine_nodes_from, "
            "start_s, end_s, (end_s - start_s) / 3600.0 AS span_h, rows, skipped, node_identity, "
            "oversub_intervals, oversub_s, source, loaded_at FROM logs ORDER BY log_id")
    try:
        df = con.execute(cols.format(unit="coalesce(unit, 'node')")).df()
    except duckdb.BinderException:  # an older database opened read-only: no unit column
        df = con.execute(cols.format(unit="'node'")).df()
    df.insert(7, "start", [iso(v) for v in df["start_s"]])
    df.insert(8, "end", [iso(v) for v in df["end_s"]])
    return df


def remove_log(con, log) -> bool:
    """Delete a loaded log (name or log_id) from every table, in one transaction.

    Returns False when there is no such log. To reload a file with other options (e.g. another
    --machine-nodes), remove it first: loads are deduplicated by content."""
    row = log_row(con, log)
    if row is None:
        return False
    con.execute("BEGIN TRANSACTION")
    try:
        for t in TABLES[::-1]:  # fixed table names, never user text
            con.execute(f"DELETE FROM {t} WHERE log_id = ?", [int(row["log_id"])])
        present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        for t in LIVE_TABLES:  # a live log's polls, states, job events and recommendations
            if t in present:
                con.execute(f"DELETE FROM {t} WHERE log_id = ?", [int(row["log_id"])])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


def load_report(con, log) -> dict:
    """The stored load report of a loaded log (name or log_id); InputError if absent."""
    row = log_row(con, log)
    if row is None:
        raise InputError(f"no log named {log!r} in the database", field="log")
    return _report_from_row(row, True)
