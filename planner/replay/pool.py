"""The pool a replay runs on: which node ids are idle, and when that changes.

A PoolTrace is what the simulator consumes. It comes from a log window
(`planner.idle.fragments.pool_trace(con, Window(log, start, hours, pool_size))`), or is a fixed pool
(`fixed_pool(P, start_s, end_s)`), or is built by hand in tests.

Node ids are small ints 0..nodes-1. Times are seconds since the Unix epoch (float).
`times[i]` is the i-th event (strictly increasing, start_s < times[i] < end_s);
`joins[i]`/`leaves[i]` are the node ids that become idle / stop being idle then.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class PoolTrace:
    log: str
    start_s: float
    end_s: float
    nodes: int  # node slots (pool size K, or P for a fixed pool)
    initial_idle: np.ndarray  # int ids idle at start_s
    times: np.ndarray = field(default_factory=lambda: np.empty(0))
    joins: list[np.ndarray] = field(default_factory=list)
    leaves: list[np.ndarray] = field(default_factory=list)
    derived: bool = False  # node identity derived from counts (job logs), not observed
    kind: str = "log"  # "log" or "fixed"

    def __post_init__(self):
        self.initial_idle = np.asarray(self.initial_idle, dtype=np.int64)
        self.times = np.asarray(self.times, dtype=float)
        if not (len(self.times) == len(self.joins) == len(self.leaves)):
            raise ValueError("times, joins and leaves must have one entry per event")
        if len(self.times) and (np.any(np.diff(self.times) <= 0) or self.times[0] <= self.start_s
                                or self.times[-1] >= self.end_s):
            raise ValueError("event times must be strictly increasing inside (start_s, end_s)")

    @property
    def events(self) -> int:
        return len(self.times)

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(t, N(t)) step series: N at start_s and after each event."""
        n = [len(self.initial_idle)]
        for j, left in zip(self.joins, self.leaves):
            n.append(n[-1] + len(j) - len(left))
        return np.concatenate([[self.start_s], self.times]), np.asarray(n)

    def node_hours(self) -> float:
        t, n = self.counts()
        dt = np.diff(np.concatenate([t, [self.end_s]]))
        return float(np.sum(dt * n) / 3600.0)

    def mean_nodes(self) -> float:
        span = self.end_s - self.start_s
        return self.node_hours() * 3600.0 / span if span > 0 else 0.0


def fixed_pool(nodes: int, start_s: float, end_s: float) -> PoolTrace:
    """P nodes always there (ModelArts' cloud pool)."""
    return PoolTrace(log=f"fixed:{nodes}", start_s=start_s, end_s=end_s, nodes=nodes,
                     initial_idle=np.arange(nodes), kind="fixed")


def from_counts(log: str, t_s, n, end_s: float, nodes: int | None = None) -> PoolTrace:
    """A pool from an idle-count series, node identity by the stack rule.

    The documented rule for count-level logs: node k is idle exactly while N(t) > k, so a
    rise of N by d makes ids N..N+d-1 idle and a fall releases the highest ids first (the
    node that joined last leaves first). Fragments from this rule sum to the integral of N.
    """
    t_s = np.asarray(t_s, dtype=float)
    n = np.asarray(n, dtype=np.int64)
    nodes = int(nodes if nodes is not None else (n.max() if len(n) else 0))
    times, joins, leaves = [], [], []
    prev = int(n[0]) if len(n) else 0
    for t, cur in zip(t_s[1:], n[1:]):
        cur = int(cur)
        if cur == prev:
            continue
        if t >= end_s:
            break
        times.append(t)
        if cur > prev:
            joins.append(np.arange(prev, cur))
            leaves.append(np.empty(0, dtype=np.int64))
        else:
            joins.append(np.empty(0, dtype=np.int64))
            leaves.append(np.arange(cur, prev))
        prev = cur
    return PoolTrace(log=log, start_s=float(t_s[0]) if len(t_s) else 0.0, end_s=end_s, nodes=nodes,
                     initial_idle=np.arange(int(n[0]) if len(n) else 0), times=np.asarray(times),
                     joins=joins, leaves=leaves, derived=True)
