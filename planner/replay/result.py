"""SimResult: the frames and the JSON summary of one replay, assembled from a finished Replay."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pandas as pd

from planner.replay import metrics
from planner.replay.records import Decision, Preemption, frame, trainers_frame


@dataclass
class SimResult:
    summary: dict
    timeline: pd.DataFrame
    trainers: pd.DataFrame
    decisions: pd.DataFrame
    preemptions: pd.DataFrame
    scenario: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return self.summary


def build_result(replay, wall0: float) -> SimResult:
    """The frames and the summary (planner.replay.metrics) of a finished Replay."""
    timeline = replay.timeline.frame()
    decisions = frame(replay.decisions, Decision)
    preemptions = frame(replay.preemptions, Preemption)
    trainers = trainers_frame(replay.runs)
    pool, c = replay.pool, replay.counters
    totals = metrics.ReplayTotals(
        horizon_s=replay.T, gross_samples=replay.gross_samples, allocated_node_s=replay.allocated_node_s,
        pool_node_hours=pool.node_hours(), mean_pool_nodes=pool.mean_nodes(), specs=replay.in_window,
        not_in_window=len(replay.specs) - len(replay.in_window), pj_max=replay.pj_max,
        tfwd_s=replay.opts.tfwd_s, events=c.events, pool_events=c.pool_events, arrivals=c.arrivals,
        completions=c.completions, quick_starts=c.quick_starts, start_s=pool.start_s, end_s=pool.end_s,
        log=pool.log, wall_s=time.perf_counter() - wall0)
    summary = metrics.summarize(timeline, trainers, decisions, preemptions, totals)
    return SimResult(summary=summary, timeline=timeline, trainers=trainers, decisions=decisions,
                     preemptions=preemptions)
