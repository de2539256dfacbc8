"""The polling loop of `planner live` (and one cycle of the app's Live page).

    Poller(db_path, log, source, ...).cycle()   poll -> store -> decide -> score; returns what happened
    run(poller, interval_s, for_s, emit)        cycles every interval_s until for_s or SIGINT/SIGTERM

A cycle opens the database, appends one transaction and closes it again, so other processes (the
app, `planner fragments --log NAME`) can read the log between polls. When Slurm does not answer,
one line says why and the loop retries with back-off (interval, 2x, 4x, ... up to MAX_BACKOFF_S);
nothing is stored for the missed polls and the next answer records every change since (no loss,
no duplicate: planner.live.store).
"""

from __future__ import annotations

import collections
import json
import math
import shlex
import signal
import sys
import threading
import time
import urllib.request
import warnings

import numpy as np

from planner.allocators.base import level_value
from planner.errors import InputError
from planner.live import store as live_store
from planner.live.advisor import held_nodes, survival_p
from planner.live.source import SlurmUnreachable
from planner.predict.survival import Fragments, fit
from planner.store import db

MAX_BACKOFF_S = 300.0
MIN_CLOSED_FRAGMENTS = 20  # before this many closed fragments the live log cannot fit a model
REFIT_S = 600.0
WEBHOOK_QUEUE = 1000  # recommendations kept for a webhook that does not answer (the oldest dropped)
LOCK_PATIENCE_S = 10.0  # a reader may hold the database file's lock for a moment between polls


def fragments_of(con, log_id: int):
    """planner.predict.survival.Fragments of a stored log (live or loaded), or None when empty."""
    lg = con.execute("SELECT start_s, end_s, machine_nodes FROM logs WHERE log_id = ?", [log_id]).fetchone()
    fr = con.execute("SELECT node_idx, start_s, end_s FROM fragments WHERE log_id = ? ORDER BY start_s",
                     [log_id]).fetchnumpy()
    se = con.execute("SELECT t_s, idle_nodes FROM idle_series WHERE log_id = ? ORDER BY t_s", [log_id]).fetchnumpy()
    if lg is None or len(fr["node_idx"]) == 0 or lg[1] <= lg[0]:
        return None
    end = np.asarray(fr["end_s"], float)
    return Fragments(node=np.asarray(fr["node_idx"], np.int64), start=np.asarray(fr["start_s"], float), end=end,
                     closed=end < float(lg[1]), t0=float(lg[0]), t1=float(lg[1]), nodes=int(lg[2]),
                     st=np.asarray(se["t_s"], float), sn=np.asarray(se["idle_nodes"]))


class ModelKeeper:
    """The survival model used to choose nodes: fit on the live log once it has MIN_CLOSED_FRAGMENTS
    closed fragments (refit every REFIT_S), before that on the history log when one is given."""

    def __init__(self, history: str | None = None, refit_s: float = REFIT_S):
        self.history, self.refit_s = history, refit_s
        self.model, self.source, self.fit_at = None, None, -math.inf

    def get(self, con, log_id: int, now: float):
        if self.source == "live" and now - self.fit_at < self.refit_s:
            return self.model
        fr = fragments_of(con, log_id) if log_id >= 0 else None
        if fr is not None and int(fr.closed.sum()) >= MIN_CLOSED_FRAGMENTS:
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):  # a short history: Cox may overflow
                    warnings.simplefilter("ignore", RuntimeWarning)
                    m = fit(fr, step_s=max((fr.t1 - fr.t0) / 200, 1.0))
                self.model, self.source, self.fit_at = m, "live", now
                return self.model
            except (InputError, ValueError, np.linalg.LinAlgError):
                pass
        if self.model is None and self.history:
            row = db.log_row(con, self.history)
            if row is None:
                raise InputError(f"no log named {self.history!r} in the database", field="history")
            hf = fragments_of(con, int(row["log_id"]))
            if hf is not None:
                self.model, self.source, self.fit_at = fit(hf), f"history:{self.history}", now
        return self.model


def post_webhook(url: str, payload: dict, timeout_s: float = 5.0) -> str | None:
    """POST one JSON object; None when it went through (any 2xx), else a one-line reason."""
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as r:
            r.read()
        return None
    except Exception as e:  # noqa: BLE001 - a webhook must never stop the advisor
        return " ".join(f"webhook {url}: {e}".split())[:300]


class Poller:
    def __init__(self, db_path, log: str, source, harvest_partitions=None, advisor=None, history: str | None = None,
                 execute: bool = False, webhook: str | None = None, warn=None):
        self.db_path, self.log, self.source = db_path, log, source
        self.harvest = None if not harvest_partitions else tuple(harvest_partitions)
        self.advisor, self.execute, self.webhook = advisor, execute, webhook
        self.webhook_pending: collections.deque = collections.deque()
        self.models = ModelKeeper(history)
        self.warn = warn or (lambda msg: print(f"planner live: {msg}", file=sys.stderr, flush=True))
        self.live: live_store.LiveLog | None = None
        self.sacct_checked = False
        self.stats = {"polls": 0, "failed_polls": 0, "node_events": 0, "job_events": 0, "recommendations": 0,
                      "scored": 0, "webhook_sent": 0, "webhook_dropped": 0}

    def _connect(self):
        """The database, opened for this poll. DuckDB lets one process write a file while nobody
        else has it open: a reader (the app's Live page, `planner fragments --log`, a test) holds
        it for a moment between polls, so a lock conflict is retried for up to LOCK_PATIENCE_S
        (short sleeps) before it counts as a failed cycle (whose back-off doubles like Slurm's)."""
        end = time.monotonic() + LOCK_PATIENCE_S
        delay = 0.02
        while True:
            try:
                return db.connect(self.db_path)
            except InputError as e:
                if "Could not set lock" not in str(e) or time.monotonic() >= end:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def cycle(self) -> dict:
        """One poll; SlurmUnreachable propagates (nothing stored but a failure row)."""
        if not self.sacct_checked:
            self.sacct_checked = True
            why = self.source.sacct_probe() if hasattr(self.source, "sacct_probe") else None
            if why:
                self.warn(f"sacct unavailable ({why}); continuing from sinfo/squeue alone")
        t_poll = time.time()
        try:
            snap = self.source.poll()
        except SlurmUnreachable as e:
            self.stats["failed_polls"] += 1
            con = self._connect()
            try:
                if self.live is None:
                    self.live = live_store.LiveLog.open(con, self.log, self.source.describe)
                self.live.record_failure(con, t_poll, str(e))
            finally:
                con.close()
            raise
        return self.apply(snap)

    def apply(self, snap) -> dict:
        """Store a snapshot, decide, score (the part of a cycle after the poll; the benchmark feeds
        replayed snapshots here)."""
        c0 = time.perf_counter()
        views = [live_store.view(r, self.harvest) for r in snap.nodes]
        con = self._connect()
        try:
            if self.live is None:
                self.live = live_store.LiveLog.open(con, self.log, getattr(self.source, "describe", ""))
            res = self.live.append(con, snap.t_s, views, snap.jobs, snap.meta, self.harvest)
            store_s = time.perf_counter() - c0
            recs, scores = [], []
            d0 = time.perf_counter()
            if self.advisor is not None:
                recs = self._decide(con, snap, views)
                scores = score_pending(con, self.live.log_id, snap.t_s, self.advisor)
            decide_s = time.perf_counter() - d0
        finally:
            con.close()
        self.deliver(recs)
        self.stats["polls"] += 1
        self.stats["node_events"] += res["events"]
        self.stats["job_events"] += len(res["job_events"])
        self.stats["recommendations"] += len(recs)
        self.stats["scored"] += len(scores)
        return {"t_s": snap.t_s, "harvestable": res["harvestable"], "events": res["events"],
                "job_events": res["job_events"], "recommendations": recs, "scores": scores,
                "poll_s": snap.poll_s, "store_s": store_s, "decide_s": decide_s, "by_partition": res["by_partition"]}

    def _decide(self, con, snap, views) -> list[dict]:
        lg = self.live
        harvest = [v.name for v in views if v.harvestable]
        held = held_nodes(self.advisor.jobs, snap.jobs)
        model = self.models.get(con, lg.log_id, snap.t_s)
        ids = np.array([lg.idx[n] for n in harvest], np.int64)
        ages = snap.t_s - lg.changed_at[ids] if len(ids) else np.empty(0)
        frac = len(harvest) / max(len(lg.names), 1)
        p = survival_p(model, ages, snap.t_s, frac, None, self.advisor.tfwd_s)
        p_idle = {n: float(x) for n, x in zip(harvest, p) if np.isfinite(x)}
        part = self.harvest[0] if self.harvest and len(self.harvest) == 1 else None
        recs, _ = self.advisor.decide(snap.t_s, lg.names, harvest, held, p_idle, part)
        if not recs:
            return []
        for r in recs:
            r["model"] = self.models.source or "none (nodes by time already harvestable)"
        con.execute("BEGIN TRANSACTION")
        try:
            for r in recs:
                con.execute("INSERT INTO live_recommendations VALUES (?, ?, ?, ?, NULL)",
                            [lg.log_id, r["time"], r["job"], json.dumps(r)])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        for r in recs:
            if self.execute and r["command"] and hasattr(self.source, "run"):
                out = self.source.run(shlex.split(r["command"]))
                r["executed"] = {"exit": out.returncode, "output": (out.stdout or out.stderr).strip()[:200]}
        return recs

    def deliver(self, recs=()) -> None:
        """POST the new recommendations to the webhook, after those a failed POST kept (in order).
        A failure is one line; what is left (at most WEBHOOK_QUEUE, the oldest dropped) is retried
        at the next poll; the poll never stops."""
        if not self.webhook:
            return
        self.webhook_pending.extend(recs)
        why = None
        while self.webhook_pending:
            why = post_webhook(self.webhook, self.webhook_pending[0])
            if why:
                break
            self.webhook_pending.popleft()
            self.stats["webhook_sent"] += 1
        while len(self.webhook_pending) > WEBHOOK_QUEUE:
            self.webhook_pending.popleft()
            self.stats["webhook_dropped"] += 1
        if why:
            self.warn(f"{why}; {len(self.webhook_pending)} recommendation(s) kept, retried at the next poll")


def score_pending(con, log_id: int, now: float, advisor) -> list[dict]:
    """Score the recommendations whose T_fwd has passed: did the added nodes stay harvestable for
    T_fwd, what the move gained in hindsight (the recorded snapshots replayed over [t, t + T_fwd]),
    the best gain knowing which nodes stayed (the allocator on those), and the regret = best - hindsight."""
    rows = con.execute("SELECT rowid, t_s, job, rec FROM live_recommendations WHERE log_id = ? AND score IS NULL "
                       "ORDER BY t_s", [log_id]).fetchall()
    jobs = {j.id: j for j in advisor.jobs}
    out = []
    for rowid, t, job, text in rows:
        rec = json.loads(text)
        T = float(rec.get("tfwd_s") or advisor.tfwd_s)
        if t + T > now or job not in jobs:
            continue
        s = score_one(con, log_id, rec, jobs[job].trainer, advisor.opts.with_(tfwd_s=T))
        con.execute("UPDATE live_recommendations SET score = ? WHERE rowid = ?", [json.dumps(s), rowid])
        out.append({"job": job, "time": t, **s})
    return out


def score_one(con, log_id: int, rec: dict, trainer, opts) -> dict:
    t, T = float(rec["time"]), float(opts.tfwd_s)
    frm, to = int(rec["from_nodes"]), int(rec["to_nodes"])
    add = list(rec.get("nodes_to_add") or [])
    curve = trainer.curve
    leave = []
    if add:
        r = con.execute(
            "SELECT n.name, min(e.t_s) FROM nodes n LEFT JOIN node_events e ON e.log_id = n.log_id AND "
            "e.node_idx = n.node_idx AND NOT e.idle AND e.t_s > ? AND e.t_s <= ? WHERE n.log_id = ? AND "
            "list_contains(?, n.name) GROUP BY n.name", [t, t + T, log_id, add]).fetchall()
        leave = [t + T if x is None else float(x) for _, x in r]
    stayed = sum(1 for x in leave if x >= t + T)
    o = curve.table(max(frm, to, 1) + 1)
    base = T * float(o[frm])
    if to <= frm:
        hind = level_value(trainer, to, opts, frm) - level_value(trainer, frm, opts, frm)
        best = hind
    else:
        # hindsight: the job runs on from + (added nodes still there) nodes; each reclaimed node
        # preempts it (Rdw of its throughput), as in the replay (planner.replay)
        times = sorted(x for x in leave if x < t + T)
        n, last, integral, cost = to, t, 0.0, float(o[frm]) * trainer.rup_s
        for x in times:
            integral += (x - last) * float(o[n])
            cost += float(o[n]) * trainer.rdw_s
            n, last = n - 1, x
        integral += (t + T - last) * float(o[n])
        hind = integral - base - cost
        # best with hindsight: the best size using only nodes that stayed the whole T_fwd
        levels = [k for k in range(frm, frm + stayed + 1) if k == frm or trainer.nmin <= k <= trainer.nmax]
        best = max(level_value(trainer, k, opts, frm) - level_value(trainer, frm, opts, frm) for k in levels)
    return {"scored_at": t + T, "nodes_added": len(add), "stayed": stayed,
            "stayed_share": None if not add else round(stayed / len(add), 4),
            "expected_gain_samples": rec.get("expected_gain_samples"),
            "hindsight_gain_samples": round(float(hind), 3), "best_gain_samples": round(float(best), 3),
            "regret_samples": round(float(best - hind), 3)}


def run(poller: Poller, interval_s: float = 30.0, for_s: float | None = None, emit=None,
        stop: threading.Event | None = None) -> dict:
    """Cycle every interval_s until for_s seconds passed or SIGINT/SIGTERM (then return; events kept)."""
    stop = stop or threading.Event()
    old = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            old[sig] = signal.signal(sig, lambda *_: stop.set())
    emit = emit or (lambda obj: print(json.dumps(obj), flush=True))
    t_end = None if for_s is None else time.monotonic() + float(for_s)
    fails = 0
    try:
        while not stop.is_set():
            c0 = time.monotonic()
            try:
                out = poller.cycle()
                fails = 0
                for r in out["recommendations"]:
                    emit({"type": "recommendation", **r})
                for s in out["scores"]:
                    emit({"type": "score", **s})
                delay = interval_s
            except SlurmUnreachable as e:
                fails += 1
                delay = min(interval_s * 2 ** (fails - 1), max(MAX_BACKOFF_S, interval_s))
                poller.warn(f"Slurm not reachable: {e}; retrying in {delay:g} s")
            except InputError as e:
                if "cannot open the database" not in str(e):
                    raise
                fails += 1
                delay = min(interval_s * 2 ** (fails - 1), max(MAX_BACKOFF_S, interval_s))
                poller.warn(f"{e}; retrying in {delay:g} s")
            wait = max(delay - (time.monotonic() - c0), 0.0) if fails == 0 else delay
            if t_end is not None:
                if time.monotonic() >= t_end:
                    break
                wait = min(wait, max(t_end - time.monotonic(), 0.0))
            stop.wait(wait)
            if t_end is not None and time.monotonic() >= t_end:
                break
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
    return dict(poller.stats)
