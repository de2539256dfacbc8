"""Scaling curves and Trainer specs (workload generators live in planner.workload.generators).

A Curve is a measured throughput O(n) in samples/s at a few node counts, piecewise
linear in between (BFTrainer's model) and flat beyond the last measured point.
"""

from __future__ import annotations

import csv
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from planner.paths import IMAGENET_SCALING
from planner.scenario.defaults import DEFAULT_RDW_S, DEFAULT_RUP_S


@dataclass(frozen=True)
class Curve:
    """Throughput in samples/s measured at `nodes` (ascending, starting at 0 with 0)."""

    nodes: tuple[int, ...]
    samples_per_s: tuple[float, ...]

    def __post_init__(self):
        if len(self.nodes) != len(self.samples_per_s) or not self.nodes:
            raise ValueError("curve needs as many node counts as throughputs")
        if list(self.nodes) != sorted(set(self.nodes)) or self.nodes[0] < 0:
            raise ValueError("curve node counts must be distinct, ascending and >= 0")
        if self.nodes[0] != 0:
            object.__setattr__(self, "nodes", (0,) + tuple(self.nodes))
            object.__setattr__(self, "samples_per_s", (0.0,) + tuple(self.samples_per_s))
        # the dataclass hash, computed once: curves key the per-decision lru_caches
        object.__setattr__(self, "_hash", hash((self.nodes, self.samples_per_s)))

    def __hash__(self) -> int:
        return self._hash

    def __call__(self, n: float) -> float:
        """O(n): linear interpolation between measured points, flat past the last."""
        return float(np.interp(n, self.nodes, self.samples_per_s))

    def table(self, nmax: int) -> np.ndarray:
        """O(0..nmax) as an array (cached per curve and nmax)."""
        return _table(self, int(nmax))

    def table_list(self, nmax: int) -> list[float]:
        """table(nmax) as a list of the same floats (cached; read one value at a time without
        NumPy's cost per scalar). Do not modify it."""
        return _table_list(self, int(nmax))

    @property
    def one_node(self) -> float:
        return self(1)

    def scaled(self, factor: float) -> "Curve":
        return Curve(self.nodes, tuple(float(v) * factor for v in self.samples_per_s))


def interp(x: float, xs, ys) -> float:
    """np.interp(x, xs, ys) for one point, in plain floats: the same arithmetic as NumPy's C loop
    (the segment's slope times the distance from its left end, plus its left value; the measured
    value at a measured point; flat outside), so the same number, without NumPy's per-call cost
    of turning `xs` and `ys` into arrays (~5 us; the static A_s replay asks ~10,000 times).
    `xs` ascending, as a Curve's nodes; x not NaN."""
    x = float(x)
    if x <= xs[0]:
        return float(ys[0])
    if x >= xs[-1]:
        return float(ys[-1])
    j = bisect_right(xs, x) - 1  # xs[j] <= x < xs[j + 1]
    if xs[j] == x:
        return float(ys[j])
    y0, y1 = float(ys[j]), float(ys[j + 1])
    slope = (y1 - y0) / (float(xs[j + 1]) - float(xs[j]))
    out = slope * (x - float(xs[j])) + y0
    if out != out:  # NaN one way: NumPy tries from the right end, then the flat value
        out = slope * (x - float(xs[j + 1])) + y1
        if out != out and y0 == y1:
            out = y0
    return out


@lru_cache(maxsize=4096)
def _table(curve: Curve, nmax: int) -> np.ndarray:
    out = np.interp(np.arange(nmax + 1), curve.nodes, curve.samples_per_s)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=4096)
def _table_list(curve: Curve, nmax: int) -> list[float]:
    return _table(curve, nmax).tolist()


@dataclass(frozen=True)
class TrainerSpec:
    """One elastic Trainer as submitted: what it runs and what it costs to rescale."""

    id: str
    model: str
    curve: Curve
    nmin: int = 1
    nmax: int = 64
    rup_s: float = DEFAULT_RUP_S
    rdw_s: float = DEFAULT_RDW_S
    work_samples: float = 1.3e8
    priority: float = 1.0
    submit_s: float = 0.0
    eta_node_h: float | None = None  # ModelArts' ETA; None = derived from the curve
    request_nodes: int | None = None  # the size a rigid run asks for (`static` baselines); None = nmax
    # IBM's batch-size choices ((batch_size, Curve), ...); empty: one batch size (`curve`). With
    # choices, `curve` is the curve of `batch_size`, the one it starts with.
    batches: tuple = ()
    batch_size: int | None = None
    meta: dict = field(default_factory=dict, compare=False, hash=False)


def load_scaling_table(path: str | Path = IMAGENET_SCALING) -> dict[str, Curve]:
    """Read `model,nodes,samples_per_sec` into one Curve per model (file order kept)."""
    points: dict[str, list[tuple[int, float]]] = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            points.setdefault(row["model"], []).append((int(row["nodes"]), float(row["samples_per_sec"])))
    out = {}
    for model, pts in points.items():
        pts.sort()
        out[model] = Curve(tuple(p[0] for p in pts), tuple(p[1] for p in pts))
    return out


@lru_cache(maxsize=1)
def imagenet_curves() -> dict[str, Curve]:
    """The 7 ImageNet models measured on Summit (BFTrainer Table 2)."""
    return load_scaling_table(IMAGENET_SCALING)
