"""Generic job CSV with a column mapping.

mapping = {"start": COL, "end": COL, "nodes": COL, "node_list": COL?, "submit": COL?, "partition": COL?}
("duration": COL, seconds, may replace "end"; "job_id": COL optional). Times are ISO 8601
(naive = UTC) or epoch seconds. With a node_list column node identity is exact (host lists are
expanded like Slurm's); without it, only counts are known. Without a mapping, columns named
exactly start, end, nodes (and node_list, submit, job_id) are used. Jobs with end == start are
skipped; end < start is an error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from planner.errors import InputError
from planner.logs import limits
from planner.logs.common import (
    JobLog,
    LineMap,
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

FORMAT = "csv"
KEYS = ("start", "end", "duration", "nodes", "node_list", "submit", "job_id", "partition")
DEFAULT_MAPPING = {"start": "start", "end": "end", "nodes": "nodes", "node_list": "node_list",
                   "submit": "submit", "job_id": "job_id", "partition": "partition"}


def looks_like(head_lines: list[str]) -> bool:
    return bool(head_lines) and "," in head_lines[0]


def read(path, mapping: dict | None = None, max_bytes: int | None = None) -> JobLog:
    path = Path(path)
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
    parts, cols, seen, kept = [], None, 0, 0
    for off, df in csv_chunks(path, max_bytes=max_bytes, dtype=str, keep_default_na=False,
                              skipinitialspace=True):
        if cols is None:
            cols = find_columns(df, {k: v for k, v in mapping.items() if v}, path, optional=optional)
        part = _read_rows(df, off, cols, path, offset_lines(line_of, off), state)
        seen, kept = seen + len(df), kept + len(part.start_s)
        if kept > limits.MAX_JOBS:
            fail(f"more than {limits.MAX_JOBS:,} jobs (the job limit)", path, line_of, off + len(df) - 1)
        parts.append(part)
    if seen == 0:
        fail("no data rows (header only)", path)
    return merge_joblogs(parts)


def _read_rows(df, off, cols, path, line_of, state) -> JobLog:
    """One chunk of job rows (row `off` of the file onwards) -> the jobs kept."""
    start = times(df[cols["start"]], cols["start"], path, line_of)
    if "end" in cols:
        end = times(df[cols["end"]], cols["end"], path, line_of)
    else:
        dur = numeric(df[cols["duration"]], cols["duration"], path, line_of)
        end = start + dur
        check_time_range(end, cols["duration"], path, line_of)
    neg = end < start
    if neg.any():
        fail("end before start (negative run time)", path, line_of, int(np.argmax(neg)),
             cols.get("end", cols.get("duration")))
    submit = (times(df[cols["submit"]], cols["submit"], path, line_of, missing=("", "Unknown", "None"))
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
           else np.arange(off + 1, off + len(df) + 1).astype(str))
    why = {"zero run time": int((end == start).sum())}
    if "nodes" in cols:
        why["no nodes"] = int(((nodes <= 0) & (end > start)).sum())
    part = df[cols["partition"]].astype("str").str.strip().to_numpy(dtype=object)[idx] if "partition" in cols else None
    return JobLog(partition=part, job_id=job[idx], submit_s=submit[idx], start_s=start[idx], end_s=end[idx],
                  nodes=nodes[idx].astype(np.int64), node_list=lists, node_list_text=text,
                  skipped=int((~keep).sum()), skipped_why={k: n for k, n in why.items() if n})
