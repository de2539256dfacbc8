"""Typed records a replay writes, and the DataFrames built from them.

Decision and Preemption are one row each of SimResult.decisions / .preemptions (field order =
column order); Timeline collects the step series of SimResult.timeline; trainers_frame builds
SimResult.trainers from the TrainerRuns at the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from operator import attrgetter

import numpy as np
import pandas as pd

from planner.replay.runs import PREEMPTION, RESCALE, SOLVE_IDLE, TrainerRun


@dataclass(slots=True)
class Decision:
    """One allocator decision. `held_s`: how long its node map held (until the next event);
    set when the next event comes (0 until then, and for the window end)."""

    t_s: float
    allocator: str  # the one that answered (auto: "auto:dp", "auto:dp-reduced" or "auto:hull")
    status: str
    objective: float
    build_s: float
    solve_s: float
    wall_s: float
    changed: int  # Trainers whose node set changed
    trainers: int  # admitted Trainers shown to the allocator
    pool_nodes: int
    allocated_nodes: int
    rescale_cost_samples: float
    solve_idle_cost_samples: float
    rate_before_samples_per_s: float
    rate_after_samples_per_s: float
    held_s: float = 0.0
    tfwd_s: float = math.nan  # the T_fwd the allocator was given
    # the previous decision's answer, not recomputed: its inputs were the same (engine.MEMO_ALLOCATORS);
    # its build/solve/wall seconds are those measured when that answer was computed
    reused: bool = False


@dataclass(slots=True, frozen=True)
class Preemption:
    """Nodes leaving the pool under one Trainer at one event."""

    t_s: float
    trainer: str
    nodes_before: int
    nodes_lost: int
    nodes_after: int
    cost_samples: float
    nodes_migrated: int = 0  # with migration allowed: lost nodes replaced by free ones (size kept)


@dataclass(slots=True)
class Counters:
    events: int = 0
    pool_events: int = 0
    arrivals: int = 0
    dropped: int = 0  # drop mode: Trainers rejected on arrival
    completions: int = 0
    quick_starts: int = 0


def frame(records: list, cls) -> pd.DataFrame:
    """DataFrame of dataclass records, one column per field (all columns even when empty)."""
    cols = [f.name for f in fields(cls)]
    row = attrgetter(*cols) if len(cols) > 1 else (lambda r: (getattr(r, cols[0]),))
    return pd.DataFrame(list(map(row, records)), columns=cols)


class Timeline:
    """The step series: one row per event (values hold until the next row)."""

    COLUMNS = ("t_s", "pool_nodes", "allocated_nodes", "throughput_samples_per_s", "running", "waiting")

    def __init__(self):
        self.rows: list[tuple] = []

    def add(self, now: float, pool_nodes: int, active: list[TrainerRun], queued: int):
        alloc = rate = running = 0
        for r in active:
            alloc += len(r.nodes)
            rate += r.prod
            running += 1 if r.nodes else 0
        self.rows.append((now, pool_nodes, alloc, float(rate), running, queued + len(active) - running))

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=list(self.COLUMNS))


def trainers_frame(runs: list[TrainerRun]) -> pd.DataFrame:
    """SimResult.trainers: one row per Trainer submitted inside the window."""
    t = pd.DataFrame({
        "id": [r.spec.id for r in runs],
        "model": [r.spec.model for r in runs],
        "submit_s": [r.spec.submit_s for r in runs],
        "admit_s": [r.admit_s for r in runs],
        "start_s": [r.start_s for r in runs],
        "end_s": [r.end_s for r in runs],
        "work_samples": [r.spec.work_samples for r in runs],
        "samples": [r.done_samples for r in runs],
        "node_s": [r.node_s for r in runs],
        "max_nodes": [r.max_nodes for r in runs],
        "nodes_at_end": [len(r.nodes) for r in runs],
        "rescales": [r.rescales for r in runs],
        "preemptions": [r.preemptions for r in runs],
        "rescale_cost_samples": [r.paid[RESCALE] for r in runs],
        "preemption_cost_samples": [r.paid[PREEMPTION] for r in runs],
        "solve_idle_cost_samples": [r.paid[SOLVE_IDLE] for r in runs],
        "rescale_cost_incurred_samples": [r.incurred[RESCALE] for r in runs],
        "preemption_cost_incurred_samples": [r.incurred[PREEMPTION] for r in runs],
    })
    t["outcome"] = [r.outcome or ("running" if r.nodes else "admitted" if not math.isnan(r.admit_s)
                                  else "queued") for r in runs]
    t["completed"] = t["outcome"] == "completed"
    t["queue_s"] = t["start_s"] - t["submit_s"]
    t["jct_s"] = (t["end_s"] - t["submit_s"]).where(t["completed"])
    t["run_s"] = (t["end_s"] - t["start_s"]).where(t["completed"])
    t["mean_nodes"] = np.where(t["completed"], t["node_s"] / t["run_s"], np.nan)
    return t
