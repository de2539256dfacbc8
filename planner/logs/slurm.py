"""Slurm accounting dumps: `sacct -P` output (pipe-separated, one header line).

Needs columns JobID, Start, End, NNodes, NodeList (Submit, Partition used when present). Job steps
(`123.batch`, `123.extern`, `123.0`) are skipped; array and het job ids (`123_4`, `123+0`)
are jobs. Start `Unknown`/`None` (never started) or NodeList `None assigned`: the job is skipped
and counted. End `Unknown` with a known Start means still running: the job is clipped to the
log end (the latest known time in the log). Host lists are expanded (planner.logs.hostlist).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from planner.logs.common import JobLog, LineMap, fail, find_columns, numeric, times
from planner.logs.nodelists import expand_lists

FORMAT = "slurm"
REQUIRED = ("JobID", "Start", "End", "NNodes", "NodeList")
MISSING = ("Unknown", "None", "", "N/A")


def looks_like(head_lines: list[str]) -> bool:
    if not head_lines:
        return False
    cols = [c.strip().lower() for c in head_lines[0].split("|")]
    return "|" in head_lines[0] and "jobid" in cols


def read(path) -> JobLog:
    path = Path(path)
    df = pd.read_csv(path, sep="|", dtype=str, keep_default_na=False, compression="infer")
    df = df.loc[:, [c for c in df.columns if not (str(c).startswith("Unnamed") and df[c].eq("").all())]]
    if len(df) == 0:
        fail("no data rows (header only)", path)
    cols = find_columns(df, {k: k for k in REQUIRED + ("Submit", "Partition")}, path,
                        optional=("Submit", "Partition"))
    line_of = LineMap(path, header=True)
    jid = df[cols["JobID"]].astype("str").str.strip()
    step = jid.str.contains(".", regex=False).to_numpy()
    n_steps = int(step.sum())
    rows = np.flatnonzero(~step)
    if len(rows) == 0:
        fail("only job steps, no jobs", path)
    sub = df.iloc[rows].reset_index(drop=True)

    def lm(i):  # row index within `sub` -> line
        return line_of(int(rows[i]))

    start = times(sub[cols["Start"]], "Start", path, lm, missing=MISSING)
    end = times(sub[cols["End"]], "End", path, lm, missing=MISSING)
    submit = (times(sub[cols["Submit"]], "Submit", path, lm, missing=MISSING) if "Submit" in cols
              else np.full(len(sub), np.nan))
    nodelist = sub[cols["NodeList"]].astype("str").str.strip()
    unassigned = nodelist.str.lower().isin(["none assigned", "none", ""]).to_numpy()
    nn = sub[cols["NNodes"]]
    nodes = numeric(nn, "NNodes", path, lm, integer=True)
    not_started = np.isnan(start)
    known = np.concatenate([start[~np.isnan(start)], end[~np.isnan(end)]])
    if len(known) == 0:
        fail("no job with a known Start", path)
    log_end = float(known.max())
    running = ~not_started & np.isnan(end)
    end = np.where(running, log_end, end)
    keep = ~not_started & ~unassigned
    neg = keep & (end < start)
    if neg.any():
        i = int(np.argmax(neg))
        fail("End before Start (negative run time)", path, lm, i, "End")
    zero = keep & (end == start) & ~running
    keep &= ~zero
    idx = np.flatnonzero(keep)
    lists = expand_lists(nodelist.to_numpy()[idx], nodes[idx], path, lambda k: lm(int(idx[k])), "NodeList")
    why = {"job steps": n_steps, "never started": int(not_started.sum()),
           "no nodes assigned": int((~not_started & unassigned).sum()), "zero run time": int(zero.sum())}
    notes = [f"{int(running.sum())} jobs still running (End Unknown): clipped to the log end"] if running.any() else []
    part = (sub[cols["Partition"]].astype("str").str.strip().to_numpy(dtype=object)[idx]
            if "Partition" in cols else None)
    return JobLog(partition=part, job_id=jid.to_numpy()[rows][idx], submit_s=submit[idx], start_s=start[idx],
                  end_s=end[idx], nodes=nodes[idx].astype(np.int64), node_list=lists,
                  node_list_text=nodelist.to_numpy()[idx], skipped=n_steps + int((~keep).sum()),
                  skipped_why={k: n for k, n in why.items() if n}, notes=notes)
