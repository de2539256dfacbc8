"""Slurm accounting dumps: `sacct -P` output (pipe-separated, one header line).

Needs columns JobID, Start, End, NNodes, NodeList (Submit, Partition used when present). Job steps
(`123.batch`, `123.extern`, `123.0`) are skipped; array and het job ids (`123_4`, `123+0`)
are jobs. Start `Unknown`/`None` (never started) or NodeList `None assigned`: the job is skipped
and counted. End `Unknown` with a known Start means still running: the job is clipped to the
log end (the latest known time in the log). Host lists are expanded (planner.logs.hostlist).

Times: sacct prints local times without an offset. They are read as UTC unless tz (an IANA
zone, `planner ingest --tz America/Chicago`) is given; then a time in the repeated hour of the
autumn DST change is the earlier (DST) one, except an End that would come before its Start,
which is the later one (a job across the repeat). Read in chunks (bounded memory).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from planner.logs import limits
from planner.logs.common import (
    JobLog,
    LineMap,
    check_text,
    check_tz,
    fail,
    find_columns,
    merge_joblogs,
    numeric,
    times,
)
from planner.logs.nodelists import ListState, expand_lists
from planner.logs.stream import csv_chunks

FORMAT = "slurm"
REQUIRED = ("JobID", "Start", "End", "NNodes", "NodeList")
MISSING = ("Unknown", "None", "", "N/A")


def looks_like(head_lines: list[str]) -> bool:
    if not head_lines:
        return False
    cols = [c.strip().strip('"').lower() for c in head_lines[0].split("|")]
    return "|" in head_lines[0] and "jobid" in cols


def read(path, max_bytes: int | None = None, tz: str | None = None, chunk_rows: int | None = None) -> JobLog:
    path = Path(path)
    tz = check_tz(tz)
    line_of = LineMap(path, header=True)
    state = ListState()
    parts, cols, seen, latest, kept, n_jobs = [], None, 0, -np.inf, 0, 0
    # sacct -P never quotes: a '"' is text (pandas' quoting let a stray one swallow rows)
    for off, df in csv_chunks(path, max_bytes=max_bytes, chunk_rows=chunk_rows, sep="|", dtype=str,
                              keep_default_na=False, quoting=csv.QUOTE_NONE):
        if cols is None:
            df = df.loc[:, [c for c in df.columns if not (str(c).startswith("Unnamed") and df[c].eq("").all())]]
            cols = find_columns(df, {k: k for k in REQUIRED + ("Submit", "Partition", "User", "Account")}, path,
                                optional=("Submit", "Partition", "User", "Account"))
        seen += len(df)
        part, last, n = _read_rows(df, off, cols, path, line_of, tz, state)
        latest, n_jobs = max(latest, last), n_jobs + n
        kept += len(part.start_s)
        if kept > limits.MAX_JOBS:
            fail(f"more than {limits.MAX_JOBS:,} jobs (the job limit)", path, line_of, off + len(df) - 1)
        parts.append(part)
    if seen == 0:
        fail("no data rows (header only)", path)
    if n_jobs == 0:
        fail("only job steps, no jobs", path)
    job = merge_joblogs(parts)
    if not np.isfinite(latest):
        fail("no job with a known Start", path)
    running = np.isnan(job.end_s)
    job.end_s = np.where(running, latest, job.end_s)  # still running: clipped to the log end
    if running.any():
        job.notes.append(f"{int(running.sum())} jobs still running (End Unknown): clipped to the log end")
    return job


def _read_rows(df, off, cols, path, line_of, tz, state):
    """One chunk of sacct rows -> (the jobs kept, running ones with End NaN; the chunk's latest
    known time; how many rows were jobs, not steps)."""
    jid = df[cols["JobID"]].astype("str").str.strip()
    step = jid.str.contains(".", regex=False).to_numpy()
    n_steps = int(step.sum())
    rows = np.flatnonzero(~step)
    sub = df.iloc[rows].reset_index(drop=True)

    def lm(i):  # row index within `sub` -> line
        return line_of(off + int(rows[i]))

    start = times(sub[cols["Start"]], "Start", path, lm, missing=MISSING, tz=tz)
    end = times(sub[cols["End"]], "End", path, lm, missing=MISSING, tz=tz)
    if tz is not None:  # a job across the repeated hour: its End is the later reading
        late = times(sub[cols["End"]], "End", path, lm, missing=MISSING, tz=tz, later=True)
        end = np.where(end < start, late, end)
    submit = (times(sub[cols["Submit"]], "Submit", path, lm, missing=MISSING, tz=tz) if "Submit" in cols
              else np.full(len(sub), np.nan))
    for key in ("JobID", "NodeList", "Partition", "User", "Account"):
        if key in cols:
            quoted = sub[cols[key]].str.contains('"', regex=False).to_numpy()
            if quoted.any():
                fail(f"a '\"' in {sub[cols[key]].iloc[int(np.argmax(quoted))][:40]!r} (sacct -P does not "
                     "quote: an edited or damaged dump?)", path, lm, int(np.argmax(quoted)), key)
            check_text(sub[cols[key]], key, path, lm)
    nodelist = sub[cols["NodeList"]].astype("str").str.strip()
    unassigned = nodelist.str.lower().isin(["none assigned", "none", ""]).to_numpy()
    nodes = numeric(sub[cols["NNodes"]], "NNodes", path, lm, integer=True)
    not_started = np.isnan(start)
    known = np.concatenate([start[~np.isnan(start)], end[~np.isnan(end)]])
    last = float(known.max()) if len(known) else -np.inf
    running = ~not_started & np.isnan(end)
    keep = ~not_started & ~unassigned
    neg = keep & (end < start)
    if neg.any():
        hint = "" if tz else "; if the times are local times, give the cluster's time zone (--tz)"
        fail("End before Start (negative run time)" + hint, path, lm, int(np.argmax(neg)), "End")
    zero = keep & (end == start) & ~running
    keep &= ~zero
    idx = np.flatnonzero(keep)
    lists = expand_lists(nodelist.to_numpy()[idx], nodes[idx], path, lambda k: lm(int(idx[k])), "NodeList",
                         state)
    why = {"job steps": n_steps, "never started": int(not_started.sum()),
           "no nodes assigned": int((~not_started & unassigned).sum()), "zero run time": int(zero.sum())}
    part = (sub[cols["Partition"]].astype("str").str.strip().to_numpy(dtype=object)[idx]
            if "Partition" in cols else None)
    user, account = ((sub[cols[k]].astype("str").str.strip().to_numpy(dtype=object)[idx] if k in cols else None)
                     for k in ("User", "Account"))
    return JobLog(partition=part, user=user, group=account, job_id=jid.to_numpy()[rows][idx].astype(object),
                  submit_s=submit[idx],
                  start_s=start[idx],
                  end_s=end[idx], nodes=nodes[idx].astype(np.int64), node_list=lists,
                  node_list_text=nodelist.to_numpy()[idx].astype(object), skipped=n_steps + int((~keep).sum()),
                  skipped_why={k: n for k, n in why.items() if n}), last, len(rows)
