"""The two replaceable steps of a replay: which node ids a Trainer takes or gives up, and T_fwd.

NodeMapper: counts -> node ids. A decision's counts become a node map, and (cadence
`interval`) a Trainer started between ticks takes some of the free nodes. Today's rule is
`LowestId`: no migration, a shrinking Trainer keeps its lowest ids, a growing one keeps all
of its nodes and takes the lowest free ids (planner.allocators.base.counts_to_map, which every
count-level allocator already applies to the map it returns). A replacement (e.g. one that
prefers nodes likely to stay idle) implements both methods of NodeMapper (CountsToMap is the template); it is
checked like any allocator map (nodes only from the pool, never two Trainers on one node).

TfwdRule: the T_fwd handed to the allocator at each decision. Today's rule is
`ConstantTfwd(opts.tfwd_s)`; a predictor returns a value per decision from the AllocState
(now_s, pool, Trainers). The value is recorded per decision (SimResult.decisions.tfwd_s) and
the "preemption within T_fwd" metric uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from planner.allocators.base import AllocResult, AllocState, counts_to_map


class NodeMapper(Protocol):
    def decision_map(self, state: AllocState, result: AllocResult) -> dict[str, tuple[int, ...]]:
        """Node ids per Trainer for the counts of `result` (result.counts; Trainers not listed: 0)."""

    def pick_free(self, free: np.ndarray, k: int, now_s: float) -> np.ndarray:
        """The k nodes a Trainer started between ticks takes from `free` (ascending idle, unowned ids)."""


class LowestId:
    """Today's rule (see the module docstring). The map a count-level allocator returns is
    already counts_to_map(state, result.counts), so it is used as is; a node-level allocator's
    own map (milp-node) is kept too."""

    name = "lowest-id"

    def decision_map(self, state: AllocState, result: AllocResult) -> dict[str, tuple[int, ...]]:
        return result.node_map

    def pick_free(self, free: np.ndarray, k: int, now_s: float) -> np.ndarray:
        return free[:k]


class CountsToMap(LowestId):
    """LowestId recomputed from the counts alone (base.counts_to_map), ignoring the allocator's
    map: the template for replacements, and the check that the allocators apply the rule."""

    name = "counts-to-map"

    def decision_map(self, state: AllocState, result: AllocResult) -> dict[str, tuple[int, ...]]:
        return counts_to_map(state, result.counts)


TfwdRule = Callable[[AllocState], float]


class ConstantTfwd:
    """T_fwd is the same at every decision (today's rule: AllocOptions.tfwd_s)."""

    def __init__(self, tfwd_s: float):
        self.tfwd_s = float(tfwd_s)

    def __call__(self, state: AllocState) -> float:
        return self.tfwd_s
