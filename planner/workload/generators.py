"""Workloads: the stream of Trainers a replay runs.

`make_workload(name_or_csv, seed=0, **kw) -> list[TrainerSpec]`, sorted by submit time.
Submit times are seconds since the window start (0 = the first instant of the window).

Built-in workloads (all curves are the measured Summit ImageNet curves of
`planner.workload.trainers.imagenet_curves()`):

- `hpo`: BFTrainer's HPO scenario: `count` (1000) ShuffleNet trials of 1.3e8 samples each
  (100 ImageNet epochs), Nmin 1, Nmax 64, Rup 18 s, Rdw 12 s, one every `interarrival_s` (36 s)
  from the window start.
- `diverse`: Poisson arrivals (mean gap `interarrival_s`, 60 s) cycling the 7 ImageNet
  models in file order; each Trainer runs `epochs` (100) ImageNet epochs =
  epochs * 1,281,167 samples (1.28e8 for 100 epochs); Nmin 1, Nmax 64, Rup 18 s, Rdw 12 s.
- `philly`: arrivals and sizes from Microsoft's Philly log (planner/datasets/philly_jobs.csv.gz):
  the `count` (500) first jobs submitted at or after `since` (2017-10-02 00:00) in time
  order; arrival = (timestamp - first timestamp) * `time_scale` (1.0); model: the 7 ImageNet
  models drawn uniformly with `seed`; requested nodes r = ceil(num_gpus / 6) (6 V100 per
  Summit node); Nmin 1, Nmax = min(64, r * `elastic_factor` (4)); work = duration *
  O_model(num_gpus / 6) samples, i.e. what the job did in the log at its GPU count on the
  model's measured curve (linear through 0 below one node), times `work_scale` (1.0).
- a CSV file path: one Trainer per row, header required. Columns: `id` (unique text),
  `model` (one of the 7 ImageNet model names, case-insensitive), `submit_s` (>= 0),
  `work_samples` (> 0); optional `nmin` (1), `nmax` (64), `rup_s` (18), `rdw_s` (12),
  `priority` (1.0), `eta_node_h` (empty = derived). Bad rows raise InputError naming
  the file, line and field.

Common knobs: `count` (number of Trainers), `rup_s`/`rdw_s` (override the costs of every
Trainer), `interarrival_s`.

`perturb_workload(specs, eta_noise, bug_share, kill_share, seed)` marks Trainers for ModelArts'
robustness study (noisy ETAs, bug jobs that hang, jobs killed by their users); the simulator
(planner.replay.runs) applies the marks.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import os
import random
import stat
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from planner.allocators import instances
from planner.allocators.instances import _batches
from planner.errors import InputError
from planner.paths import PHILLY_LOG
from planner.scenario.defaults import DEFAULT_RDW_S, DEFAULT_RUP_S
from planner.workload.trainers import Curve, TrainerSpec, imagenet_curves

IMAGENET_EPOCH_SAMPLES = 1_281_167
BUILTIN = ("hpo", "diverse", "philly")
GPUS_PER_NODE = 6

DEFAULTS = {
    "hpo": dict(count=1000, interarrival_s=36.0, work_samples=1.3e8, model="shufflenet",
                nmin=1, nmax=64, rup_s=DEFAULT_RUP_S, rdw_s=DEFAULT_RDW_S),
    "diverse": dict(count=300, interarrival_s=60.0, epochs=100, nmin=1, nmax=64,
                    rup_s=DEFAULT_RUP_S, rdw_s=DEFAULT_RDW_S),
    "philly": dict(count=500, since="2017-10-02 00:00:00", time_scale=1.0, elastic_factor=4,
                   work_scale=1.0, rup_s=DEFAULT_RUP_S, rdw_s=DEFAULT_RDW_S),
}


def names() -> list[str]:
    return list(BUILTIN)


def _curve_for(model: str):
    curves = imagenet_curves()
    for name, c in curves.items():
        if name.lower() == str(model).strip().lower():
            return name, c
    return None, None


def _opt(kw: dict, key: str, default):
    v = kw.get(key)
    return default if v is None else v


def _arrivals_and_costs(kw: dict, d: dict) -> tuple[int, float, float, float]:
    """count, interarrival_s, rup_s, rdw_s of a generator: the keyword's value, else its default `d`."""
    return (int(_opt(kw, "count", d["count"])), float(_opt(kw, "interarrival_s", d["interarrival_s"])),
            float(_opt(kw, "rup_s", d["rup_s"])), float(_opt(kw, "rdw_s", d["rdw_s"])))


def hpo(seed: int = 0, **kw) -> list[TrainerSpec]:
    d = DEFAULTS["hpo"]
    count, gap, rup, rdw = _arrivals_and_costs(kw, d)
    work = float(_opt(kw, "work_samples", d["work_samples"]))
    model, curve = _curve_for(d["model"])
    width = max(4, len(str(count - 1)))
    return [TrainerSpec(id=f"hpo-{i:0{width}d}", model=model, curve=curve, nmin=d["nmin"],
                        nmax=d["nmax"], rup_s=rup, rdw_s=rdw, work_samples=work, submit_s=i * gap)
            for i in range(count)]


def diverse(seed: int = 0, **kw) -> list[TrainerSpec]:
    d = DEFAULTS["diverse"]
    count, gap, rup, rdw = _arrivals_and_costs(kw, d)
    epochs = float(_opt(kw, "epochs", d["epochs"]))
    rng = np.random.default_rng(seed)
    # Poisson process: exponential gaps; the first Trainer arrives at the window start.
    gaps = rng.exponential(gap, size=count)
    submit = np.concatenate([[0.0], np.cumsum(gaps[:-1])]) if count else np.empty(0)
    models = list(imagenet_curves().items())
    width = max(4, len(str(count - 1)))
    out = []
    for i in range(count):
        model, curve = models[i % len(models)]
        out.append(TrainerSpec(id=f"div-{i:0{width}d}", model=model, curve=curve, nmin=d["nmin"],
                               nmax=d["nmax"], rup_s=rup, rdw_s=rdw,
                               work_samples=epochs * IMAGENET_EPOCH_SAMPLES, submit_s=float(submit[i])))
    return out


def philly(seed: int = 0, **kw) -> list[TrainerSpec]:
    d = DEFAULTS["philly"]
    count = int(_opt(kw, "count", d["count"]))
    since = pd.Timestamp(_opt(kw, "since", d["since"]))
    scale = float(_opt(kw, "time_scale", d["time_scale"]))
    factor = int(_opt(kw, "elastic_factor", d["elastic_factor"]))
    wscale = float(_opt(kw, "work_scale", d["work_scale"]))
    rup = float(_opt(kw, "rup_s", d["rup_s"]))
    rdw = float(_opt(kw, "rdw_s", d["rdw_s"]))
    path = Path(kw.get("path") or PHILLY_LOG)
    df = pd.read_csv(path, usecols=["timestamp", "duration", "num_gpus"])
    df["timestamp"] = pd.to_datetime(df["timestamp"])
    df = df[(df["timestamp"] >= since) & (df["duration"] > 0) & (df["num_gpus"] > 0)]
    df = df.sort_values("timestamp", kind="stable").head(count)
    if df.empty:
        raise InputError(f"no Philly job submitted at or after {since}", field="since")
    rng = np.random.default_rng(seed)
    models = list(imagenet_curves().items())
    pick = rng.integers(0, len(models), size=len(df))
    t0 = df["timestamp"].iloc[0]
    arrivals = (df["timestamp"] - t0).dt.total_seconds().to_numpy() * scale
    width = max(4, len(str(len(df) - 1)))
    out = []
    for i, (dur, gpus) in enumerate(zip(df["duration"].to_numpy(), df["num_gpus"].to_numpy())):
        model, curve = models[pick[i]]
        r = max(1, math.ceil(int(gpus) / GPUS_PER_NODE))
        work = float(dur) * curve(int(gpus) / GPUS_PER_NODE) * wscale
        out.append(TrainerSpec(id=f"philly-{i:0{width}d}", model=model, curve=curve, nmin=1,
                               nmax=min(64, r * factor), request_nodes=min(64, r), rup_s=rup, rdw_s=rdw,
                               work_samples=max(work, 1.0), submit_s=float(arrivals[i]),
                               meta={"num_gpus": int(gpus), "duration_s": float(dur)}))
    return out


def _csv_max() -> dict:
    """Upper bounds of the Trainer CSV's numbers: the instance format's (one set of bounds)."""
    i = instances  # the instance format's bounds
    return {"nmin": i.MAX_POOL_NODES, "nmax": i.MAX_POOL_NODES, "request_nodes": i.MAX_POOL_NODES,
            "rup_s": i.MAX_DURATION_S, "rdw_s": i.MAX_DURATION_S, "work_samples": i.MAX_REMAINING_SAMPLES,
            "priority": i.MAX_PRIORITY, "submit_s": i.MAX_ABS_TIME_S, "eta_node_h": i.MAX_ABS_TIME_S / 3600}


class _LazyMax(dict):
    def get(self, key, default=None):
        if not len(self):
            self.update(_csv_max())
        return super().get(key, default)


_CSV_MAX = _LazyMax()
CSV_COLUMNS = ("id", "model", "submit_s", "nmin", "nmax", "rup_s", "rdw_s", "work_samples",
               "priority", "eta_node_h", "request_nodes", "batch_sizes", "batch_size")
MAX_BATCH_CELL = 65536  # characters of a batch_sizes cell (JSON)
CSV_REQUIRED = ("id", "model", "submit_s", "work_samples")


MAX_WORKLOAD_BYTES = 64 << 20  # a Trainer CSV (one row per Trainer) of 64 MiB
MAX_WORKLOAD_ROWS = 1_000_000   # Trainers in one file (a small gzip could decompress to more)


def check_file(workload: str | None, max_bytes: int | None = None) -> None:
    """A workload that is not a built-in name and names an existing path must be a regular
    file of at most MAX_WORKLOAD_BYTES (`/dev/zero`, a FIFO or a directory are refused). A
    missing file is left to the reader (its own one-line error)."""
    if workload is None or workload in BUILTIN:
        return
    try:
        st = os.stat(Path(workload).expanduser())
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"workload '{workload}' is not a regular file", field="workload")
    cap = MAX_WORKLOAD_BYTES if max_bytes is None else int(max_bytes)
    if st.st_size > cap:
        raise InputError(f"workload file '{workload}' is larger than {cap >> 20} MiB", field="workload")


def from_csv(path: str | Path, **kw) -> list[TrainerSpec]:
    """Trainers from a CSV file (columns in the module docstring)."""
    check_file(str(path))
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        fh = opener(path, "rt", newline="")
    except OSError as e:
        raise InputError(f"cannot read workload file: {e.strerror or e}", file=str(path)) from None
    out: list[TrainerSpec] = []
    seen: set[str] = set()
    with fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in (reader.fieldnames or [])]
        if not header:
            raise InputError("empty workload file (a header row is needed)", file=str(path), line=1)
        reader.fieldnames = header
        for col in CSV_REQUIRED:
            if col not in header:
                raise InputError(f"missing column (need {', '.join(CSV_REQUIRED)})", file=str(path),
                                 line=1, field=col)
        unknown = [h for h in header if h not in CSV_COLUMNS]
        if unknown:
            raise InputError(f"unknown column (allowed: {', '.join(CSV_COLUMNS)})", file=str(path),
                             line=1, field=unknown[0])
        for row in reader:
            line = reader.line_num
            if len(out) >= MAX_WORKLOAD_ROWS:
                raise InputError(f"more than {MAX_WORKLOAD_ROWS:,} Trainers", file=str(path), line=line)

            def num(name, default=None, kind=float, lo=None, strict_lo=False, hi=None):
                raw = (row.get(name) or "").strip()
                if raw == "":
                    if default is None:
                        raise InputError("value missing", file=str(path), line=line, field=name)
                    return default
                try:
                    v = kind(float(raw)) if kind is int else kind(raw)
                    if kind is int and float(raw) != int(float(raw)):
                        raise ValueError
                except (ValueError, OverflowError):
                    raise InputError(f"not a {'whole ' if kind is int else ''}number: {raw!r}",
                                     file=str(path), line=line, field=name) from None
                if not math.isfinite(v) or (lo is not None and (v <= lo if strict_lo else v < lo)):
                    raise InputError(f"must be {'>' if strict_lo else '>='} {lo}: {raw[:40]!r}",
                                     file=str(path), line=line, field=name)
                hi = _CSV_MAX.get(name) if hi is None else hi
                if hi is not None and v > hi:
                    raise InputError(f"must be <= {hi:g}: {raw[:40]!r}", file=str(path), line=line, field=name)
                return v

            tid = (row.get("id") or "").strip()
            if not tid:
                raise InputError("value missing", file=str(path), line=line, field="id")
            if tid in seen:
                raise InputError(f"duplicate id {tid!r}", file=str(path), line=line, field="id")
            seen.add(tid)
            model, curve = _curve_for(row.get("model") or "")
            if curve is None:
                raise InputError(f"unknown model {row.get('model')!r} (choose one of "
                                 f"{', '.join(imagenet_curves())})", file=str(path), line=line, field="model")
            nmin = num("nmin", 1, int, 1)
            nmax = num("nmax", 64, int, 1)
            if nmax < nmin:
                raise InputError(f"nmax {nmax} < nmin {nmin}", file=str(path), line=line, field="nmax")
            eta = num("eta_node_h", math.nan, float, 0, True)
            req = num("request_nodes", math.nan, int, 1)
            batches, batch_now = _csv_batches(row, path, line)
            out.append(TrainerSpec(
                id=tid, model=model, curve=dict(batches)[batch_now] if batches else curve, nmin=nmin, nmax=nmax,
                request_nodes=None if math.isnan(req) else int(req), batches=batches, batch_size=batch_now,
                rup_s=num("rup_s", DEFAULT_RUP_S, float, 0), rdw_s=num("rdw_s", DEFAULT_RDW_S, float, 0),
                work_samples=num("work_samples", None, float, 0, True),
                priority=num("priority", 1.0, float, 0, True), submit_s=num("submit_s", None, float, 0),
                eta_node_h=None if math.isnan(eta) else eta))
    if not out:
        raise InputError("no Trainers in workload file", file=str(path), line=2)
    count = kw.get("count")
    out.sort(key=lambda s: s.submit_s)
    return out[: int(count)] if count is not None else out


ARRIVALS = ("workload", "start", "poisson", "log")


def rearrive(specs: list, arrival: str | None, interarrival_s: float | None = None, seed: int = 0,
             log_times=None) -> list:
    """The Trainers with their submit times replaced by an arrival process, in their order:
    "workload" (None): as generated (hpo: one every interarrival_s; diverse: Poisson; philly and a
    CSV: their own); "start": all at the window start; "poisson": a Poisson process whose mean gap
    is interarrival_s (default 60 s), seeded; "log": the submissions of a job log (log_times:
    seconds after the window start, ascending; planner.scenario.record reads them from the
    scenario's log): Trainer i is submitted when the log's i-th job of the window was, and the
    Trainers beyond the log's submissions are left out (the log sets how many arrive)."""
    if arrival in (None, "workload"):
        return specs
    if arrival not in ARRIVALS:
        raise InputError(f"arrival must be one of {', '.join(ARRIVALS)}, got {arrival!r}", field="arrival")
    if arrival == "log":
        if log_times is None:
            raise InputError("arrival 'log' replays a job log's submissions: choose a job log", field="arrival")
        times = np.sort(np.asarray(log_times, dtype=float))
        return [replace(s, submit_s=float(t)) for s, t in zip(specs, times)]
    if arrival == "start":
        times = np.zeros(len(specs))
    else:
        gap = 60.0 if interarrival_s is None else float(interarrival_s)
        if not gap > 0:
            raise InputError("a Poisson arrival needs a positive mean gap (interarrival_s)", field="interarrival_s")
        rng = np.random.default_rng([int(seed), 25])
        times = np.r_[0.0, np.cumsum(rng.exponential(gap, size=max(len(specs) - 1, 0)))]
    return [replace(s, submit_s=float(t)) for s, t in zip(specs, times)]


def make_workload(name_or_csv: str, seed: int = 0, arrival: str | None = None, log_times=None,
                  **kw) -> list[TrainerSpec]:
    """Trainers of a built-in workload (hpo, diverse, philly) or of a CSV file, by submit time.

    Keyword knobs (None = the workload's default): count, interarrival_s, rup_s, rdw_s,
    epochs (diverse), work_samples (hpo), since/time_scale/elastic_factor/work_scale (philly);
    arrival: rearrive()'s arrival process (log_times: its "log" submissions).
    """
    if arrival not in (None, "workload"):
        specs = make_workload(name_or_csv, seed=seed, **kw)
        return sorted(rearrive(specs, arrival, kw.get("interarrival_s"), seed, log_times), key=lambda s: s.submit_s)
    name = str(name_or_csv)
    if "count" in kw and kw["count"] is not None and int(kw["count"]) < 0:
        raise InputError("count must be >= 0", field="count")
    if name in BUILTIN:
        specs = {"hpo": hpo, "diverse": diverse, "philly": philly}[name](seed=seed, **kw)
        return sorted(specs, key=lambda s: s.submit_s)
    p = Path(name)
    if p.suffix.lower() not in (".csv", ".gz") and not p.exists():
        raise InputError(f"unknown workload {name!r}: choose {', '.join(BUILTIN)} or a CSV file",
                         field="workload")
    if not p.exists():
        raise InputError("workload file not found", file=name)
    specs = from_csv(p, count=kw.get("count"))
    rup, rdw = kw.get("rup_s"), kw.get("rdw_s")
    if rup is not None or rdw is not None:
        specs = [replace(s, rup_s=float(rup) if rup is not None else s.rup_s,
                         rdw_s=float(rdw) if rdw is not None else s.rdw_s) for s in specs]
    return specs


# ---------------------------------------------------------------------------
# ModelArts' robustness study (Hu et al. 2021) as a workload perturbation the simulator applies


def perturb_workload(specs: list, eta_noise: float = 0.0, bug_share: float = 0.0, kill_share: float = 0.0,
                     seed: int = 0) -> list:
    """Mark Trainers for ModelArts' robustness study; returns new TrainerSpecs (specs untouched).

    Each spec gets in `meta`:
      - `eta_factor`: the ETA the allocator sees is the true remaining demand times this factor,
        drawn uniformly in [1 - eta_noise, 1 + eta_noise] once per job (eta_noise 0.2 = +-20 %);
        `eta_node_h` (when set) is scaled by it, so allocators read the noisy ETA.
      - `hang_at_frac` (bug jobs, share bug_share): the job stops making progress once this
        fraction (uniform 0.05..0.5) of its work is done, but keeps its nodes until its seen ETA
        has elapsed in node-hours (the simulator's rule; a real platform detects the hang then)
        and then leaves unfinished.
      - `kill_at_frac` (share kill_share, disjoint from bug jobs): the user kills the job once this
        fraction (uniform 0.1..0.9) of its work is done; it leaves at once, unfinished.
    Draws come from random.Random(seed) in spec order, so a seed fixes the perturbation.
    """
    if not (0 <= eta_noise < 1):
        raise ValueError("eta_noise must be in [0, 1)")
    if not (0 <= bug_share <= 1 and 0 <= kill_share <= 1 and bug_share + kill_share <= 1):
        raise ValueError("bug_share and kill_share must be in [0, 1] and sum to at most 1")
    rng = random.Random(seed)
    out = []
    for s in specs:
        factor = 1.0 + rng.uniform(-eta_noise, eta_noise) if eta_noise else 1.0
        draw = rng.random()
        hang = rng.uniform(0.05, 0.5)
        kill = rng.uniform(0.1, 0.9)
        meta = dict(s.meta)
        meta["eta_factor"] = factor
        if draw < bug_share:
            meta["hang_at_frac"] = hang
        elif draw < bug_share + kill_share:
            meta["kill_at_frac"] = kill
        eta = s.eta_node_h * factor if s.eta_node_h is not None else None
        out.append(replace(s, eta_node_h=eta, meta=meta))
    return out


def _csv_batches(row: dict, path: Path, line: int):
    """The batch_sizes cell (the instance JSON's list, as JSON text) and batch_size, through the
    instance parser (planner.allocators.instances._batches): ((), None) when the cell is empty."""
    cell = (row.get("batch_sizes") or "").strip()
    if not cell:
        return (), None

    def bad(msg, fld):
        raise InputError(msg, file=str(path), line=line, field=fld)

    if len(cell) > MAX_BATCH_CELL:
        bad(f"longer than {MAX_BATCH_CELL} characters", "batch_sizes")
    try:
        raw = json.loads(cell, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    except (ValueError, RecursionError):
        bad("not a JSON list of {batch_size, nodes, samples_per_s}", "batch_sizes")
    tr = {"batch_sizes": raw}
    now = (row.get("batch_size") or "").strip()
    if now:
        try:
            tr["batch_size"] = int(now)
        except ValueError:
            bad(f"not a whole number: {now[:40]!r}", "batch_size")
    try:
        return _batches(tr, "", None)
    except InputError as e:  # the instance parser names the field; add this file's line
        bad(e.reason, e.field)


# ---------------------------------------------------------------------------
# IBM's baselines (Saxena et al. 2020, Sec. IV-D): each job's total batch size fixed

BATCH_CHOICES = ("elastic", "random", "max", "min")


def batch_curve(batches, b: float):
    """The curve of total batch size b between the measured ones: at each node count, linear in b
    between the two neighbouring batch sizes' throughputs, and 0 (infeasible) where either of
    them is 0 (e.g. the larger one does not fit a GPU's memory there: conservative)."""
    pts = sorted(batches, key=lambda x: x[0])
    sizes = [p[0] for p in pts]
    if b <= sizes[0]:
        return pts[0][1]
    if b >= sizes[-1]:
        return pts[-1][1]
    i = int(np.searchsorted(sizes, b))
    (b0, c0), (b1, c1) = pts[i - 1], pts[i]
    if b == b1:
        return c1
    w = (b - b0) / (b1 - b0)
    nodes = sorted(set(c0.nodes) | set(c1.nodes))
    vals = []
    for k in nodes:
        v0, v1 = c0(k), c1(k)
        vals.append(0.0 if (k > 0 and (v0 <= 0 or v1 <= 0)) else (1 - w) * v0 + w * v1)
    return Curve(tuple(nodes), tuple(vals))


def _fixed_batch(s: TrainerSpec, b: int, curve) -> TrainerSpec:
    """Spec s with one total batch size b: elastic in nodes only, Nmin/Nmax where b runs."""
    ok = [k for k in curve.nodes if k > 0 and curve(k) > 0 and s.nmin <= k <= s.nmax]
    nmin, nmax = (min(ok), max(ok)) if ok else (s.nmin, s.nmax)
    return replace(s, curve=curve, batches=(), batch_size=int(b), nmin=nmin, nmax=nmax)


def choose_batches(specs: list, mode: str = "elastic", seed: int = 0) -> list:
    """IBM's batch-size baselines for Trainers with batch choices (others are left alone):

    - elastic: unchanged (the allocator picks the batch size with the node count: IBM's method);
    - random (IBM's Random-BS, "a value picked uniformly randomly between the Max-BS and
      Min-BS"): one whole total batch b per job drawn once, uniformly in [min, max] of its batch
      sizes, by numpy's generator seeded with (seed, crc32 of the job id), so a job's draw does
      not depend on the others; its curve by batch_curve (interpolated between the measured
      batch sizes); then elastic in nodes only;
    - max (Max-BS) / min (Min-BS): its largest / smallest batch size, elastic in nodes only.
    Nmin/Nmax become the node counts the fixed batch runs on (within the old bounds).
    """
    if mode not in BATCH_CHOICES:
        raise ValueError(f"unknown batch choice {mode!r}; choose one of {', '.join(BATCH_CHOICES)}")
    if mode == "elastic":
        return list(specs)
    out = []
    for s in specs:
        if not s.batches:
            out.append(s)
            continue
        pts = sorted(s.batches, key=lambda x: x[0])
        if mode == "max":
            b, curve = pts[-1]
        elif mode == "min":
            b, curve = pts[0]
        else:
            rng = np.random.default_rng([int(seed), zlib.crc32(str(s.id).encode())])
            b = int(rng.integers(int(pts[0][0]), int(pts[-1][0]) + 1))
            curve = batch_curve(pts, b)
        out.append(_fixed_batch(s, b, curve))
    return out
