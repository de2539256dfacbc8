"""Learn a Trainer's speed curve from a few measured points (Optimus' speed model).

Optimus (Peng et al., EuroSys'18) models the speed of synchronous data-parallel training with w
workers and p parameter servers as f(p, w) = (θ0·M/w + θ1·w/p + θ2·w + θ3·w + θ4·p)^-1 steps/s
(M: samples per step) and fits the θ by non-negative least squares from a handful of short
runs. On an elastic HPC pool there are no parameter servers: every node is a worker in an
all-reduce (BFTrainer's Horovod runs), which is the p = w reading of that model. θ1·w/p is then a
constant and θ4·p folds into the term linear in w, so the time per step is
θ0·M/w + θ1 + θ2'·w, and the time per *sample* (what a samples/s measurement gives) is

    1 / O(n) = a / n + b + c·n        a, b, c >= 0, n = nodes

a: compute seconds per sample on one node (perfectly divided among nodes);
b: a fixed per-sample overhead (synchronisation that does not grow with n);
c: per-sample cost growing with the node count (all-reduce / straggler cost).

The fit minimises the relative error of the predicted time per sample (each row divided by the
measured time), so a 5 % error weighs the same at 1 node as at 64; `scipy.optimize.nnls` solves
it exactly. The fitted curve is returned as a planner.workload.trainers.Curve at the requested node
counts, usable wherever the planner takes a curve (instance JSON `"curve"`, scaling tables).
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from planner.errors import InputError
from planner.workload.trainers import Curve

PARAMS = ("a_s_per_sample", "b_s_per_sample", "c_s_per_sample_per_node")
MAX_POINTS = 10_000
MAX_NODES = 10**6


@dataclass(frozen=True)
class SpeedModel:
    """O(n) = 1 / (a/n + b + c·n) samples/s (Optimus' synchronous model, all-reduce form)."""

    a: float
    b: float
    c: float

    def samples_per_s(self, nodes) -> np.ndarray:
        n = np.asarray(nodes, dtype=float)
        with np.errstate(divide="ignore"):
            t = self.a / n + self.b + self.c * n
        out = np.where(n > 0, 1.0 / t, 0.0)
        return out

    def params(self) -> dict:
        return dict(zip(PARAMS, (self.a, self.b, self.c)))

    def curve(self, nodes) -> Curve:
        pts = sorted({0, *(int(n) for n in nodes)})
        return Curve(tuple(pts), tuple(float(v) for v in self.samples_per_s(pts)))


def fit(nodes, samples_per_s, file: str | None = None) -> SpeedModel:
    """NNLS fit of (a, b, c) to measured (nodes, samples/s) points with nodes > 0."""
    from scipy.optimize import nnls  # lazy: heavy (scipy: ~1 s of every `planner` start-up otherwise)

    n = np.asarray(nodes, dtype=float)
    y = np.asarray(samples_per_s, dtype=float)
    keep = n > 0
    n, y = n[keep], y[keep]
    if len(np.unique(n)) < 3:
        raise InputError("need measurements at 3 or more distinct node counts > 0 to fit 3 parameters",
                         file=file, field="nodes")
    t = 1.0 / y                                   # seconds per sample, measured
    design = np.column_stack([1.0 / n, np.ones_like(n), n]) / t[:, None]
    coef, _ = nnls(design, np.ones_like(n))       # minimise sum((pred_t - t) / t)^2
    return SpeedModel(*(float(v) for v in coef))


def read_points(path: str | Path) -> tuple[list[int], list[float]]:
    """(nodes, samples/s) from a CSV `nodes,samples_per_s` (or samples_per_sec) or a JSON object
    {"nodes": [...], "samples_per_s": [...]}; one-line InputError naming file, line and field."""
    path = Path(path)
    try:
        if path.stat().st_size > 10 * 2**20:
            raise InputError("file larger than 10 MiB; a speed curve is a handful of points", file=str(path))
        text = path.read_text(encoding="utf-8-sig")
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", file=str(path)) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", file=str(path)) from None
    if text.lstrip().startswith("{"):
        return _points_json(text, path)
    return _points_csv(text, path)


def _check(n_raw, v_raw, where: dict) -> tuple[int, float]:
    try:
        n = float(n_raw)
        v = float(v_raw)
    except (TypeError, ValueError):
        bad = "nodes" if not _is_num(n_raw) else "samples_per_s"
        raise InputError(f"not a number: {str(n_raw if bad == 'nodes' else v_raw)[:40]!r}",
                         field=bad, **where) from None
    if not math.isfinite(n) or n != int(n) or not 0 <= n <= MAX_NODES:
        raise InputError(f"nodes must be a whole number in 0..{MAX_NODES}", field="nodes", **where)
    if not math.isfinite(v) or v < 0 or (n > 0 and v == 0):
        raise InputError("samples_per_s must be finite, > 0 (0 only at 0 nodes)", field="samples_per_s", **where)
    return int(n), v


def _is_num(x) -> bool:
    try:
        float(x)
        return True
    except (TypeError, ValueError):
        return False


def _points_csv(text: str, path: Path):
    rows = csv.reader(text.splitlines())
    header = [h.strip().lower() for h in next(rows, [])]
    speed_col = next((h for h in ("samples_per_s", "samples_per_sec") if h in header), None)
    if "nodes" not in header or speed_col is None:
        raise InputError("header needs columns nodes and samples_per_s", file=str(path), line=1,
                         field="nodes" if "nodes" not in header else "samples_per_s")
    i_n, i_v = header.index("nodes"), header.index(speed_col)
    nodes, speeds = [], []
    for line, row in enumerate(rows, start=2):
        if not row or not "".join(row).strip():
            continue
        if len(nodes) >= MAX_POINTS:
            raise InputError(f"more than {MAX_POINTS} points", file=str(path), line=line)
        get = (lambda i: row[i].strip() if i < len(row) else "")
        n, v = _check(get(i_n), get(i_v), {"file": str(path), "line": line})
        nodes.append(n)
        speeds.append(v)
    return _dedupe(nodes, speeds, path)


def _points_json(text: str, path: Path):
    try:
        doc = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    except (ValueError, RecursionError) as e:
        raise InputError(f"not valid JSON ({str(e)[:60]})", file=str(path)) from None
    if not isinstance(doc, dict):
        raise InputError("expected an object with nodes and samples_per_s", file=str(path))
    doc = doc.get("curve", doc) if isinstance(doc.get("curve"), dict) else doc
    ns, vs = doc.get("nodes"), doc.get("samples_per_s")
    if not isinstance(ns, list) or not isinstance(vs, list) or len(ns) != len(vs):
        raise InputError("needs lists nodes and samples_per_s of one length", file=str(path), field="nodes")
    if len(ns) > MAX_POINTS:
        raise InputError(f"more than {MAX_POINTS} points", file=str(path), field="nodes")
    pairs = [_check(n, v, {"file": str(path)}) for n, v in zip(ns, vs)]
    return _dedupe([p[0] for p in pairs], [p[1] for p in pairs], path)


def _dedupe(nodes, speeds, path):
    """Repeated node counts are averaged (repeated measurements of one configuration)."""
    acc: dict[int, list[float]] = {}
    for n, v in zip(nodes, speeds):
        acc.setdefault(n, []).append(v)
    if not acc:
        raise InputError("no measured points", file=str(path))
    ns = sorted(acc)
    return ns, [float(np.mean(acc[n])) for n in ns]


def fit_file(path: str | Path, at_nodes=None) -> dict:
    """Fit the file's points; report the parameters, the fit's error and the curve at `at_nodes`
    (default: the measured counts and every power of two up to twice the largest)."""
    nodes, speeds = read_points(path)
    model = fit(nodes, speeds, file=str(path))
    if at_nodes is None:
        top = max(nodes)
        at_nodes = sorted({*nodes, *(2**k for k in range(0, int(math.log2(max(top, 1))) + 2))})
    at_nodes = sorted({int(n) for n in at_nodes if int(n) >= 0})
    measured = np.asarray(speeds, dtype=float)
    pred = model.samples_per_s(nodes)
    mask = np.asarray(nodes) > 0
    rel = np.abs(pred[mask] - measured[mask]) / measured[mask]
    curve = model.curve(at_nodes)
    return {
        "model": "optimus-sync-allreduce: samples_per_s(n) = 1 / (a/n + b + c*n)",
        "params": model.params(),
        "points": len(nodes),
        "max_rel_error": float(rel.max()) if rel.size else 0.0,
        "mean_rel_error": float(rel.mean()) if rel.size else 0.0,
        "peak_nodes": _peak(model),
        "curve": {"nodes": list(curve.nodes), "samples_per_s": list(curve.samples_per_s)},
    }


def _peak(model: SpeedModel) -> float | None:
    """Node count of the highest speed (sqrt(a/c)); None when speed keeps rising (c = 0)."""
    return math.sqrt(model.a / model.c) if model.c > 0 else None
