"""Optimus' idea in the replay: Trainers learn their speed curve instead of being told it.

With `learn_curves`, the allocator never sees a Trainer's true curve. Each Trainer starts with
the points of a few short probe runs (`probe_nodes`, e.g. 1, 2 and 4 nodes, each measured with
relative noise `noise`), fitted with Optimus' model (planner.workload.fitcurve: 1/O(n) = a/n + b + c·n by
NNLS); whenever it then runs on k nodes for a while, the rate it actually reaches at k (its
true O(k)) becomes one more point, and the curve is refitted. The replay itself always credits
the true rates, so a wrong belief costs what it costs: nodes given where they help less than
the allocator thought.
"""

from __future__ import annotations

import numpy as np

from planner.workload.fitcurve import fit
from planner.workload.trainers import Curve, TrainerSpec


class CurveLearner:
    """Believed curves per Trainer id, refitted from observed (nodes, samples/s) points."""

    def __init__(self, probe_nodes=(1, 2, 4), noise: float = 0.0, seed: int = 0):
        self.probe_nodes = tuple(sorted({int(k) for k in probe_nodes if int(k) > 0}))
        if len(self.probe_nodes) < 3:
            raise ValueError("learning a curve needs probes at 3 or more node counts (3 parameters)")
        self.noise = float(noise)
        self.rng = np.random.default_rng(seed)
        self.points: dict[str, dict[int, float]] = {}
        self.curves: dict[str, Curve] = {}
        self.refits = 0

    def believed(self, spec: TrainerSpec, true_curve: Curve) -> Curve:
        """The curve the allocator is shown for this Trainer (probed on first use)."""
        c = self.curves.get(spec.id)
        if c is None:
            pts = {}
            for k in self.probe_nodes:
                if k <= spec.nmax:
                    pts[k] = true_curve(k) * (1.0 + self.noise * self.rng.uniform(-1.0, 1.0))
            if len(pts) < 3:  # Nmax below the probes: it is told its curve (nothing to learn)
                self.curves[spec.id] = true_curve
                return true_curve
            self.points[spec.id] = pts
            c = self._refit(spec)
        return c

    def observe(self, spec: TrainerSpec, nodes: int, rate: float):
        """It ran on `nodes` at `rate` samples/s: a new point (refit) unless that count is known."""
        pts = self.points.get(spec.id)
        if pts is None or nodes <= 0 or rate <= 0 or pts.get(nodes) == rate:
            return
        pts[nodes] = rate  # a measured run replaces a probe at the same count
        self._refit(spec)

    def _refit(self, spec: TrainerSpec) -> Curve:
        pts = self.points[spec.id]
        model = fit(list(pts), list(pts.values()))
        c = model.curve(range(0, max(spec.nmax, 1) + 1))
        self.curves[spec.id] = c
        self.refits += 1
        return c
