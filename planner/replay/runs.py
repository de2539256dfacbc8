"""One Trainer during a replay: its mutable bookkeeping (size, progress, pending costs, fate).

Costs go into three buckets, paid in this order from the samples a Trainer produces:
PREEMPTION, RESCALE, SOLVE_IDLE (planner.replay.simulator's docstring has the rules).
"""

from __future__ import annotations

import math

from planner.workload.trainers import TrainerSpec

PREEMPTION, RESCALE, SOLVE_IDLE = 0, 1, 2
BUCKETS = (PREEMPTION, RESCALE, SOLVE_IDLE)


def finish_tol(work: float) -> float:
    """Samples short of its work at which a Trainer counts as done (float round-off)."""
    return 1e-9 * work + 1e-6


class TrainerRun:
    """One Trainer during a replay.

    `rate` is O(n) at its current size (what costs are charged on); `prod` is the rate at
    which it makes progress: `rate`, or 0 once a bug job hangs. `current` is `nodes` sorted
    (what the allocator is shown), kept by set_nodes so unchanged Trainers are not re-sorted
    at every decision. `idx` is its position in the replay (the node owner id).
    """

    __slots__ = ("spec", "idx", "nodes", "current", "rate", "done_samples", "pend", "paid", "incurred",
                 "start_s", "end_s", "node_s", "rescales", "preemptions", "max_nodes", "admit_s",
                 "curve_tab", "target", "fate", "hung", "budget_node_s", "outcome", "eta_factor", "batch",
                 "batch_changes", "curve_list", "state_fields", "tol")

    def __init__(self, spec: TrainerSpec, idx: int):
        self.spec = spec
        self.idx = idx
        self.nodes: set[int] = set()
        self.current: tuple[int, ...] = ()
        self.rate = 0.0
        self.done_samples = 0.0
        self.pend = [0.0, 0.0, 0.0]
        self.paid = [0.0, 0.0, 0.0]
        self.incurred = [0.0, 0.0, 0.0]
        self.start_s = math.nan
        self.end_s = math.nan
        self.admit_s = math.nan
        self.node_s = 0.0
        self.rescales = 0
        self.preemptions = 0
        self.max_nodes = 0
        self.curve_tab = spec.curve.table(max(spec.nmax, 1))
        self.curve_list = self.curve_tab.tolist()  # the same floats, read without NumPy's scalar cost
        # the TrainerState fields that never change (engine.Replay.alloc_state adds the others)
        self.state_fields = {"id": spec.id, "nmin": spec.nmin, "nmax": spec.nmax, "rup_s": spec.rup_s,
                             "rdw_s": spec.rdw_s, "priority": spec.priority, "submit_s": spec.submit_s,
                             "model": spec.model, "request_nodes": spec.request_nodes, "batches": spec.batches}
        self.batch = spec.batch_size  # the batch size it runs with (IBM's second knob), None: fixed
        self.batch_changes = 0
        meta = spec.meta or {}
        self.eta_factor = float(meta.get("eta_factor", 1.0))
        # ModelArts' robustness study (planner.workload.generators.perturb_workload): a killed job leaves
        # at kill_at_frac of its work; a bug job hangs at hang_at_frac, keeps its nodes until it
        # has used its seen ETA in node-hours, then leaves.
        self.tol = finish_tol(spec.work_samples)
        self.fate = "complete"
        self.target = float(spec.work_samples)
        if meta.get("kill_at_frac") is not None:
            self.fate, self.target = "kill", float(meta["kill_at_frac"]) * spec.work_samples
        elif meta.get("hang_at_frac") is not None:
            self.fate, self.target = "hang", float(meta["hang_at_frac"]) * spec.work_samples
        self.hung = False
        self.budget_node_s = self.seen_eta_node_h(spec.work_samples) * 3600.0
        self.outcome = ""

    @property
    def curve(self):
        """The scaling curve of the batch size it runs with."""
        return dict(self.spec.batches)[self.batch] if self.spec.batches else self.spec.curve

    def set_batch(self, b: int) -> bool:
        """Switch to total batch size b (its own curve); True when it changed."""
        if not self.spec.batches or b == self.batch:
            return False
        self.batch = b
        self.curve_tab = self.curve.table(max(self.spec.nmax, 1))
        self.curve_list = self.curve_tab.tolist()
        self.rate = self.o(len(self.nodes))
        self.batch_changes += 1
        return True

    def o(self, n: int) -> float:
        tab = self.curve_list
        return tab[n] if n < len(tab) else tab[-1]

    def seen_eta_node_h(self, remaining: float) -> float:
        """The ETA (remaining demand in node-hours) the allocator sees, noise included."""
        s = self.spec
        if s.eta_node_h is not None:  # already noisy (perturb_workload scales it)
            return s.eta_node_h * remaining / s.work_samples
        one = self.o(1)
        return remaining / one / 3600.0 * self.eta_factor if one > 0 else math.inf

    @property
    def prod(self) -> float:
        return 0.0 if self.hung else self.rate

    def set_nodes(self, nodes: set[int], now: float):
        self.nodes = nodes
        self.current = tuple(sorted(nodes))
        n = len(nodes)
        self.rate = self.o(n)
        if n:
            if math.isnan(self.start_s):
                self.start_s = now
            self.max_nodes = max(self.max_nodes, n)

    def remaining(self) -> float:
        return self.spec.work_samples - self.done_samples

    def time_to_finish(self) -> float:
        """Seconds until it leaves at the current size: its target reached (or, hung, its budget used)."""
        if self.hung:
            n = len(self.nodes)
            return max(self.budget_node_s - self.node_s, 0.0) / n if n else math.inf
        if self.rate <= 0:
            return math.inf
        return (max(self.target - self.done_samples, 0.0) + sum(self.pend)) / self.rate

    def reached(self, now: float) -> bool:
        if self.hung:
            return bool(self.nodes) and (self.node_s >= self.budget_node_s - 1e-6
                                         or now + self.time_to_finish() <= now)
        if self.rate <= 0:
            return False
        return ((self.target - self.done_samples <= self.tol
                 and sum(self.pend) <= 1e-6) or now + self.time_to_finish() <= now)

    def credit(self, dt: float) -> float:
        """Run dt seconds at the current size; pay pending costs first. Returns gross samples."""
        self.node_s += len(self.nodes) * dt
        gross = self.prod * dt
        if gross <= 0:
            return 0.0
        left = gross
        for b in BUCKETS:
            if self.pend[b] > 0 and left > 0:
                pay = min(self.pend[b], left)
                self.pend[b] -= pay
                self.paid[b] += pay
                left -= pay
        self.done_samples += left
        return gross

    def charge(self, bucket: int, samples: float):
        if samples > 0:
            self.pend[bucket] += samples
            self.incurred[bucket] += samples

    def leave(self, now: float) -> bool:
        """At an event where it reached its target (or budget): settle its fate.

        Returns True when it leaves the replay now (completed, killed, or hung with its budget
        used); False when a bug job only starts to hang (it keeps its nodes)."""
        if self.hung:
            self.outcome = "hung"
        elif self.fate == "complete":
            self.done_samples = self.spec.work_samples
            self.outcome = "completed"
        elif self.fate == "kill":
            self.done_samples = self.target
            self.outcome = "killed"
        else:  # the bug job hangs now: no more progress, nodes kept until its budget is used
            self.done_samples = self.target
            self.hung = True
            self.pend = [0.0, 0.0, 0.0]
            if not self.reached(now):
                return False
            self.outcome = "hung"
        self.end_s = now
        return True
