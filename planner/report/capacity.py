"""The capacity answer of one replay: what a pool of K nodes delivers per week, and how long jobs wait.

The operator's question (issue 25): "how many node-hours of training does a pool of K nodes
deliver per week, and how long do jobs wait?". From a replay's summary (planner.replay.metrics)
and its trainers frame (one row per Trainer: queue_s for those that started):

- weeks = window hours / 168 (a shorter window is scaled up linearly: say so beside it);
- harvestable node-hours per week = the pool's idle node-hours (resource_node_hours) / weeks: the
  capacity offered (outages and warm-up excluded unless the scenario includes them);
- delivered node-hours per week = allocated_node_hours / weeks: what Trainers used;
- samples per week = samples / weeks; jobs completed per week = trainers_completed / weeks;
- queueing median and p95 over the Trainers that started (queue_s: submit to first nodes), and
  how many still waited at the window's end (their wait is at least the time to the end);
- demand_done_h: when every Trainer that arrived had completed before the last DEMAND_SLACK of the
  window (the last end, hours from the window start; None otherwise): the pool then sat idle for want
  of work, so the delivered figures are the workload's, not the pool's limit (a finite workload on a
  fixed pool).
"""

from __future__ import annotations

import math

import numpy as np

WEEK_H = 168.0
DEMAND_SLACK = 0.05  # a last completion this share of the window or more before its end: demand-limited


def answer(summary: dict, trainers=None) -> dict:
    """The capacity answer (module docstring) as plain numbers (None where not defined)."""
    hours = float(summary.get("window_hours") or 0.0)
    weeks = hours / WEEK_H if hours > 0 else float("nan")

    def per_week(key):
        v = summary.get(key)
        return None if v is None or not math.isfinite(weeks) else float(v) / weeks

    q = None
    if trainers is not None and len(trainers) and "queue_s" in trainers:
        qs = np.asarray(trainers["queue_s"], dtype=float)
        q = qs[np.isfinite(qs)]
    done_h = None
    arrived, completed = summary.get("trainers_arrived"), summary.get("trainers_completed")
    if (trainers is not None and len(trainers) and "end_s" in trainers and arrived and completed == arrived
            and not summary.get("trainers_waiting_at_end")):
        last = float(np.nanmax(np.asarray(trainers["end_s"], dtype=float)))
        done_h = last / 3600.0 if math.isfinite(last) and last / 3600.0 < (1 - DEMAND_SLACK) * hours else None
    med = float(np.median(q)) if q is not None and len(q) else None
    p95 = float(np.percentile(q, 95)) if q is not None and len(q) else summary.get("p95_queue_s")
    return {
        "window_hours": hours,
        "pool_nodes": summary.get("mean_pool_nodes"),
        "harvestable_node_hours_per_week": per_week("resource_node_hours"),
        "delivered_node_hours_per_week": per_week("allocated_node_hours"),
        "samples_per_week": per_week("samples"),
        "jobs_completed_per_week": per_week("trainers_completed"),
        "queue_median_s": med,
        "queue_p95_s": p95,
        "trainers_arrived": summary.get("trainers_arrived"),
        "trainers_waiting_at_end": summary.get("trainers_waiting_at_end"),
        "scaled_from_hours": hours if hours and hours < WEEK_H else None,
        "demand_done_h": done_h,
    }
