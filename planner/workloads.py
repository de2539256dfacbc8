"""Workloads: the stream of Trainers a replay runs.

`make_workload(name_or_csv, seed=0, **kw) -> list[TrainerSpec]`, sorted by submit time.
Submit times are seconds since the window start (0 = the first instant of the window).

Built-in workloads (all curves are the measured Summit ImageNet curves of
`planner.trainers.imagenet_curves()`):

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
"""

from __future__ import annotations

import csv
import gzip
import math
from pathlib import Path

import numpy as np

from planner.errors import InputError
from planner.paths import PHILLY_LOG
from planner.trainers import TrainerSpec, imagenet_curves

IMAGENET_EPOCH_SAMPLES = 1_281_167
BUILTIN = ("hpo", "diverse", "philly")
GPUS_PER_NODE = 6

DEFAULTS = {
    "hpo": dict(count=1000, interarrival_s=36.0, work_samples=1.3e8, model="shufflenet",
                nmin=1, nmax=64, rup_s=18.0, rdw_s=12.0),
    "diverse": dict(count=300, interarrival_s=60.0, epochs=100, nmin=1, nmax=64,
                    rup_s=18.0, rdw_s=12.0),
    "philly": dict(count=500, since="2017-10-02 00:00:00", time_scale=1.0, elastic_factor=4,
                   work_scale=1.0, rup_s=18.0, rdw_s=12.0),
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


def hpo(seed: int = 0, **kw) -> list[TrainerSpec]:
    d = DEFAULTS["hpo"]
    count = int(_opt(kw, "count", d["count"]))
    gap = float(_opt(kw, "interarrival_s", d["interarrival_s"]))
    work = float(_opt(kw, "work_samples", d["work_samples"]))
    rup = float(_opt(kw, "rup_s", d["rup_s"]))
    rdw = float(_opt(kw, "rdw_s", d["rdw_s"]))
    model, curve = _curve_for(d["model"])
    width = max(4, len(str(count - 1)))
    return [TrainerSpec(id=f"hpo-{i:0{width}d}", model=model, curve=curve, nmin=d["nmin"],
                        nmax=d["nmax"], rup_s=rup, rdw_s=rdw, work_samples=work, submit_s=i * gap)
            for i in range(count)]


def diverse(seed: int = 0, **kw) -> list[TrainerSpec]:
    d = DEFAULTS["diverse"]
    count = int(_opt(kw, "count", d["count"]))
    gap = float(_opt(kw, "interarrival_s", d["interarrival_s"]))
    epochs = float(_opt(kw, "epochs", d["epochs"]))
    rup = float(_opt(kw, "rup_s", d["rup_s"]))
    rdw = float(_opt(kw, "rdw_s", d["rdw_s"]))
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
    import pandas as pd

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
                               nmax=min(64, r * factor), rup_s=rup, rdw_s=rdw,
                               work_samples=max(work, 1.0), submit_s=float(arrivals[i]),
                               meta={"num_gpus": int(gpus), "duration_s": float(dur)}))
    return out


CSV_COLUMNS = ("id", "model", "submit_s", "nmin", "nmax", "rup_s", "rdw_s", "work_samples",
               "priority", "eta_node_h")
CSV_REQUIRED = ("id", "model", "submit_s", "work_samples")


def from_csv(path: str | Path, **kw) -> list[TrainerSpec]:
    """Trainers from a CSV file (columns in the module docstring)."""
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

            def num(name, default=None, kind=float, lo=None, strict_lo=False):
                raw = (row.get(name) or "").strip()
                if raw == "":
                    if default is None:
                        raise InputError("value missing", file=str(path), line=line, field=name)
                    return default
                try:
                    v = kind(float(raw)) if kind is int else kind(raw)
                    if kind is int and float(raw) != int(float(raw)):
                        raise ValueError
                except ValueError:
                    raise InputError(f"not a {'whole ' if kind is int else ''}number: {raw!r}",
                                     file=str(path), line=line, field=name) from None
                if not math.isfinite(v) or (lo is not None and (v <= lo if strict_lo else v < lo)):
                    raise InputError(f"must be {'>' if strict_lo else '>='} {lo}: {raw!r}",
                                     file=str(path), line=line, field=name)
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
            out.append(TrainerSpec(
                id=tid, model=model, curve=curve, nmin=nmin, nmax=nmax,
                rup_s=num("rup_s", 18.0, float, 0), rdw_s=num("rdw_s", 12.0, float, 0),
                work_samples=num("work_samples", None, float, 0, True),
                priority=num("priority", 1.0, float, 0, True), submit_s=num("submit_s", None, float, 0),
                eta_node_h=None if math.isnan(eta) else eta))
    if not out:
        raise InputError("no Trainers in workload file", file=str(path), line=2)
    count = kw.get("count")
    out.sort(key=lambda s: s.submit_s)
    return out[: int(count)] if count is not None else out


def make_workload(name_or_csv: str, seed: int = 0, **kw) -> list[TrainerSpec]:
    """Trainers of a built-in workload (hpo, diverse, philly) or of a CSV file, by submit time.

    Keyword knobs (None = the workload's default): count, interarrival_s, rup_s, rdw_s,
    epochs (diverse), work_samples (hpo), since/time_scale/elastic_factor/work_scale (philly).
    """
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
        from dataclasses import replace
        specs = [replace(s, rup_s=float(rup) if rup is not None else s.rup_s,
                         rdw_s=float(rdw) if rdw is not None else s.rdw_s) for s in specs]
    return specs
