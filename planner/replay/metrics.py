"""Metrics of a replay: pure functions on the simulator's records (no simulation state).

Definitions (docs/simulator.md repeats them with the study):

- resource integral: node-hours of the pool over the window (sum of N(t) dt / 3600).
- allocated node-hours: node-hours held by Trainers; allocated share = allocated / resource.
- A_e: samples the Trainers processed in the replay (net of paid costs).
- A_s: samples the same Trainers process on a static pool of n-bar nodes (n-bar = the
  time-averaged pool size) over the same window, with no rescale or preemption costs:
  `static_replay` — Trainers arrive as in the workload, at most Pj_max at once (FCFS),
  the n-bar nodes shared equally (fractional shares allowed, since n-bar is an average;
  shares capped at Nmax with the surplus shared among the others; a Trainer whose share
  would fall below its Nmin waits), throughput O_j(share) interpolated on its curve.
  For identical saturated Trainers this is BFTrainer's shortcut T * Pj_max * O(n-bar/Pj_max)
  (`static_shortcut`).
- U = A_e / A_s (utilization efficiency). Meaningful only when demand saturates the pool:
  read it beside the allocated share.
- queueing time: submit to first nodes (Trainers that got nodes); total waiting: the sum
  over all arrived Trainers of (first nodes, or the window end if never) - submit; queueing
  time including the waiting: that sum divided by the arrived Trainers, their mean (a lower
  bound: those still waiting at the window end would wait longer).
- JCT: end - submit of completed Trainers; runtime: end - first nodes.
- rescale cost: samples lost to rescaling (Rup/Rdw seconds of the pre-change throughput);
  "charged" = actually taken from produced samples in the window, "incurred" = owed;
  rescale cost per event = incurred rescale cost / events.
- preemption within T_fwd: the share of decisions followed by a preemption (a node leaving
  the pool under a Trainer) within T_fwd seconds after the decision.
- return on rescaling investment (ROI): over the decisions that paid a rescale cost,
  sum of (total throughput after - before the decision) * (time the decision's map held,
  until the next event) divided by the sum of their rescale costs. > 1: rescaling paid back.
- solve time per decision: wall seconds of the allocate call (model build + solve + map).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from planner.times import format_iso
from planner.workload.trainers import interp


@dataclass(frozen=True)
class ReplayTotals:
    """What a replay counted beside its frames: the non-frame input of `summarize`."""

    horizon_s: float  # window length T
    gross_samples: float  # samples produced before costs were taken
    allocated_node_s: float  # node-seconds held by Trainers
    pool_node_hours: float
    mean_pool_nodes: float
    specs: list  # TrainerSpecs submitted inside the window (for A_s)
    not_in_window: int  # Trainers submitted at or after the window end
    pj_max: int
    tfwd_s: float  # T_fwd of the options (decisions carry their own in a tfwd_s column)
    events: int
    pool_events: int
    arrivals: int
    completions: int
    quick_starts: int
    start_s: float  # window start, epoch seconds
    end_s: float
    log: str | None = None
    wall_s: float = 0.0


def _stats(x) -> dict:
    a = np.asarray(x, dtype=float)
    a = a[np.isfinite(a)]
    if not len(a):
        return {"mean": None, "median": None, "p95": None, "max": None}
    return {"mean": float(a.mean()), "median": float(np.median(a)),
            "p95": float(np.percentile(a, 95)), "max": float(a.max())}


def _mean(x):
    a = np.asarray(x, dtype=float)
    a = a[np.isfinite(a)]
    return float(a.mean()) if len(a) else None


def _pct(x, q):
    a = np.asarray(x, dtype=float)
    a = a[np.isfinite(a)]
    return float(np.percentile(a, q)) if len(a) else None


def _iso(t: float) -> str:
    return format_iso(float(t), sep=" ", zone="")


# ---------------------------------------------------------------------------
# A_s: the same Trainers on a static pool


def equal_shares(nodes: float, nmin: list[int], nmax: list[int]) -> list[float]:
    """Equal (fractional) shares of `nodes` for Trainers in FCFS order.

    The longest FCFS prefix whose equal share meets every Nmin runs; shares are capped at
    Nmax and the surplus is spread over the uncapped ones (water filling). Others get 0.
    O(J log J), in plain floats (a few Trainers at a time: NumPy's per-call cost was most of it;
    the same arithmetic, so the same numbers as the array version it replaced).
    """
    n = len(nmin)
    if n == 0:
        return []
    nodes = float(nodes)
    m = 0
    prefmax = -math.inf
    for i, lo in enumerate(nmin):  # nodes/m falls as m grows, the largest Nmin so far rises
        prefmax = max(prefmax, float(lo))
        if not nodes / (i + 1) >= prefmax:
            break
        m = i + 1
    out = [0.0] * n
    if m == 0:
        return out
    caps = [float(c) for c in nmax[:m]]
    left, k = nodes, m
    rest = [True] * m
    for i in sorted(range(m), key=caps.__getitem__):  # stable, as argsort(kind="stable")
        if caps[i] <= left / k:
            out[i] = caps[i]
            left -= caps[i]
            k -= 1
            rest[i] = False
        else:
            break
    if k:
        share = left / k
        for i in range(m):
            if rest[i]:
                out[i] = share
    return out


@lru_cache(maxsize=16)
def _static_replay(key: tuple, nodes: float, horizon_s: float, pj_max: int) -> tuple[float, int]:
    """static_replay on its inputs as a key: per Trainer (submit_s, nmin, nmax, work_samples,
    curve), in submit order. Cached: a run pair's replays and cost-free twins, and a sweep's
    cells on one window, ask for the same A_s."""
    ai, now = 0, 0.0
    active: list[list] = []  # [key row, remaining, rate]
    samples = 0.0
    completed = 0

    rates: dict = {}  # (curve, share) -> O(share): equal shares repeat, and so do curves

    def reshare():
        shares = equal_shares(nodes, [a[0][1] for a in active], [a[0][2] for a in active])
        for a, sh in zip(active, shares):
            c = a[0][4]
            r = rates.get((c, sh))
            if r is None:
                r = rates[c, sh] = interp(min(sh, c.nodes[-1]), c.nodes, c.samples_per_s)
            a[2] = r

    queue: deque = deque()
    while True:
        ta = key[ai][0] if ai < len(key) else math.inf
        tc = min((now + a[1] / a[2] for a in active if a[2] > 0), default=math.inf)
        tn = min(ta, tc, horizon_s)
        dt = tn - now
        if dt > 0:
            for a in active:
                if a[2] > 0:
                    got = min(a[2] * dt, a[1])
                    a[1] -= got
                    samples += got
        now = tn
        if now >= horizon_s:
            break
        left = []
        for a in active:
            if a[1] <= 1e-9 * a[0][3] + 1e-6 or (a[2] > 0 and now + a[1] / a[2] <= now):
                samples += max(a[1], 0.0)
                completed += 1
            else:
                left.append(a)
        changed = len(left) < len(active)
        active = left
        while ai < len(key) and key[ai][0] <= now:
            queue.append(key[ai])
            ai += 1
        while queue and len(active) < pj_max:
            s = queue.popleft()
            active.append([s, float(s[3]), 0.0])
            changed = True
        if changed:  # the same Trainers: the same shares and rates as before
            reshare()
        if not active and ai >= len(key):
            break
    return samples, completed


def static_replay(specs, nodes: float, horizon_s: float, pj_max: int) -> dict:
    """Samples the Trainers `specs` process on `nodes` static nodes in [0, horizon_s].

    Equal share (fractional), no costs, Pj_max at once FCFS. Returns samples and completed.
    """
    specs = sorted([s for s in specs if s.submit_s < horizon_s], key=lambda s: s.submit_s)
    key = tuple((s.submit_s, s.nmin, s.nmax, s.work_samples, s.curve) for s in specs)
    samples, completed = _static_replay(key, nodes, horizon_s, pj_max)
    return {"samples": samples, "completed": completed}


def static_shortcut(curve, nodes: float, horizon_s: float, pj_max: int) -> float:
    """BFTrainer's A_s for identical saturated Trainers: T * Pj_max * O(n-bar / Pj_max)."""
    return horizon_s * pj_max * curve(nodes / pj_max)


# ---------------------------------------------------------------------------
# pieces the app and the study use


def runtime_per_model(trainers: pd.DataFrame) -> pd.DataFrame:
    """Mean runtime (first nodes to end), JCT and queueing time of completed Trainers per model."""
    done = trainers[trainers["completed"]]
    if done.empty:
        return pd.DataFrame(columns=["model", "completed", "mean_run_s", "mean_jct_s", "mean_queue_s"])
    g = done.groupby("model", sort=True)
    return pd.DataFrame({"completed": g.size(), "mean_run_s": g["run_s"].mean(),
                         "mean_jct_s": g["jct_s"].mean(), "mean_queue_s": g["queue_s"].mean()}
                        ).reset_index()


def queue_incl_waiting_s(trainers: pd.DataFrame, horizon_s: float) -> tuple[float, float | None]:
    """(total, mean) over every arrived Trainer (but dropped ones) of its wait for first nodes,
    counting those that never got nodes up to the window end (so the mean is a lower bound); mean
    None without Trainers."""
    if "outcome" in trainers:  # drop mode: a rejected Trainer does not wait
        trainers = trainers[trainers["outcome"] != "dropped"]
    wait = trainers["start_s"].fillna(float(horizon_s)) - trainers["submit_s"]
    total = float(wait.sum())
    return total, (total / len(wait) if len(wait) else None)


def preemption_within_share(decision_t, preemption_t, tfwd_s) -> float | None:
    """Share of decisions followed by a preemption within tfwd_s seconds (strictly after);
    tfwd_s: one number, or one per decision."""
    d = np.asarray(decision_t, dtype=float)
    p = np.unique(np.asarray(preemption_t, dtype=float))
    if not len(d):
        return None
    if not len(p):
        return 0.0
    i = np.searchsorted(p, d, side="right")
    nxt = np.where(i < len(p), p[np.minimum(i, len(p) - 1)], np.inf)
    return float(np.mean(nxt - d <= np.asarray(tfwd_s, dtype=float)))


def rescale_roi(decisions: pd.DataFrame) -> float | None:
    """Return on rescaling investment (definition in the module docstring)."""
    if decisions.empty:
        return None
    paid = decisions[decisions["rescale_cost_samples"] > 0]
    cost = float(paid["rescale_cost_samples"].sum())
    if cost <= 0:
        return None
    gain = float(((paid["rate_after_samples_per_s"] - paid["rate_before_samples_per_s"])
                  * paid["held_s"]).sum())
    return gain / cost


def integral(timeline: pd.DataFrame, column: str, end_s: float) -> float:
    """Integral over [t0, end_s] of a step series in `timeline` (value holds until the next row)."""
    t = timeline["t_s"].to_numpy(dtype=float)
    v = timeline[column].to_numpy(dtype=float)
    dt = np.diff(np.concatenate([t, [end_s]]))
    return float(np.sum(v * np.clip(dt, 0, None)))


def summarize(timeline: pd.DataFrame, trainers: pd.DataFrame, decisions: pd.DataFrame,
              preemptions: pd.DataFrame, totals: ReplayTotals) -> dict:
    """The JSON summary of one replay (the keys of `planner simulate --json`)."""
    T = float(totals.horizon_s)
    samples = float(trainers["samples"].sum())
    mean_pool = float(totals.mean_pool_nodes)
    stat = static_replay(totals.specs, mean_pool, T, int(totals.pj_max))
    a_s = stat["samples"]
    resource = float(totals.pool_node_hours)
    allocated = float(totals.allocated_node_s) / 3600.0
    # The simulator's frames have all their columns even when empty (sums are then 0).
    started = trainers[trainers["start_s"].notna()]
    completed = trainers[trainers["completed"]]
    total_wait, mean_wait = queue_incl_waiting_s(trainers, T)
    resc_inc = float(trainers["rescale_cost_incurred_samples"].sum())
    statuses = decisions["status"].value_counts().to_dict()
    events = int(totals.events)
    tfwd_s = decisions["tfwd_s"] if "tfwd_s" in decisions else float(totals.tfwd_s)
    return {
        "log": totals.log,
        "window_start": _iso(totals.start_s),
        "window_end": _iso(totals.end_s),
        "window_hours": T / 3600.0,
        "events": events,
        "pool_events": int(totals.pool_events),
        "arrivals": int(totals.arrivals),
        "completions": int(totals.completions),
        "decisions": int(len(decisions)),
        "quick_starts": int(totals.quick_starts),
        "trainers_arrived": int(len(trainers)),
        "trainers_started": int(len(started)),
        "trainers_completed": int(len(completed)),
        "trainers_waiting_at_end": int(len(trainers) - len(started) - (trainers["outcome"] == "dropped").sum()),
        "trainers_dropped": int((trainers["outcome"] == "dropped").sum()),
        "drop_ratio": float((trainers["outcome"] == "dropped").sum() / len(trainers)) if len(trainers) else 0.0,
        "trainers_after_window": int(totals.not_in_window),
        "trainers_killed": int((trainers["outcome"] == "killed").sum()),
        "trainers_hung": int((trainers["outcome"] == "hung").sum()),
        "samples": samples,
        "static_samples": a_s,
        "static_trainers_completed": int(stat["completed"]),
        "resource_node_hours": resource,
        "allocated_node_hours": allocated,
        "allocated_share": allocated / resource if resource > 0 else None,
        "mean_pool_nodes": mean_pool,
        "utilization_efficiency": samples / a_s if a_s > 0 else None,
        "mean_queue_s": _mean(started["queue_s"]),
        "p95_queue_s": _pct(started["queue_s"], 95),
        "total_wait_s": total_wait,
        "mean_queue_incl_waiting_s": mean_wait,
        "mean_jct_s": _mean(completed["jct_s"]),
        "p95_jct_s": _pct(completed["jct_s"], 95),
        "mean_run_s": _mean(completed["run_s"]),
        "gross_samples": float(totals.gross_samples),
        "rescale_cost_samples": float(trainers["rescale_cost_samples"].sum()),
        "rescale_cost_incurred_samples": resc_inc,
        "rescale_cost_per_event_samples": resc_inc / events if events else 0.0,
        "preemption_cost_samples": float(trainers["preemption_cost_samples"].sum()),
        "preemption_cost_incurred_samples": float(trainers["preemption_cost_incurred_samples"].sum()),
        "solve_idle_cost_samples": float(trainers["solve_idle_cost_samples"].sum()),
        "rescales": int(trainers["rescales"].sum()),
        "preemptions": int(len(preemptions)),
        "migrations": int((preemptions["nodes_migrated"] > 0).sum()) if "nodes_migrated" in preemptions else 0,
        "preemption_events": int(preemptions["t_s"].nunique()),
        "preemption_within_tfwd_share": preemption_within_share(
            decisions["t_s"], preemptions["t_s"], tfwd_s),
        "rescale_roi": rescale_roi(decisions),
        "solve_s": _stats(decisions["wall_s"]),
        "statuses": {str(k): int(v) for k, v in statuses.items()},
        # decisions per allocator that answered (one entry but for auto: its dp / dp-reduced / hull)
        "answered_by": {str(k): int(v) for k, v in decisions["allocator"].value_counts().items()},
        "fallback_decisions": int(statuses.get("fallback", 0)),
        "runtime_per_model_s": {r.model: float(r.mean_run_s) for r in runtime_per_model(trainers).itertuples()},
        "wall_s": float(totals.wall_s),
    }
