"""Allocation instances: one decision's pool and Trainers as JSON, and random ones.

JSON format (see examples/instance.json and docs/allocators.md):

    {
      "pool": [0, 1, 2, 3],            # idle node ids (ints), or "pool_nodes": 4 for ids 0..3
      "tfwd_s": 120,                   # optional defaults for the allocator options
      "objective": "throughput",
      "trainers": [
        {"id": "a", "model": "shufflenet",          # a shipped curve (planner.trainers)...
         "curve": {"nodes": [0, 1, 2], "samples_per_s": [0, 10, 18]},   # ...or its own points
         "nmin": 1, "nmax": 64, "current": [0, 1],  # node ids it holds now
         "rup_s": 18, "rdw_s": 12, "remaining_samples": 1.3e8, "priority": 1,
         "submit_s": 0, "running_s": 0}
      ]
    }

Only "id" and a curve ("model" or "curve") are required per Trainer; the rest default as in
planner.allocators.base.TrainerState. Bad input raises InputError naming the file and field.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from planner.allocators.base import OBJECTIVES, AllocState, TrainerState
from planner.errors import InputError
from planner.trainers import Curve, imagenet_curves

OPTION_KEYS = ("tfwd_s", "objective", "time_limit_s", "mip_gap", "pow2", "pj_max")


def _curve_by_name(name: str) -> Curve | None:
    curves = imagenet_curves()
    for k, c in curves.items():
        if k.lower() == str(name).lower():
            return c
    return None


def parse_instance(data, source: str = "<instance>") -> tuple[AllocState, dict]:
    """(AllocState, option defaults found in the file) from parsed JSON."""

    def bad(msg, fld):
        raise InputError(msg, file=source, field=fld)

    if not isinstance(data, dict):
        bad("the instance must be a JSON object", "(top level)")
    if "pool" in data:
        pool = data["pool"]
        if not isinstance(pool, list) or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0
                                                 for x in pool):
            bad("must be a list of node ids (integers >= 0)", "pool")
        if len(set(pool)) != len(pool):
            bad("node ids must be distinct", "pool")
    elif "pool_nodes" in data:
        n = data["pool_nodes"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            bad("must be an integer >= 0", "pool_nodes")
        pool = list(range(n))
    else:
        bad("missing: give 'pool' (node ids) or 'pool_nodes' (a count)", "pool")
    trainers_raw = data.get("trainers")
    if not isinstance(trainers_raw, list):
        bad("must be a list of Trainer objects", "trainers")
    trainers = []
    seen_ids: set[str] = set()
    held_by: dict[int, str] = {}
    for i, tr in enumerate(trainers_raw):
        where = f"trainers[{i}]"
        if not isinstance(tr, dict):
            bad("must be an object", where)
        tid = tr.get("id")
        if not isinstance(tid, (str, int)) or isinstance(tid, bool) or str(tid) == "":
            bad("missing or not a string", f"{where}.id")
        tid = str(tid)
        if tid in seen_ids:
            bad(f"duplicate Trainer id {tid!r}", f"{where}.id")
        seen_ids.add(tid)
        batches, batch_now = _batches(tr, where, bad)
        if batches:  # the curve is the current batch size's; "model" only names it
            curve = dict(batches)[batch_now]
        elif "curve" in tr:
            c = tr["curve"]
            try:
                curve = Curve(tuple(int(x) for x in c["nodes"]), tuple(float(x) for x in c["samples_per_s"]))
            except (KeyError, TypeError, ValueError) as e:
                bad(f"needs 'nodes' (ascending ints) and 'samples_per_s' of the same length ({e})",
                    f"{where}.curve")
            if any(not math.isfinite(v) or v < 0 for v in curve.samples_per_s):
                bad("throughputs must be finite and >= 0", f"{where}.curve.samples_per_s")
        elif "model" in tr:
            curve = _curve_by_name(tr["model"])
            if curve is None:
                bad(f"unknown model {tr['model']!r}; shipped: {', '.join(imagenet_curves())}", f"{where}.model")
        else:
            bad("give 'model' (a shipped curve) or 'curve'", f"{where}.curve")

        def num(key, default, kind=float, lo=None):
            v = tr.get(key, default)
            if v is None and default is None:
                return None
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                bad("must be a number", f"{where}.{key}")
            if kind is int and float(v) != int(v):
                bad("must be an integer", f"{where}.{key}")
            v = kind(v)
            if kind is float and math.isnan(v):
                bad("must be a number", f"{where}.{key}")
            if lo is not None and v < lo:
                bad(f"must be >= {lo}", f"{where}.{key}")
            return v

        nmin = num("nmin", 1, int, 1)
        nmax = num("nmax", 64, int, 1)
        if nmax < nmin:
            bad(f"nmax {nmax} is below nmin {nmin}", f"{where}.nmax")
        cur = tr.get("current", [])
        if not isinstance(cur, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in cur):
            bad("must be a list of node ids", f"{where}.current")
        for x in cur:
            if x in held_by:
                bad(f"node {x} is also held by {held_by[x]!r}", f"{where}.current")
            held_by[x] = tid
        # null (JSON has no infinity) or absent: unbounded
        rem = math.inf if tr.get("remaining_samples") is None else num("remaining_samples", None, float, 0.0)
        trainers.append(TrainerState(
            id=tid, nmin=nmin, nmax=nmax, curve=curve, current=tuple(sorted(cur)),
            rup_s=num("rup_s", 18.0, float, 0.0), rdw_s=num("rdw_s", 12.0, float, 0.0),
            remaining_samples=rem,
            priority=num("priority", 1.0, float, 0.0), submit_s=num("submit_s", 0.0),
            model=str(tr.get("model", "")), running_s=num("running_s", 0.0, float, 0.0),
            batches=batches, batch_size=batch_now,
        ))
    opts = {}
    for key in OPTION_KEYS:
        if key in data:
            opts[key] = data[key]
    if "objective" in opts and opts["objective"] not in OBJECTIVES:
        bad(f"unknown objective {opts['objective']!r}; choose one of {', '.join(OBJECTIVES)}", "objective")
    for key in ("tfwd_s", "time_limit_s", "mip_gap"):
        if key in opts and (isinstance(opts[key], bool) or not isinstance(opts[key], (int, float))
                            or opts[key] < 0):
            bad("must be a number >= 0", key)
    if "pow2" in opts and not isinstance(opts["pow2"], bool):
        bad("must be true or false", "pow2")
    if "pj_max" in opts and opts["pj_max"] is not None and (
            isinstance(opts["pj_max"], bool) or not isinstance(opts["pj_max"], int) or opts["pj_max"] < 0):
        bad("must be an integer >= 0 or null", "pj_max")
    now = data.get("now_s", 0.0)
    if isinstance(now, bool) or not isinstance(now, (int, float)):
        bad("must be a number", "now_s")
    return AllocState(pool=tuple(pool), trainers=tuple(trainers), now_s=float(now)), opts


def load_instance(path: str | Path) -> tuple[AllocState, dict]:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", file=str(path)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg} (column {e.colno})", file=str(path), line=e.lineno) from None
    return parse_instance(data, str(path))


def instance_to_json(state: AllocState, **options) -> dict:
    out: dict = {"pool": [int(x) for x in state.pool]}
    out.update({k: v for k, v in options.items() if k in OPTION_KEYS and v is not None})
    if state.now_s:
        out["now_s"] = state.now_s
    trs = []
    for t in state.trainers:
        d = {"id": t.id}
        named = _curve_by_name(t.model) if t.model else None
        if named is not None and named == t.curve:
            d["model"] = t.model
        else:
            if t.model:
                d["model"] = t.model
            d["curve"] = {"nodes": list(t.curve.nodes), "samples_per_s": list(t.curve.samples_per_s)}
            if named is not None:  # model named but a curve of its own: keep the curve
                d.pop("model")
        d.update(nmin=t.nmin, nmax=t.nmax, current=list(t.current), rup_s=t.rup_s, rdw_s=t.rdw_s)
        if math.isfinite(t.remaining_samples):
            d["remaining_samples"] = t.remaining_samples
        if t.priority != 1.0:
            d["priority"] = t.priority
        d["submit_s"] = t.submit_s
        if t.running_s:
            d["running_s"] = t.running_s
        trs.append(d)
    out["trainers"] = trs
    return out


def save_instance(path: str | Path, state: AllocState, **options) -> None:
    Path(path).write_text(json.dumps(instance_to_json(state, **options), indent=2) + "\n")


# ---------------------------------------------------------------------------
# random instances


def fig5_instance(jobs: int, pool: int, seed: int, model: str = "shufflenet", nmin: int = 1, nmax: int = 64,
                  rup_s: float = 18.0, rdw_s: float = 12.0) -> AllocState:
    """BFTrainer's Fig. 5 setting: `jobs` identical Trainers on `pool` idle nodes, a random
    current map. Each Trainer holds, with probability 3/4, a size drawn uniformly from
    Nmin..Nmax (cut to what is left) of randomly chosen pool nodes, else nothing (a new Trainer).
    """
    rng = np.random.default_rng(seed)
    curve = _curve_by_name(model)
    nodes = rng.permutation(pool)
    pos = 0
    ts = []
    for j in range(jobs):
        c = 0
        if rng.random() < 0.75:
            c = min(int(rng.integers(nmin, nmax + 1)), pool - pos)
            if c < nmin:
                c = 0
        cur = tuple(sorted(int(x) for x in nodes[pos:pos + c]))
        pos += c
        ts.append(TrainerState(id=f"t{j:02d}", nmin=nmin, nmax=nmax, curve=curve, current=cur, rup_s=rup_s,
                               rdw_s=rdw_s, submit_s=float(j), model=model,
                               running_s=float(rng.integers(0, 36000)) if c else 0.0))
    return AllocState(pool=tuple(range(pool)), trainers=tuple(ts))


def random_instance(seed: int, max_jobs: int = 5, max_pool: int = 16, max_nmax: int = 10,
                    edge: str | None = None) -> AllocState:
    """A small varied instance for tests: mixed shipped curves, random Nmin/Nmax, Rup/Rdw,
    priorities, remaining work, and current maps that may include nodes no longer in the pool
    (preempted). `edge` forces one of the edge cases: "empty-pool", "more-trainers",
    "nmin-above-pool", "flat-curves", "zero-curves", "preempted".
    """
    rng = np.random.default_rng(seed)
    curves = list(imagenet_curves().values())
    J = int(rng.integers(1, max_jobs + 1))
    P = int(rng.integers(0, max_pool + 1))
    if edge == "empty-pool":
        P = 0
    if edge == "more-trainers":
        P = int(rng.integers(0, 4))
        J = P + int(rng.integers(1, 4))
    universe = max(P + 6, 8)
    pool = sorted(int(x) for x in rng.choice(universe, size=P, replace=False))
    free_ids = [int(x) for x in rng.permutation(universe)]
    ts = []
    for j in range(J):
        nmin = int(rng.integers(1, 4))
        if edge == "nmin-above-pool":
            nmin = P + 1 + int(rng.integers(0, 3))
        nmax = nmin + int(rng.integers(0, max_nmax))
        curve = curves[int(rng.integers(len(curves)))]
        if rng.random() < 0.3:  # a curve of its own, possibly non-concave
            pts = sorted(set(int(x) for x in rng.integers(1, 12, size=3)))
            vals = np.cumsum(rng.uniform(0, 1000, size=len(pts)))
            curve = Curve(tuple(pts), tuple(float(v) for v in vals))
        if edge == "flat-curves":
            v = float(rng.uniform(100, 1000))
            curve = Curve((0, 1, 64), (0.0, v, v))
        if edge == "zero-curves":
            curve = Curve((0, 1), (0.0, 0.0))
        c = int(rng.integers(0, nmax + 3)) if rng.random() < 0.7 else 0
        if edge == "preempted":
            c = int(rng.integers(1, nmax + 4))
        cur = tuple(sorted(free_ids[:c]))
        free_ids = free_ids[c:]
        ts.append(TrainerState(
            id=f"t{j}", nmin=nmin, nmax=nmax, curve=curve, current=cur,
            rup_s=float(rng.choice([0.0, 1.0, 18.0, 60.0])), rdw_s=float(rng.choice([0.0, 1.0, 12.0, 40.0])),
            remaining_samples=float(rng.choice([math.inf, rng.uniform(1e4, 1e8)])),
            priority=float(rng.choice([1.0, 2.0, 0.5])), submit_s=float(rng.integers(0, 5)),
            running_s=float(rng.integers(0, 1000)) if c else 0.0,
        ))
    return AllocState(pool=tuple(pool), trainers=tuple(ts))


MAX_BATCH_SIZES = 64


def _batches(tr: dict, where: str, bad) -> tuple[tuple, int | None]:
    """IBM's batch-size choices of one Trainer: "batch_sizes": [{"batch_size": B, "nodes": [...],
    "samples_per_s": [...]}, ...] and optionally "batch_size" (the one it runs now; default the
    first listed). Returns (((B, Curve), ...), current B), or ((), None) when absent."""
    raw = tr.get("batch_sizes")
    if raw is None:
        return (), None
    if not isinstance(raw, list) or not raw or len(raw) > MAX_BATCH_SIZES:
        bad(f"must be a list of 1..{MAX_BATCH_SIZES} objects", f"{where}.batch_sizes")
    out = []
    for i, b in enumerate(raw):
        w = f"{where}.batch_sizes[{i}]"
        if not isinstance(b, dict):
            bad("must be an object with batch_size, nodes, samples_per_s", w)
        size = b.get("batch_size")
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 2**31:
            bad("must be a whole number >= 1", f"{w}.batch_size")
        try:
            curve = Curve(tuple(int(x) for x in b["nodes"]), tuple(float(x) for x in b["samples_per_s"]))
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            bad(f"needs 'nodes' (ascending ints) and 'samples_per_s' of the same length ({e})", w)
        if any(not math.isfinite(v) or v < 0 for v in curve.samples_per_s):
            bad("throughputs must be finite and >= 0", f"{w}.samples_per_s")
        out.append((size, curve))
    sizes = [s for s, _ in out]
    if len(set(sizes)) != len(sizes):
        bad("batch sizes must be distinct", f"{where}.batch_sizes")
    now = tr.get("batch_size", sizes[0])
    if now not in sizes or isinstance(now, bool):
        bad(f"must be one of the listed batch sizes {sizes}", f"{where}.batch_size")
    return tuple(out), int(now)
