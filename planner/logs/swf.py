"""Standard Workload Format (Parallel Workloads Archive) job logs.

18 whitespace-separated fields per job, `;` header/comment lines. Rules: submit (field 2) is
relative to `; UnixStartTime:` (0 if absent); start = submit + wait (field 3), wait -1 means
start = submit; end = start + run (field 4); nodes = field 5, or field 8 when field 5 <= 0.
Jobs with run <= 0 (including -1 unknown), unknown submit, or no node count are dropped and
counted as skipped. Machine size: `; MaxNodes:` (or `; MaxProcs:` when MaxNodes is absent or
differs, since fields 5/8 count processors), else a flag, else the most nodes in use at once.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from planner.logs import limits
from planner.logs.common import (
    JobLog,
    LineMap,
    check_time_range,
    fail,
    merge_joblogs,
    numeric,
    offset_lines,
)
from planner.logs.limits import MAX_NAME_CHARS
from planner.logs.stream import csv_chunks, iter_lines

FORMAT = "swf"
_HDR = re.compile(r"^;\s*(\w+)\s*:\s*(.*)$")
_NUMROW = re.compile(r"^\s*-?\d+(\s+-?\d+(\.\d*)?){7,}\s*$")


def looks_like(head_lines: list[str]) -> bool:
    data = [ln for ln in head_lines if ln.strip() and not ln.lstrip().startswith(";")]
    if any(ln.lstrip().startswith(";") for ln in head_lines[:5]) and (not data or _NUMROW.match(data[0])):
        return True
    return bool(data) and all(_NUMROW.match(ln) for ln in data[:5])


MAX_HEADER_KEYS = 1000  # distinct `; Key:` entries kept (a header is a few dozen)


def parse_header(lines) -> dict:
    """`; Key: value` header lines -> dict (values stripped strings). Reads up to the first
    data line (any length of header; a UTF-8 BOM on the first line is ignored)."""
    out = {}
    for k, ln in enumerate(lines):
        if isinstance(ln, bytes):
            ln = ln.decode("utf-8", "replace")
        s = (ln.lstrip("\ufeff") if k == 0 else ln).strip()
        if not s:
            continue
        if not s.startswith(";"):
            break
        m = _HDR.match(s)
        if m and m.group(1) not in out and len(out) < MAX_HEADER_KEYS:
            out[m.group(1)] = m.group(2).strip()[:MAX_NAME_CHARS]
    return out


def _header_int(hdr, key, path):
    if key not in hdr:
        return None
    try:
        v = float(hdr[key].split()[0])
    except (ValueError, IndexError):
        fail(f"header '{key}' is not a number: {hdr[key]!r}", path, field=key)
    if not np.isfinite(v):
        fail(f"header '{key}' is not a finite number", path, field=key)
    if abs(v) > 1e15:  # no machine size or epoch second is that large (and int64 math would overflow)
        fail(f"header '{key}' is out of range: {hdr[key][:40]!r}", path, field=key)
    return int(v)


def _labels(col: pd.Series):
    """Queue / partition / user / group numbers (fields 15 / 16 / 12 / 13) as text, '' where unknown
    (-1); None if all unknown."""
    lab = col.astype("str").str.strip().str.replace(r"\.0+$", "", regex=True).to_numpy(dtype=object)
    lab = np.where((lab == "-1") | (lab == "nan"), "", lab)
    return lab if (lab != "").any() else None


def read(path, max_bytes: int | None = None, chunk_rows: int | None = None) -> JobLog:
    path = Path(path)
    hdr = parse_header(iter_lines(path, max_bytes))
    base = _header_int(hdr, "UnixStartTime", path) or 0
    line_of = LineMap(path, header=False, comment=b";")
    parts = []
    kept = 0
    for off, df in csv_chunks(path, max_bytes=max_bytes, chunk_rows=chunk_rows, sep=r"\s+",
                              comment=";", header=None, engine="c"):
        part = _read_rows(df, base, path, offset_lines(line_of, off))
        kept += len(part.start_s)
        if kept > limits.MAX_JOBS:
            fail(f"more than {limits.MAX_JOBS:,} jobs (the job limit)", path, line_of, off + len(df) - 1)
        parts.append(part)
    if not parts or sum(len(p.start_s) + p.skipped for p in parts) == 0:
        fail("no job rows", path)
    job = merge_joblogs(parts)
    maxn = _header_int(hdr, "MaxNodes", path)
    maxp = _header_int(hdr, "MaxProcs", path)
    if maxn is not None and maxn > 0 and (maxp is None or maxp == maxn or maxp <= 0):
        job.machine_nodes, job.machine_nodes_from = maxn, "header"
    elif maxp is not None and maxp > 0:
        job.machine_nodes, job.machine_nodes_from = maxp, "header"
        if maxn:
            job.notes.append(f"MaxProcs {maxp} differs from MaxNodes {maxn}: counts are processors")
    return job


def _read_rows(df, base, path, line_of) -> JobLog:
    """One chunk of job rows -> the jobs kept (and the skip counts)."""
    if len(df) == 0:
        return JobLog(*(np.empty(0) for _ in range(4)), nodes=np.empty(0, np.int64))
    if df.shape[1] < 18:
        missing = df.isna().any(axis=1).to_numpy() if df.shape[1] > 1 else np.ones(len(df), bool)
        fail(f"expected 18 fields per job, found {df.shape[1]}", path, line_of,
             int(np.argmax(missing)) if missing.any() else 0)
    if df.shape[1] > 18:
        extra = df.iloc[:, 18:].notna().any(axis=1).to_numpy()
        fail("more than 18 fields in a job row", path, line_of, int(np.argmax(extra)))
    short = df.iloc[:, :18].isna().any(axis=1).to_numpy()
    if short.any():
        fail("fewer than 18 fields in a job row", path, line_of, int(np.argmax(short)))
    names = {0: "job", 1: "submit", 2: "wait", 3: "run", 4: "allocated procs", 7: "requested procs"}
    # whole numbers below 2^53 (numeric's integer check): job numbers are cast to int64 below
    v = {i: numeric(df[i], f"field {i + 1} ({n})", path, line_of, integer=i in (0, 4, 7)) for i, n in names.items()}
    submit = v[1] + base
    wait = v[2]
    run = v[3]
    nodes = np.where(v[4] > 0, v[4], v[7])
    badwait = (wait < 0) & (wait != -1)
    if badwait.any():
        fail(f"negative wait time {wait[int(np.argmax(badwait))]:g}", path, line_of,
             int(np.argmax(badwait)), "field 3 (wait)")
    start = submit + np.where(wait == -1, 0, wait)  # wait -1: unknown, start = submit
    keep = (run > 0) & (v[1] >= 0) & (nodes > 0)
    check_time_range(start, "field 2 (submit) + UnixStartTime", path, line_of, rows=keep)
    check_time_range(start + run, "field 4 (run)", path, line_of, rows=keep)
    why = {"run <= 0": int((run <= 0).sum()),
           "unknown submit": int(((v[1] < 0) & (run > 0)).sum()),
           "no node count": int(((nodes <= 0) & (run > 0) & (v[1] >= 0)).sum())}
    job = v[0].astype(np.int64)  # stored as text by the store (CAST in SQL: fast)
    queue, part, user, group = _labels(df[14]), _labels(df[15]), _labels(df[11]), _labels(df[12])
    return JobLog(partition=None if part is None else part[keep], queue=None if queue is None else queue[keep],
                  user=None if user is None else user[keep], group=None if group is None else group[keep],
                  job_id=job[keep], submit_s=submit[keep], start_s=start[keep],
                  end_s=(start + run)[keep], nodes=nodes[keep].astype(np.int64),
                  skipped=int((~keep).sum()), skipped_why={k: n for k, n in why.items() if n})
