"""The replaceable steps of a replay: which node ids a Trainer takes or gives up, T_fwd,
admission and cadence (the last two are named by the scenario's `admission` / `cadence`).

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

Admission: how many queued Trainers (FCFS order) are admitted at an event: `Fcfs` (while fewer
than Pj_max are admitted) or `MinFits` (also only while every admitted Nmin fits the pool).

Cadence: which events are allocator decisions: `EveryEvent` (BFTrainer) or `Interval(step_min)`
(ticks every step_min minutes; between ticks, Trainers without nodes start on free ones).

Hooks are handed to simulate() in a planner.replay.config.ReplayHooks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from planner.allocators.base import AllocResult, AllocState, counts_to_map
from planner.workload.trainers import TrainerSpec


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


# ---- admission: which queued Trainers are admitted at an event (step 4 of an event)


class Admission(Protocol):
    name: str

    def admit(self, queued: Sequence[TrainerSpec], admitted: Sequence[TrainerSpec], n_idle: int,
              pj_max: int) -> int | Sequence[int]:
        """How many Trainers from the head of `queued` (FCFS order) to admit now, given the
        `admitted` ones (which keep their slots), the idle node count and Pj_max; or the positions
        in `queued` to admit (a rule under which a Trainer may pass those queued before it, e.g.
        IBM's simulator's queue in planner.studies.ibm)."""


class Fcfs:
    """Admit FCFS while fewer than pj_max are admitted (BFTrainer)."""

    name = "fcfs"

    def admit(self, queued, admitted, n_idle: int, pj_max: int) -> int:
        return max(0, min(len(queued), pj_max - len(admitted)))


class MinFits(Fcfs):
    """FCFS, and only while the Nmin of every admitted Trainer fits the idle pool (IBM's
    autoscaler, Elan's admission rule)."""

    name = "min-fits"

    def admit(self, queued, admitted, n_idle: int, pj_max: int) -> int:
        room = super().admit(queued, admitted, n_idle, pj_max)
        min_sum = sum(s.nmin for s in admitted)
        k = 0
        while k < room:
            min_sum += queued[k].nmin
            if min_sum > n_idle:
                break
            k += 1
        return k


# ---- cadence: which events are allocator decisions (step 5 of an event)


class Cadence(Protocol):
    name: str
    first_tick: float  # the first scheduled decision (math.inf: none are scheduled)

    def decides(self, now_s: float, tick_s: float) -> bool:
        """Is the event at now_s a decision? (tick_s: the next scheduled decision). When not,
        admitted Trainers without nodes start on free ones at once (quick start)."""

    def next_tick(self, tick_s: float, now_s: float) -> float:
        """The scheduled decision after a decision at now_s (tick_s: the one just reached)."""


class EveryEvent:
    """Decide at every event (BFTrainer); no scheduled ticks."""

    name = "events"
    first_tick = math.inf

    def decides(self, now_s: float, tick_s: float) -> bool:
        return True

    def next_tick(self, tick_s: float, now_s: float) -> float:
        return math.inf


class Interval:
    """Decide at ticks every step_min minutes from the window start (ModelArts); ticks are events."""

    name = "interval"
    first_tick = 0.0

    def __init__(self, step_min: float):
        self.step_s = float(step_min) * 60.0

    def decides(self, now_s: float, tick_s: float) -> bool:
        return now_s >= tick_s

    def next_tick(self, tick_s: float, now_s: float) -> float:
        while tick_s <= now_s:
            tick_s += self.step_s
        return tick_s


# The named rules of the scenario schema's `admission` and `cadence` fields: name -> a maker
# taking the replay's ReplayConfig.
ADMISSIONS: dict[str, Callable] = {"fcfs": lambda cfg: Fcfs(), "min-fits": lambda cfg: MinFits()}
CADENCES: dict[str, Callable] = {"events": lambda cfg: EveryEvent(), "interval": lambda cfg: Interval(cfg.step_min)}
