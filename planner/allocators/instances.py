"""Allocation instances: one decision's pool and Trainers as JSON, and random ones.

JSON format (see examples/instance.json and docs/allocators.md):

    {
      "pool": [0, 1, 2, 3],            # idle node ids (ints), or "pool_nodes": 4 for ids 0..3
      "tfwd_s": 120,                   # optional defaults for the allocator options
      "objective": "throughput",
      "trainers": [
        {"id": "a", "model": "shufflenet",          # a shipped curve (planner.workload.trainers)...
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
from planner.scenario.defaults import DEFAULT_RDW_S, DEFAULT_RUP_S
from planner.scenario.schema import FIELD
from planner.workload.trainers import Curve, imagenet_curves

OPTION_KEYS = ("tfwd_s", "objective", "time_limit_s", "mip_gap", "pow2", "pj_max")

# Bounds on every number of an instance (beyond them it is a broken or hostile file, and the
# allocators' arrays or arithmetic would blow up): one-line InputError naming the field.
MAX_INSTANCE_BYTES = 64 * 1024**2
MAX_POOL_NODES = 1_000_000  # = planner.logs.limits.MAX_MACHINE_NODES (the largest machine)
MAX_NODE_ID = 2**31 - 1
MAX_TRAINERS = 10_000
MAX_CURVE_POINTS = 10_000
MAX_ID_CHARS = 1024
MAX_SAMPLES_PER_S = 1e12
MAX_PRIORITY = 1e6
MAX_DURATION_S = 1e7  # rup, rdw, tfwd: at most ~4 months
MAX_REMAINING_SAMPLES = 1e18
MAX_ABS_TIME_S = 1e11  # submit, running, now: within ~3000 years of 1970
TOP_KEYS = ("pool", "pool_nodes", "trainers", "now_s") + OPTION_KEYS
TRAINER_KEYS = ("id", "model", "curve", "nmin", "nmax", "current", "rup_s", "rdw_s", "remaining_samples",
                "priority", "submit_s", "running_s", "batch_sizes", "batch_size")
_DEFAULTS = {"nmin": 1, "nmax": 64, "rup_s": DEFAULT_RUP_S, "rdw_s": DEFAULT_RDW_S, "priority": 1.0, "submit_s": 0.0,
             "running_s": 0.0}


def _curve_by_name(name: str) -> Curve | None:
    curves = imagenet_curves()
    for k, c in curves.items():
        if k.lower() == str(name).lower():
            return c
    return None


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def number(v, fld: str, source: str | None, lo: float, hi: float, *, integer: bool = False):
    """v as a float (or int), checked: a number (not bool, not text), finite, whole if integer,
    within lo..hi; else InputError naming the field."""
    if not _is_num(v):
        raise InputError(f"must be {'an integer' if integer else 'a number'}, got {str(v)[:40]!r}",
                         file=source, field=fld)
    if isinstance(v, float) and not math.isfinite(v):
        raise InputError("must be a finite number", file=source, field=fld)
    if integer and isinstance(v, float) and v != int(v):
        raise InputError(f"must be an integer, got {v:g}", file=source, field=fld)
    if not (lo <= v <= hi):
        got = f"{v:.6g}" if isinstance(v, float) else (str(v) if len(str(v)) <= 20 else f"a {len(str(v))}-digit number")
        raise InputError(f"must be between {lo:g} and {hi:g}, got {got}", file=source, field=fld)
    return int(v) if integer else float(v)


def _node_ids(v, fld: str, source: str, max_len: int) -> list[int]:
    if not isinstance(v, list):
        raise InputError("must be a list of node ids (integers >= 0)", file=source, field=fld)
    if len(v) > max_len:
        raise InputError(f"more than {max_len:,} node ids", file=source, field=fld)
    if not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_NODE_ID for x in v):
        raise InputError(f"must be a list of node ids (integers 0..{MAX_NODE_ID})", file=source, field=fld)
    return v


def _parse_curve(c, fld: str, source: str | None) -> Curve:
    if not isinstance(c, dict) or not isinstance(c.get("nodes"), list) or not isinstance(c.get("samples_per_s"), list):
        raise InputError("needs 'nodes' (ascending ints) and 'samples_per_s' lists", file=source, field=fld)
    if len(c["nodes"]) > MAX_CURVE_POINTS:
        raise InputError(f"more than {MAX_CURVE_POINTS:,} points", file=source, field=fld)
    nodes = tuple(number(x, f"{fld}.nodes", source, 0, MAX_POOL_NODES, integer=True) for x in c["nodes"])
    vals = tuple(number(x, f"{fld}.samples_per_s", source, 0.0, MAX_SAMPLES_PER_S) for x in c["samples_per_s"])
    try:
        return Curve(nodes, vals)
    except ValueError as e:
        raise InputError(f"needs 'nodes' (ascending ints) and 'samples_per_s' of the same length ({e})",
                         file=source, field=fld) from None


def _parse_trainer(tr, i: int, source: str, held_by: dict) -> TrainerState:
    where = f"trainers[{i}]"
    if not isinstance(tr, dict):
        raise InputError("must be an object", file=source, field=where)
    tid = tr.get("id")
    if not isinstance(tid, (str, int)) or isinstance(tid, bool) or str(tid) == "" or len(str(tid)) > MAX_ID_CHARS:
        raise InputError(f"missing, or not a string of 1..{MAX_ID_CHARS} characters", file=source, field=f"{where}.id")
    tid = str(tid)
    _no_unknown_keys(tr, TRAINER_KEYS, where, source)
    model = tr.get("model", "")
    if not isinstance(model, str) or len(model) > MAX_ID_CHARS:
        raise InputError("must be the name of a shipped curve", file=source, field=f"{where}.model")
    batches, batch_now = _batches(tr, where, source)
    if batches:  # the curve is the current batch size's; "model" only names it
        curve = dict(batches)[batch_now]
    elif "curve" in tr:
        curve = _parse_curve(tr["curve"], f"{where}.curve", source)
    elif model:
        curve = _curve_by_name(model)
        if curve is None:
            raise InputError(f"unknown model {model[:60]!r}; shipped: {', '.join(imagenet_curves())}",
                             file=source, field=f"{where}.model")
    else:
        raise InputError("give 'model' (a shipped curve) or 'curve'", file=source, field=f"{where}.curve")

    def num(key, lo, hi, integer=False):
        return number(tr.get(key, _DEFAULTS[key]), f"{where}.{key}", source, lo, hi, integer=integer)

    nmin = num("nmin", 1, MAX_POOL_NODES, True)
    nmax = num("nmax", 1, MAX_POOL_NODES, True)
    if nmax < nmin:
        raise InputError(f"nmax {nmax} is below nmin {nmin}", file=source, field=f"{where}.nmax")
    cur = _node_ids(tr.get("current", []), f"{where}.current", source, MAX_POOL_NODES)
    for x in cur:
        if x in held_by:
            raise InputError(f"node {x} is also held by {held_by[x]!r}", file=source, field=f"{where}.current")
        held_by[x] = tid
    # null (JSON has no infinity) or absent: unbounded
    rem = tr.get("remaining_samples")
    rem = math.inf if rem is None else number(rem, f"{where}.remaining_samples", source, 0.0, MAX_REMAINING_SAMPLES)
    return TrainerState(
        id=tid, nmin=nmin, nmax=nmax, curve=curve, current=tuple(sorted(cur)),
        rup_s=num("rup_s", 0.0, MAX_DURATION_S), rdw_s=num("rdw_s", 0.0, MAX_DURATION_S),
        remaining_samples=rem, priority=num("priority", 0.0, MAX_PRIORITY),
        submit_s=num("submit_s", -MAX_ABS_TIME_S, MAX_ABS_TIME_S), model=model,
        running_s=num("running_s", 0.0, MAX_ABS_TIME_S), batches=batches, batch_size=batch_now)


def _no_unknown_keys(obj: dict, known: tuple, where: str | None, source: str) -> None:
    """A misspelt key ("nmx") must not silently fall back to a default: InputError naming it."""
    extra = [k for k in obj if k not in known]
    if extra:
        key = str(extra[0])[:60]
        raise InputError(f"unknown key {key!r}; known: {', '.join(known)}", file=source,
                         field=f"{where}.{key}" if where else key)


def validate_options(opts: dict, source: str | None = None) -> dict:
    """Allocator options (from a file or the command line) checked: numbers finite and bounded,
    objective known, pow2 a bool; InputError naming the field. Returns opts."""
    if "objective" in opts and (not isinstance(opts["objective"], str) or opts["objective"] not in OBJECTIVES):
        raise InputError(f"unknown objective {str(opts['objective'])[:40]!r}; choose one of {', '.join(OBJECTIVES)}",
                         file=source, field="objective")
    for key, hi in (("tfwd_s", MAX_DURATION_S), ("time_limit_s", MAX_DURATION_S), ("mip_gap", 1.0)):
        if key in opts:
            opts[key] = number(opts[key], key, source, 0.0, hi)
    if "pow2" in opts and not isinstance(opts["pow2"], bool):
        raise InputError("must be true or false", file=source, field="pow2")
    if opts.get("pj_max") is not None:
        opts["pj_max"] = number(opts["pj_max"], "pj_max", source, 0, MAX_TRAINERS, integer=True)

    for key in ("horizon_steps", "step_min"):
        if key in opts:
            f = FIELD[key]
            opts[key] = number(opts[key], key, source, f.lo, f.hi, integer=f.kind is int)
    return opts


def parse_instance(data, source: str = "<instance>") -> tuple[AllocState, dict]:
    """(AllocState, option defaults found in the file) from parsed JSON; every field checked
    (type, finite, within the bounds above), InputError naming the first bad one."""

    def bad(msg, fld):
        raise InputError(msg, file=source, field=fld)

    if not isinstance(data, dict):
        bad("the instance must be a JSON object", "(top level)")
    _no_unknown_keys(data, TOP_KEYS, None, source)
    if "pool" in data:
        pool = _node_ids(data["pool"], "pool", source, MAX_POOL_NODES)
        if len(set(pool)) != len(pool):
            bad("node ids must be distinct", "pool")
    elif "pool_nodes" in data:
        pool = list(range(number(data["pool_nodes"], "pool_nodes", source, 0, MAX_POOL_NODES, integer=True)))
    else:
        bad("missing: give 'pool' (node ids) or 'pool_nodes' (a count)", "pool")
    trainers_raw = data.get("trainers")
    if not isinstance(trainers_raw, list):
        bad("must be a list of Trainer objects", "trainers")
    if len(trainers_raw) > MAX_TRAINERS:
        bad(f"more than {MAX_TRAINERS:,} Trainers", "trainers")
    trainers = []
    seen_ids: set[str] = set()
    held_by: dict[int, str] = {}
    for i, tr in enumerate(trainers_raw):
        t = _parse_trainer(tr, i, source, held_by)
        if t.id in seen_ids:
            bad(f"duplicate Trainer id {t.id[:60]!r}", f"trainers[{i}].id")
        seen_ids.add(t.id)
        trainers.append(t)
    opts = validate_options({key: data[key] for key in OPTION_KEYS if key in data}, source)
    now = number(data.get("now_s", 0.0), "now_s", source, -MAX_ABS_TIME_S, MAX_ABS_TIME_S)
    return AllocState(pool=tuple(pool), trainers=tuple(trainers), now_s=float(now)), opts


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def load_instance(path: str | Path) -> tuple[AllocState, dict]:
    """Read and check an instance file: bounded size, UTF-8, strict JSON (no NaN/Infinity, no
    numbers beyond float range, bounded nesting); InputError with one line otherwise."""
    path = Path(path)
    try:
        if path.exists() and not path.is_file():  # a FIFO or a device would block or never end
            raise InputError("not a regular file", file=str(path))
        if path.is_file() and path.stat().st_size > MAX_INSTANCE_BYTES:
            raise InputError(f"larger than {MAX_INSTANCE_BYTES // 1024**2} MiB: not an instance", file=str(path))
        with open(path, "rb") as f:
            raw = f.read(MAX_INSTANCE_BYTES + 1)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", file=str(path)) from None
    if len(raw) > MAX_INSTANCE_BYTES:
        raise InputError(f"larger than {MAX_INSTANCE_BYTES // 1024**2} MiB: not an instance", file=str(path))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte 0x{raw[e.start]:02x})", file=str(path), line=line) from None
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg} (column {e.colno})", file=str(path), line=e.lineno) from None
    except RecursionError:
        raise InputError("not an instance: JSON nested too deeply", file=str(path)) from None
    except ValueError as e:  # NaN/Infinity, 1e999, an integer of thousands of digits
        raise InputError(f"not valid JSON: {str(e)[:120]}", file=str(path)) from None
    return parse_instance(data, str(path))


def _finite_float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"number {text[:40]} is out of range")
    return v


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
                  rup_s: float = DEFAULT_RUP_S, rdw_s: float = DEFAULT_RDW_S) -> AllocState:
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
            pts = sorted({int(x) for x in rng.integers(1, 12, size=3)})
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


def _at(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _batches(tr: dict, where: str, source: str | None) -> tuple[tuple, int | None]:
    """IBM's batch-size choices of one Trainer: "batch_sizes": [{"batch_size": B, "nodes": [...],
    "samples_per_s": [...]}, ...] and optionally "batch_size" (the one it runs now; default the
    first listed). Returns (((B, Curve), ...), current B), or ((), None) when absent. Also used
    for the Trainer CSV's batch_sizes column (planner.workload.generators, where = "")."""
    raw = tr.get("batch_sizes")
    if raw is None:
        return (), None
    if not isinstance(raw, list) or not raw or len(raw) > MAX_BATCH_SIZES:
        raise InputError(f"must be a list of 1..{MAX_BATCH_SIZES} objects", file=source,
                         field=_at(where, "batch_sizes"))
    out = []
    for i, b in enumerate(raw):
        w = _at(where, f"batch_sizes[{i}]")
        if not isinstance(b, dict):
            raise InputError("must be an object with batch_size, nodes, samples_per_s", file=source, field=w)
        size = number(b.get("batch_size"), f"{w}.batch_size", source, 1, 2**31, integer=True)
        out.append((size, _parse_curve(b, w, source)))
    sizes = [s for s, _ in out]
    if len(set(sizes)) != len(sizes):
        raise InputError("batch sizes must be distinct", file=source, field=_at(where, "batch_sizes"))
    now = tr.get("batch_size", sizes[0])
    if now not in sizes or isinstance(now, bool):
        raise InputError(f"must be one of the listed batch sizes {sizes}", file=source, field=_at(where, "batch_size"))
    return tuple(out), int(now)
