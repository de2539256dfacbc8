"""Slurm's JSON: `sinfo --json`, `squeue --json`, `sacct --json` and slurmrestd's answers.

One adapter for every API version: fields are detected, not bound to one release. Slurm 22.05
prints `openapi/v0.0.38` (node `state` a word plus `state_flags`; job `job_state` a word; times and
counts plain integers); 23.02 and later (v0.0.39 .. v0.0.41) print `state` as a list of words, numbers
as `{"set": true, "infinite": false, "number": N}`, sacct's `state.current` as a list. `meta(doc)`
records which plugin and release wrote a document (kept with every live snapshot).

    meta(doc)          {"plugin": "openapi/v0.0.38", "release": "22.05.8", "keys": [...]}
    nodes(doc)         [NodeRow]   from sinfo --json / GET /slurm/vX/nodes
    jobs(doc)          [JobRow]    from squeue --json / sacct --json / GET /slurm(db)/vX/jobs
    read(path)         a `sacct --json` dump as a JobLog (registered as format `slurm_json` for
                       `planner ingest`)

RESIZING: a job shrunk or grown by `scontrol update JobId=... NumNodes=...` is written by the
accounting as one record per size epoch (`sacct --duplicates` prints them all): the old one ends
in state RESIZING at the resize time; the next one keeps the job's ORIGINAL start (its submission
and eligible times are the resize; measured on Slurm 22.05 with slurmdbd, tests/e2e). Each epoch is
one row of the job log (same job id, its own nodes), starting where the job's previous RESIZING
record ended: nothing dropped, nothing counted twice (identical records, e.g. of two overlapping
dumps, are kept once).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from planner.errors import InputError
from planner.logs import limits
from planner.logs.common import JobLog, check_time_range
from planner.logs.hostlist import expand
from planner.logs.stream import open_input

FORMAT = "slurm_json"


@dataclass(frozen=True)
class NodeRow:
    name: str
    words: frozenset  # base state and flags, upper case ('IDLE', 'DRAIN', 'NOT_RESPONDING', ...)
    partitions: tuple = ()
    cpus: int | None = None
    alloc_cpus: int | None = None
    gpus: int | None = None
    alloc_gpus: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class JobRow:
    job_id: str
    state: str  # upper case: RUNNING, PENDING, COMPLETED, RESIZING, ...
    submit_s: float | None
    start_s: float | None
    end_s: float | None
    nodes: str  # host list text ('' when none)
    node_count: int | None
    partition: str = ""
    extra: dict = field(default_factory=dict, compare=False)


# ---------------------------------------------------------------- field detection


def num(v):
    """A number in any of Slurm's spellings: 5, 5.0, "5", {"set": true, "infinite": false,
    "number": 5}; None when unset, infinite or absent."""
    if isinstance(v, dict):
        if v.get("infinite") or v.get("set") is False:
            return None
        v = v.get("number")
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return v
    try:
        return float(str(v))
    except ValueError:
        return None


def words(v) -> list[str]:
    """A state in any spelling: 'idle', 'IDLE+DRAIN', ['IDLE', 'DRAIN'] -> ['IDLE', 'DRAIN']."""
    if v is None:
        return []
    if isinstance(v, str):
        return [w for w in re.split(r"[+|,\s]+", v.upper()) if w]
    if isinstance(v, (list, tuple)):
        return [w for x in v for w in words(x)]
    if isinstance(v, dict):  # sacct 'state': {'current': ..., 'reason': ...}
        return words(v.get("current"))
    return [str(v).upper()]


def _time(v):
    """Epoch seconds, or None for 0 / unset (Slurm writes 0 for 'not yet')."""
    x = num(v)
    return float(x) if x is not None and x > 0 else None


def meta(doc: dict) -> dict:
    m = doc.get("meta") or {}
    plugin = m.get("plugin") or {}
    slurm = m.get("Slurm") or m.get("slurm") or {}
    ver = slurm.get("version") or {}
    release = slurm.get("release") or (".".join(str(ver.get(k, "")) for k in ("major", "minor", "micro"))
                                       if ver else "")
    return {"plugin": plugin.get("type") or plugin.get("name") or "", "release": str(release),
            "data_parser": plugin.get("data_parser", ""), "keys": sorted(k for k in doc if k != "meta")}


def errors(doc: dict) -> list[str]:
    out = []
    for e in doc.get("errors") or []:
        if isinstance(e, dict):
            out.append(str(e.get("description") or e.get("error") or e))
        else:
            out.append(str(e))
    return out


_GRES = re.compile(r"gpu(?::[^:(,]+)?:(\d+)")


def _gpus(text) -> int | None:
    """GPUs in a gres text ('gpu:4', 'gpu:a100:4(S:0-1)', 'gpu:a100:2(IDX:0-1),tmp:1'); None when
    the text names none."""
    if not isinstance(text, str) or "gpu" not in text:
        return None
    return sum(int(m) for m in _GRES.findall(text)) if _GRES.search(text) else None


def node_row(n: dict) -> NodeRow:
    name = n.get("name") or n.get("hostname")
    if not name:
        raise InputError("a node without a name in Slurm's JSON", field="nodes")
    w = set(words(n.get("state"))) | set(words(n.get("state_flags")))
    parts = n.get("partitions") or []
    if isinstance(parts, str):
        parts = [p for p in parts.split(",") if p]
    cpus = num(n.get("cpus"))
    alloc = num(n.get("alloc_cpus"))
    if alloc is None and num(n.get("idle_cpus")) is not None and cpus is not None:
        alloc = cpus - num(n.get("idle_cpus"))
    return NodeRow(name=str(name), words=frozenset(w), partitions=tuple(str(p) for p in parts),
                   cpus=None if cpus is None else int(cpus), alloc_cpus=None if alloc is None else int(alloc),
                   gpus=_gpus(n.get("gres")), alloc_gpus=_gpus(n.get("gres_used")),
                   reason=str(n.get("reason") or ""))


def nodes(doc: dict) -> list[NodeRow]:
    """The nodes of a `sinfo --json` (or slurmrestd /nodes) document."""
    if "nodes" not in doc:
        raise InputError(f"no 'nodes' in Slurm's JSON (keys: {', '.join(sorted(doc))[:200]})", field="nodes")
    raw = doc["nodes"]
    if raw and isinstance(raw[0], dict) and "node" in raw[0] and "name" not in raw[0]:  # sinfo per-partition
        raw = [x["node"] for x in raw]
    return [node_row(n) for n in raw]


def _nodes_text(j: dict) -> str:
    v = j.get("nodes")
    if isinstance(v, str):
        return "" if v.strip().lower() in ("none assigned", "(null)", "none") else v.strip()
    res = j.get("job_resources") or {}
    v = res.get("nodes")
    if isinstance(v, dict):
        v = v.get("list") or ""
    return str(v or "")


def job_row(j: dict) -> JobRow:
    jid = j.get("job_id")
    if isinstance(jid, dict):
        jid = num(jid)
    if jid is None:
        raise InputError("a job without job_id in Slurm's JSON", field="job_id")
    tm = j.get("time") if isinstance(j.get("time"), dict) else {}
    st = words(j.get("job_state") if "job_state" in j else j.get("state"))
    count = num(j.get("node_count"))
    if count is None:
        count = num(j.get("allocation_nodes"))
    part = j.get("partition") or ""
    arr = j.get("array") or {}
    task = num(arr.get("task_id")) if isinstance(arr, dict) else None
    aj = num(j.get("array_job_id"))
    at = num(j.get("array_task_id"))
    if aj and at is not None:  # squeue: an array task
        ident = f"{int(aj)}_{int(at)}"
    elif task is not None and isinstance(arr, dict) and num(arr.get("job_id")):
        ident = f"{int(num(arr.get('job_id')))}_{int(task)}"
    else:
        ident = str(int(jid)) if isinstance(jid, (int, float)) else str(jid)
    return JobRow(job_id=ident, state=st[0] if st else "", submit_s=_time(tm.get("submission", j.get("submit_time"))),
                  start_s=_time(tm.get("start", j.get("start_time"))), end_s=_time(tm.get("end", j.get("end_time"))),
                  nodes=_nodes_text(j), node_count=None if count is None else int(count), partition=str(part),
                  extra={"resize_time": _time(j.get("resize_time")), "name": str(j.get("name") or "")})


def jobs(doc: dict) -> list[JobRow]:
    """The jobs of a `squeue --json` / `sacct --json` (or slurmrestd /jobs) document."""
    if "jobs" not in doc:
        raise InputError(f"no 'jobs' in Slurm's JSON (keys: {', '.join(sorted(doc))[:200]})", field="jobs")
    return [job_row(j) for j in doc["jobs"]]


# ---------------------------------------------------------------- `planner ingest` of a sacct --json dump


def looks_like(head_lines: list[str]) -> bool:
    """A JSON object whose head names Slurm's 'meta' or 'jobs' (sinfo's JSON is refused by read
    with a line saying so)."""
    text = "\n".join(head_lines).lstrip()
    return text.startswith("{") and ('"meta"' in text or '"jobs"' in text)


def read(path, max_bytes: int | None = None) -> JobLog:
    """A `sacct --json` dump -> JobLog: one row per size epoch of every job that ran (see the module
    doc); pending and never-started jobs skipped and counted; running ones clipped to the latest time."""
    path = Path(path)

    with open_input(path, max_bytes) as f:  # bounded: refuses an input beyond max_bytes
        data = f.read()
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as e:
        m = re.search(r"line (\d+)", str(e))
        raise InputError(f"not valid JSON ({str(e)[:120]})", file=path.name,
                         line=int(m.group(1)) if m else None) from None
    if not isinstance(doc, dict):
        raise InputError("not a Slurm JSON document (expected an object with 'jobs')", file=path.name)
    if "jobs" not in doc:
        what = "sinfo --json (nodes)" if "nodes" in doc else "no 'jobs'"
        raise InputError(f"{what}: give a sacct --json dump", file=path.name, field="jobs")
    try:
        rows = jobs(doc)
    except InputError as e:
        raise InputError(e.args[0] if e.args else str(e), file=path.name, field="jobs") from None
    return to_joblog(rows, path.name, meta(doc))


def size_epochs(rows: list[JobRow]) -> list[JobRow]:
    """The records of a resized job as consecutive epochs: ordered by end, each record after a
    RESIZING record of the same job starts at that record's end (Slurm writes the job's first
    start there)."""
    by_job: dict = {}
    for i, r in enumerate(rows):
        by_job.setdefault(r.job_id, []).append(i)
    out = list(rows)
    for idx in by_job.values():
        if len(idx) < 2 or not any(rows[i].state == "RESIZING" for i in idx):
            continue
        prev_end = None
        for i in sorted(idx, key=lambda i: (float("inf") if rows[i].end_s is None else rows[i].end_s)):
            r = rows[i]
            if prev_end is not None and r.start_s is not None and r.start_s < prev_end:
                out[i] = replace(r, start_s=prev_end)
            if r.state == "RESIZING" and r.end_s is not None:
                prev_end = r.end_s if prev_end is None else max(prev_end, r.end_s)
    return out


def to_joblog(rows: list[JobRow], fname: str, meta_info: dict | None = None) -> JobLog:
    rows = size_epochs(rows)
    why: dict = {}
    seen = set()
    keep = []
    for r in rows:
        key = (r.job_id, r.start_s, r.end_s, r.nodes)
        if key in seen:
            why["duplicate records"] = why.get("duplicate records", 0) + 1
            continue
        seen.add(key)
        if r.start_s is None:
            why["never started"] = why.get("never started", 0) + 1
            continue
        if not r.nodes:
            why["no nodes assigned"] = why.get("no nodes assigned", 0) + 1
            continue
        if r.end_s is not None and r.end_s <= r.start_s:
            why["zero run time"] = why.get("zero run time", 0) + 1
            continue
        keep.append(r)
    if not keep:
        raise InputError(f"no usable jobs ({sum(why.values())} skipped: {why})", file=fname)
    if len(keep) > limits.MAX_JOBS:
        raise InputError(f"more than {limits.MAX_JOBS:,} jobs (the job limit)", file=fname)
    start = np.array([r.start_s for r in keep], float)
    end = np.array([np.nan if r.end_s is None else r.end_s for r in keep], float)
    check_time_range(start, "time.start", fname, None)
    check_time_range(end, "time.end", fname, None)
    latest = float(np.nanmax(np.r_[start, end]))
    running = np.isnan(end)
    end = np.where(running, latest, end)
    lists = []
    for r in keep:
        try:
            hosts = expand(r.nodes)
        except (InputError, ValueError) as e:
            raise InputError(f"job {r.job_id}: bad node list {r.nodes[:60]!r} ({e})", file=fname,
                             field="nodes") from None
        lists.append(hosts)
    notes = []
    resized = {r.job_id for r in keep if r.state == "RESIZING"}
    if resized:
        notes.append(f"{len(resized)} resized jobs split into their size epochs (RESIZING records)")
    if running.any():
        notes.append(f"{int(running.sum())} jobs still running: clipped to the log end")
    if meta_info and meta_info.get("plugin"):
        notes.append(f"written by {meta_info['plugin']} (Slurm {meta_info.get('release') or '?'})")
    return JobLog(job_id=np.array([r.job_id for r in keep], dtype=object),
                  submit_s=np.array([np.nan if r.submit_s is None else r.submit_s for r in keep], float),
                  start_s=start, end_s=end, nodes=np.array([len(h) for h in lists], np.int64), node_list=lists,
                  node_list_text=np.array([r.nodes for r in keep], dtype=object),
                  partition=np.array([r.partition for r in keep], dtype=object),
                  skipped=sum(why.values()), skipped_why=why, notes=notes)
