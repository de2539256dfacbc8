"""Generic job CSV with a column mapping.

mapping = {"start": COL, "end": COL, "nodes": COL, "node_list": COL?, "submit": COL?, "partition": COL?}
("duration": COL, seconds, may replace "end"; "job_id": COL optional). Times are ISO 8601
(naive = UTC) or epoch seconds. With a node_list column node identity is exact (host lists are
expanded like Slurm's); without it, only counts are known. Without a mapping, columns named
exactly start, end, nodes (and node_list, submit, job_id, partition) are used. Jobs with end == start are
skipped; end < start is an error.

Time options (same keys in the mapping dict, from `planner ingest --time-unit/--time-origin/
--skip-incomplete` and the app's upload form): time_unit "s" (default) or "ms" for numeric times;
time_origin (ISO) makes numeric times seconds (or ms) relative to that instant (traces such as
Alibaba's GPU trace count from their start); skip_incomplete drops rows whose required fields
(start, end or duration, nodes or node list) are empty, counted per reason ("empty start" ...),
instead of refusing the file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from planner.errors import InputError
from planner.logs import limits
from planner.logs.common import (
    JobLog,
    LineMap,
    check_text,
    check_time_range,
    fail,
    find_columns,
    merge_joblogs,
    numeric,
    offset_lines,
    times,
)
from planner.logs.nodelists import ListState, expand_lists
from planner.logs.stream import csv_chunks
from planner.times import parse_time

FORMAT = "csv"
KEYS = ("start", "end", "duration", "nodes", "node_list", "submit", "job_id", "partition")
OPTION_KEYS = ("time_unit", "time_origin", "skip_incomplete")
TIME_UNITS = {"s": 1.0, "ms": 1e-3}
DEFAULT_MAPPING = {"start": "start", "end": "end", "nodes": "nodes", "node_list": "node_list",
                   "submit": "submit", "job_id": "job_id", "partition": "partition"}


def looks_like(head_lines: list[str]) -> bool:
    return bool(head_lines) and "," in head_lines[0]


def time_options(mapping: dict | None, path) -> tuple[dict | None, dict]:
    """Split the time options off a mapping: (column mapping or None, options), validated."""
    mapping = dict(mapping or {})
    opts = {k: mapping.pop(k) for k in OPTION_KEYS if k in mapping}
    unit = str(opts.get("time_unit") or "s").strip().lower()
    if unit not in TIME_UNITS:
        raise InputError(f"time unit must be one of {', '.join(TIME_UNITS)}, got {unit!r}",
                         file=Path(path).name, field="time-unit")
    origin = opts.get("time_origin")
    origin_s = None
    if origin not in (None, ""):
        try:
            origin_s = parse_time(str(origin).strip(), field="time-origin")
        except InputError:
            raise InputError(f"time origin is not an ISO date-time: {str(origin)[:40]!r}",
                             file=Path(path).name, field="time-origin") from None
        check_time_range([origin_s], "time-origin", path, None)
    skip = str(opts.get("skip_incomplete", "")).strip().lower() in ("1", "true", "yes", "on")
    return (mapping or None), {"scale": TIME_UNITS[unit], "origin_s": origin_s, "numeric": unit != "s"
                               or origin_s is not None, "skip_incomplete": skip}


def _times(col, name, path, line_of, topt, missing=()) -> np.ndarray:
    """Times of one column under the time options (ISO/epoch s, epoch ms, or relative to an origin)."""
    if not topt["numeric"]:
        return times(col, name, path, line_of, missing=missing)
    vals = numeric(col, name, path, line_of, allow_missing=bool(missing)) * topt["scale"]
    vals = vals + (topt["origin_s"] or 0.0)
    check_time_range(vals, name, path, line_of)
    return vals


def _drop_incomplete(df, cols: dict) -> tuple[object, np.ndarray, dict]:
    """Rows of one chunk with an empty required field removed: (rows kept, their row indices in
    the chunk, counts per reason "empty <column>", each row counted once under its first empty
    field)."""
    required = [k for k in ("start", "end", "duration", "nodes") if k in cols]
    if "nodes" not in cols and "node_list" in cols:
        required.append("node_list")
    bad = np.zeros(len(df), dtype=bool)
    why: dict[str, int] = {}
    for key in required:
        empty = df[cols[key]].astype("str").str.strip().isin(["", "nan", "NaN", "None", "null", "NULL"]).to_numpy()
        new = empty & ~bad
        if new.any():
            why[f"empty {cols[key]}"] = int(new.sum())
        bad |= empty
    kept = np.flatnonzero(~bad)
    if not bad.any():
        return df, kept, why
    return df.iloc[kept].reset_index(drop=True), kept, why


def read(path, mapping: dict | None = None, max_bytes: int | None = None,
         chunk_rows: int | None = None) -> JobLog:
    path = Path(path)
    mapping, topt = time_options(mapping, path)
    given = mapping is not None
    mapping = dict(mapping or DEFAULT_MAPPING)
    unknown = set(mapping) - set(KEYS)
    if unknown:
        raise InputError(f"unknown mapping key(s) {sorted(unknown)}; use {', '.join(KEYS)}",
                         file=path.name)
    if not mapping.get("start") or not (mapping.get("end") or mapping.get("duration")):
        raise InputError("csv mapping needs start and end (or duration) columns", file=path.name,
                         field="start" if not mapping.get("start") else "end")
    if not mapping.get("nodes") and not mapping.get("node_list"):
        raise InputError("csv mapping needs a nodes or node_list column", file=path.name, field="nodes")
    optional = ("node_list", "submit", "job_id", "partition") if not given else ("job_id",)
    if not given:
        optional += ("duration",)
    if mapping.get("end") and mapping.get("duration"):
        mapping.pop("duration" if not given else "end")
    line_of = LineMap(path, header=True)
    state = ListState()
    parts, cols, seen, kept, complete = [], None, 0, 0, 0
    incomplete: dict[str, int] = {}
    for off, df in csv_chunks(path, max_bytes=max_bytes, chunk_rows=chunk_rows, dtype=str,
                              keep_default_na=False, skipinitialspace=True):
        if cols is None:
            cols = find_columns(df, {k: v for k, v in mapping.items() if v}, path, optional=optional)
        seen += len(df)
        chunk_lines = offset_lines(line_of, off)
        rows = None
        if topt["skip_incomplete"]:
            full, rows, why = _drop_incomplete(df, cols)
            for k, n in why.items():
                incomplete[k] = incomplete.get(k, 0) + n
            if len(full) == 0:
                continue
            if len(full) < len(df):
                chunk_lines = (lambda r, _l=chunk_lines, _k=rows: _l(int(_k[int(r)])))
            df = full
        complete += len(df)
        part = _read_rows(df, off, cols, path, chunk_lines, state, topt, rows)
        kept += len(part.start_s)
        if kept > limits.MAX_JOBS:
            fail(f"more than {limits.MAX_JOBS:,} jobs (the job limit)", path, chunk_lines, len(df) - 1)
        parts.append(part)
    if seen == 0:
        fail("no data rows (header only)", path)
    if complete == 0:
        fail("no complete rows: every row has an empty required field "
             f"({', '.join(f'{k}: {n:,}' for k, n in incomplete.items())})", path)
    job = merge_joblogs(parts)
    if incomplete:
        job.skipped += sum(incomplete.values())
        job.skipped_why = {**incomplete, **job.skipped_why}
    return job


def _read_rows(df, off, cols, path, line_of, state, topt, rows=None) -> JobLog:
    """One chunk of job rows (row `off` of the file onwards; `rows`: their row indices within the
    chunk when incomplete rows were dropped) -> the jobs kept."""
    for c in df.columns:  # names refused with control characters; no value may span lines
        check_text(df[c], str(c), path, line_of,
                   names=c in [cols.get(k) for k in ("job_id", "node_list", "partition")])
    start = _times(df[cols["start"]], cols["start"], path, line_of, topt)
    if "end" in cols:
        end = _times(df[cols["end"]], cols["end"], path, line_of, topt)
    else:
        dur = numeric(df[cols["duration"]], cols["duration"], path, line_of)
        end = start + dur
        check_time_range(end, cols["duration"], path, line_of)
    neg = end < start
    if neg.any():
        fail("end before start (negative run time)", path, line_of, int(np.argmax(neg)),
             cols.get("end", cols.get("duration")))
    submit = (_times(df[cols["submit"]], cols["submit"], path, line_of, topt, missing=("", "Unknown", "None"))
              if "submit" in cols
              else np.full(len(df), np.nan))
    nodes = numeric(df[cols["nodes"]], cols["nodes"], path, line_of, integer=True) if "nodes" in cols else None
    if nodes is not None and (nodes < 0).any():
        fail("negative node count", path, line_of, int(np.argmax(nodes < 0)), cols["nodes"])
    keep = end > start
    if nodes is not None:
        keep &= nodes > 0
    idx = np.flatnonzero(keep)
    lists = None
    text = None
    if "node_list" in cols:
        text = df[cols["node_list"]].astype("str").to_numpy()[idx]
        lists = expand_lists(text, None if nodes is None else nodes[idx], path,
                             lambda k: line_of(int(idx[k])), cols["node_list"], state)
        if nodes is None:
            nodes = np.zeros(len(df))
            nodes[idx] = [len(h) for h in lists]
    job = (df[cols["job_id"]].astype("str").to_numpy() if "job_id" in cols
           else (off + 1 + (np.arange(len(df)) if rows is None else rows)).astype(str))
    why = {"zero run time": int((end == start).sum())}
    if "nodes" in cols:
        why["no nodes"] = int(((nodes <= 0) & (end > start)).sum())
    part = df[cols["partition"]].astype("str").str.strip().to_numpy(dtype=object)[idx] if "partition" in cols else None
    return JobLog(partition=part, job_id=job[idx], submit_s=submit[idx], start_s=start[idx], end_s=end[idx],
                  nodes=nodes[idx].astype(np.int64), node_list=lists, node_list_text=text,
                  skipped=int((~keep).sum()), skipped_why={k: n for k, n in why.items() if n})
