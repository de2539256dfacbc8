"""Live snapshots into the planner's DuckDB: a node-state log that grows one poll at a time.

The snapshots of `planner live --log NAME` are stored as the node log NAME (format 'live') in the
schema the replay reads (planner.store.db): `nodes` (opening snapshot order, then nodes as they
appear), `node_events` (one row per node at the first poll, then one row per change of
harvestable), `idle_series` (N(t): harvestable nodes), `fragments` (each node's harvestable
periods; the open ones end at the last poll) and `logs.end_s` (the last poll). So `planner
fragments / profile / simulate --log NAME` work on it while it grows. A node's `idle` is
*harvestable* (planner.idle.states.classify), not just Slurm's IDLE.

Beside them, the live tables (this module's LIVE_SCHEMA; rows keyed by log_id like the others):

live_polls        (log_id, t_s, ok, nodes, harvestable, by_partition JSON, meta JSON, message):
                  one row per poll; ok=false rows record when Slurm did not answer
live_node_states  (log_id, t_s, node_idx, state, words, partitions, free_cpus, free_gpus): the
                  idle split's state of each node, change-only (first poll: every node)
live_job_events   (log_id, t_s, job_id, event, state, node_count, nodes, partition): from squeue,
                  change-only: submitted, started, resized (node count changed while running), ended
live_recommendations (log_id, t_s, job, rec JSON, score JSON or NULL until scored)

Each poll is one transaction: a crash or a kill between polls loses nothing stored and a restart
(`LiveLog.open` on the same name) resumes from the stored last state, so an unchanged node writes
no row (no duplicate) and a change made while nobody polled is recorded at the next poll (no loss).
Memory: one small record per node and per running job, whatever the log's length.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.errors import InputError
from planner.idle import states as S
from planner.logs.slurm_json import NodeRow

LIVE_FORMAT = "live"
LIVE_SCHEMA = """
CREATE TABLE IF NOT EXISTS live_polls (
    log_id INTEGER NOT NULL, t_s DOUBLE NOT NULL, ok BOOLEAN NOT NULL, nodes INTEGER, harvestable INTEGER,
    by_partition VARCHAR, meta VARCHAR, message VARCHAR);
CREATE TABLE IF NOT EXISTS live_node_states (
    log_id INTEGER NOT NULL, t_s DOUBLE NOT NULL, node_idx INTEGER NOT NULL, state VARCHAR NOT NULL,
    words VARCHAR, partitions VARCHAR, free_cpus INTEGER, free_gpus INTEGER);
CREATE TABLE IF NOT EXISTS live_job_events (
    log_id INTEGER NOT NULL, t_s DOUBLE NOT NULL, job_id VARCHAR NOT NULL, event VARCHAR NOT NULL,
    state VARCHAR, node_count INTEGER, nodes VARCHAR, partition VARCHAR);
CREATE TABLE IF NOT EXISTS live_recommendations (
    log_id INTEGER NOT NULL, t_s DOUBLE NOT NULL, job VARCHAR NOT NULL, rec VARCHAR NOT NULL, score VARCHAR);
"""
TERMINAL = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
            "OUT_OF_MEMORY", "REVOKED", "SPECIAL_EXIT"}


def ensure_schema(con) -> None:
    con.execute(LIVE_SCHEMA)


@dataclass
class NodeView:
    """One node at one poll, as the advisor and the page see it."""
    name: str
    state: str  # planner.idle.states vocabulary
    harvestable: bool
    partitions: tuple
    free_cpus: int | None
    free_gpus: int | None
    words: str


def view(row: NodeRow, harvest_partitions=None) -> NodeView:
    state, harv = S.classify(row.words, row.partitions, harvest_partitions)
    free_c = None if row.cpus is None or row.alloc_cpus is None else max(row.cpus - row.alloc_cpus, 0)
    free_g = None if row.gpus is None else max(row.gpus - (row.alloc_gpus or 0), 0)
    if state not in (S.IDLE, S.ALLOCATED):  # unavailable nodes offer nothing
        free_c = 0 if free_c is not None else None
        free_g = 0 if free_g is not None else None
    return NodeView(row.name, state, harv, tuple(row.partitions), free_c, free_g, "+".join(sorted(row.words)))


def by_partition(views: list[NodeView], harvest_partitions=None) -> dict:
    """Per partition: nodes, harvestable, and the count of every state; free CPUs / GPUs of idle
    and mixed nodes where Slurm gives them."""
    out: dict = {}
    for v in views:
        for p in v.partitions or ("(none)",):
            d = out.setdefault(p, {"nodes": 0, "harvestable": 0, **{s: 0 for s in S.STATES},
                                   "free_cpus": None, "free_gpus": None,
                                   "offered": harvest_partitions is None or p in harvest_partitions})
            d["nodes"] += 1
            d[v.state] += 1
            d["harvestable"] += int(v.harvestable)
            for k, x in (("free_cpus", v.free_cpus), ("free_gpus", v.free_gpus)):
                if x is not None:
                    d[k] = (d[k] or 0) + x
    return out


def _insert(con, table: str, select: str, df: pd.DataFrame) -> None:
    """INSERT INTO table SELECT <select> FROM df (table and select: fixed strings of this module)."""
    con.register("_live_rows", df)
    try:
        con.execute(f"INSERT INTO {table} SELECT {select} FROM _live_rows")
    finally:
        con.unregister("_live_rows")


class LiveLog:
    """The state of one live log, enough to append the next snapshot (bounded: per node and per job)."""

    def __init__(self, log_id: int, name: str):
        self.log_id, self.name = log_id, name
        self.names: list[str] = []
        self.idx: dict[str, int] = {}
        self.harv = np.zeros(0, bool)
        self.changed_at = np.zeros(0, float)
        self.detail: dict[int, tuple] = {}
        self.jobs: dict[str, tuple] = {}
        self.end_s: float | None = None
        self.count: int | None = None
        self.polls = 0

    # ---------------------------------------------------------------- open / resume
    @classmethod
    def open(cls, con, name: str, source: str = "") -> LiveLog:
        """The live log NAME: resumed when it exists (format 'live'), else created at the first append."""
        ensure_schema(con)
        row = con.execute("SELECT log_id, format, end_s, rows FROM logs WHERE name = ?", [name]).fetchone()
        if row is None:
            lg = cls(-1, name)
            lg.source = source
            return lg
        if row[1] != LIVE_FORMAT:
            raise InputError(f"log {name!r} exists and is not a live log (format {row[1]}); pass another --log",
                             field="log")
        lg = cls(int(row[0]), name)
        lg.source = source
        lg.end_s, lg.polls = float(row[2]), int(row[3])
        nd = con.execute("SELECT node_idx, name FROM nodes WHERE log_id = ? ORDER BY node_idx", [lg.log_id]).fetchall()
        lg.names = [n for _, n in nd]
        lg.idx = {n: i for i, n in enumerate(lg.names)}
        lg.harv = np.zeros(len(lg.names), bool)
        lg.changed_at = np.zeros(len(lg.names), float)
        for i, idle, t in con.execute("SELECT node_idx, arg_max(idle, t_s), max(t_s) FROM node_events "
                                      "WHERE log_id = ? GROUP BY node_idx", [lg.log_id]).fetchall():
            lg.harv[i], lg.changed_at[i] = bool(idle), float(t)
        for i, st, w, p, fc, fg in con.execute(
                "SELECT node_idx, arg_max(state, t_s), arg_max(words, t_s), arg_max(partitions, t_s), "
                "arg_max(free_cpus, t_s), arg_max(free_gpus, t_s) FROM live_node_states WHERE log_id = ? "
                "GROUP BY node_idx", [lg.log_id]).fetchall():
            lg.detail[int(i)] = (st, w, p, fc, fg)
        c = con.execute("SELECT arg_max(idle_nodes, t_s) FROM idle_series WHERE log_id = ?", [lg.log_id]).fetchone()
        lg.count = None if c is None or c[0] is None else int(c[0])
        for jid, ev, st, cnt, nodes in con.execute(
                "SELECT job_id, arg_max(event, t_s), arg_max(state, t_s), arg_max(node_count, t_s), "
                "arg_max(nodes, t_s) FROM live_job_events WHERE log_id = ? GROUP BY job_id", [lg.log_id]).fetchall():
            if ev != "ended":
                lg.jobs[str(jid)] = (st, cnt, nodes)
        return lg

    def _create(self, con, t0: float) -> None:
        log_id = con.execute("SELECT nextval('log_id_seq')").fetchone()[0]
        report = {"log": self.name, "kind": "node", "format": LIVE_FORMAT, "source": getattr(self, "source", ""),
                  "node_identity": "exact", "notes": ["recorded live from Slurm: node idle = harvestable "
                                                      "(idle, no drain/reserved/maintenance/down flag, in a "
                                                      "harvestable partition)"], "options": {}}
        con.execute("INSERT INTO logs (log_id, name, kind, format, source, sha256, machine_nodes, machine_nodes_from, "
                    "start_s, end_s, rows, skipped, node_identity, report) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    [log_id, self.name, "node", LIVE_FORMAT, getattr(self, "source", ""),
                     f"live:{self.name}:{uuid.uuid4().hex}", 0, "node set", t0, t0, 0, 0, "exact",
                     json.dumps(report)])
        self.log_id = int(log_id)

    # ---------------------------------------------------------------- append one snapshot
    def append(self, con, t: float, views: list[NodeView], jobs=(), meta: dict | None = None,
               harvest_partitions=None) -> dict:
        """Store one snapshot (one transaction). Returns {"events": rows written to node_events,
        "job_events": [...], "harvestable": N, "changed": [node names]}."""
        if self.end_s is not None and t <= self.end_s:
            return {"events": 0, "job_events": [], "harvestable": int(self.harv.sum()), "changed": [],
                    "skipped": f"poll time {t} not after the last stored poll {self.end_s}"}
        con.execute("BEGIN TRANSACTION")
        try:
            out = self._append(con, t, views, jobs, meta or {}, harvest_partitions)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        self._commit_memory(out.pop("_mem"))
        return out

    def _append(self, con, t, views, jobs, meta, harvest_partitions) -> dict:
        first = self.log_id < 0
        if first:
            self._create(con, t)
        names = list(self.names)
        idx = dict(self.idx)
        new = [v.name for v in views if v.name not in idx]
        for n in new:
            idx[n] = len(names)
            names.append(n)
        n_all = len(names)
        prev = np.zeros(n_all, bool)
        prev[:len(self.harv)] = self.harv
        changed_at = np.zeros(n_all, float)
        changed_at[:len(self.changed_at)] = self.changed_at
        cur = prev.copy()  # nodes missing from this snapshot keep their last state
        is_new = np.zeros(n_all, bool)
        is_new[[idx[n] for n in new]] = True
        vi = np.array([idx[v.name] for v in views], np.int64)
        cur[vi] = [v.harvestable for v in views]
        if new:
            part = [(v.partitions[0] if v.partitions else None) for v in views if v.name in set(new)]
            _insert(con, "nodes", f"{self.log_id}, node_idx, name, part",
                    pd.DataFrame({"node_idx": np.array([idx[n] for n in new], np.int32),
                                  "name": pd.Series(new, dtype=object), "part": pd.Series(part, dtype=object)}))
        ch = np.flatnonzero(is_new | (cur != prev))
        if len(ch):
            _insert(con, "node_events", f"{self.log_id}, t_s, node_idx, idle",
                    pd.DataFrame({"t_s": np.full(len(ch), t), "node_idx": ch.astype(np.int32), "idle": cur[ch]}))
        # fragments: every node harvestable at the last poll has an open fragment up to it; extend
        # it to t, or open it (from the last poll) when it began there
        if self.end_s is not None:
            was = np.flatnonzero(prev)
            began = was[changed_at[was] >= self.end_s]
            cont = was[changed_at[was] < self.end_s]
            if len(cont):
                con.register("_live_ext", pd.DataFrame({"node_idx": cont.astype(np.int32)}))
                try:
                    con.execute("UPDATE fragments SET end_s = ? WHERE log_id = ? AND end_s = ? AND node_idx IN "
                                "(SELECT node_idx FROM _live_ext)", [t, self.log_id, self.end_s])
                finally:
                    con.unregister("_live_ext")
            if len(began):
                _insert(con, "fragments", f"{self.log_id}, node_idx, start_s, end_s, 1, false",
                        pd.DataFrame({"node_idx": began.astype(np.int32), "start_s": np.full(len(began), self.end_s),
                                      "end_s": np.full(len(began), t)}))
        count = int(cur.sum())
        if first or count != self.count:
            con.execute("INSERT INTO idle_series VALUES (?, ?, ?)", [self.log_id, t, count])
        # the idle split's detail, change-only
        det_rows, detail = [], {}
        for v in views:
            i = idx[v.name]
            d = (v.state, v.words, ",".join(v.partitions), v.free_cpus, v.free_gpus)
            if self.detail.get(i) != d:
                det_rows.append((t, i, *d))
                detail[i] = d
        if det_rows:
            df = pd.DataFrame(det_rows, columns=["t_s", "node_idx", "state", "words", "partitions", "fc", "fg"])
            df["fc"] = pd.array(df["fc"], dtype="Int64")
            df["fg"] = pd.array(df["fg"], dtype="Int64")
            _insert(con, "live_node_states", f"{self.log_id}, t_s, node_idx, state, words, partitions, "
                    "CAST(fc AS INTEGER), CAST(fg AS INTEGER)", df)
        job_events, jobs_now = self._job_events(t, jobs)
        if job_events:
            _insert(con, "live_job_events", f"{self.log_id}, t_s, job_id, event, state, CAST(node_count AS INTEGER), "
                    "nodes, partition", pd.DataFrame(job_events))
        parts = by_partition(views, harvest_partitions)
        con.execute("INSERT INTO live_polls VALUES (?, ?, true, ?, ?, ?, ?, NULL)",
                    [self.log_id, t, len(views), count, json.dumps(parts), json.dumps(meta)])
        con.execute("UPDATE logs SET end_s = ?, machine_nodes = ?, rows = rows + 1 WHERE log_id = ?",
                    [t, n_all, self.log_id])
        ch_at = changed_at.copy()
        ch_at[ch] = t
        return {"events": int(len(ch)), "job_events": job_events, "harvestable": count,
                "changed": [names[i] for i in ch], "by_partition": parts,
                "_mem": (names, idx, cur, ch_at, detail, jobs_now, t, count)}

    def _commit_memory(self, mem) -> None:
        names, idx, cur, ch_at, detail, jobs_now, t, count = mem
        self.names, self.idx, self.harv, self.changed_at = names, idx, cur, ch_at
        self.detail.update(detail)
        self.jobs, self.end_s, self.count = jobs_now, t, count
        self.polls += 1

    def _job_events(self, t: float, jobs) -> tuple[list[dict], dict]:
        ev, now = [], {}
        seen = set()
        for j in jobs:
            seen.add(j.job_id)
            st, cnt, nodes = j.state, j.node_count, j.nodes
            old = self.jobs.get(j.job_id)
            row = {"t_s": t, "job_id": j.job_id, "state": st, "node_count": cnt, "nodes": nodes,
                   "partition": j.partition}
            if st in TERMINAL:
                if old is not None:
                    ev.append({**row, "event": "ended"})
                continue
            now[j.job_id] = (st, cnt, nodes)
            if old is None:
                ev.append({**row, "event": "started" if st in ("RUNNING", "COMPLETING") else "submitted"})
            elif old[0] != st and st == "RUNNING":
                ev.append({**row, "event": "started"})
            elif st == "RUNNING" and (old[1] != cnt or old[2] != nodes):
                ev.append({**row, "event": "resized"})
            elif old[0] != st:
                ev.append({**row, "event": "state"})
        for jid, old in self.jobs.items():
            if jid not in seen:  # left squeue (purged after MinJobAge): ended by then
                ev.append({"t_s": t, "job_id": jid, "state": "GONE", "node_count": old[1], "nodes": old[2],
                           "partition": None, "event": "ended"})
        cols = ["t_s", "job_id", "event", "state", "node_count", "nodes", "partition"]
        return [{k: e.get(k) for k in cols} for e in ev], now

    def record_failure(self, con, t: float, message: str) -> None:
        """A poll that got no answer (kept for the page's gaps; only for an existing log)."""
        if self.log_id >= 0:
            con.execute("INSERT INTO live_polls VALUES (?, ?, false, NULL, NULL, NULL, NULL, ?)",
                        [self.log_id, t, message[:500]])
