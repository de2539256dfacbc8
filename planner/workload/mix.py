"""A model mix: which ImageNet models the Trainers train, in what shares, and each model's Nmin and
Nmax (the scenario field `models`; planner.scenario.record applies it to any workload).

Text form (links, `--models`, the Planner's field): comma-separated entries
`model[:weight][:nmin-nmax]`, e.g. `resnet18:3:4-32,shufflenet:1` (three resnet18 Trainers of
4 to 32 nodes for each shufflenet one, which keeps the workload's Nmin and Nmax). Model names are
those of the measured scaling table (planner.workload.trainers.imagenet_curves), any case. The
weight defaults to 1; without a range a model keeps the workload's Nmin/Nmax (hpo and diverse:
1 and 64, planner.workload.generators.DEFAULTS: the one place for those defaults).

Assignment (deterministic, no draw): Trainers in submit order take the model whose share so far
lags its weight most (smooth weighted round robin), so after n Trainers each model has its share
to within one Trainer. A Trainer whose model changes gets that model's curve and loses any batch
size choices (IBM's: they belong to the old model).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.errors import InputError
from planner.workload.trainers import imagenet_curves

MAX_ENTRIES = 32
MAX_NODES = 100_000


@dataclass(frozen=True)
class MixEntry:
    model: str  # as in the scaling table
    weight: float = 1.0
    nmin: int | None = None  # None: the workload's
    nmax: int | None = None


def _bad(msg: str):
    raise InputError(msg, field="models")


def parse(text: str | None) -> list[MixEntry]:
    """The entries of a mix text ([] for None or blank); InputError (field models) on a bad one."""
    if text is None or not str(text).strip():
        return []

    known = {k.lower(): k for k in imagenet_curves()}
    out: list[MixEntry] = []
    for raw in str(text).split(","):
        item = raw.strip()
        if not item:
            continue
        parts = [p.strip() for p in item.split(":")]
        name = known.get(parts[0].lower())
        if name is None:
            _bad(f"unknown model {parts[0][:40]!r} in the model mix (known: {', '.join(known.values())})")
        weight, nmin, nmax = 1.0, None, None
        for p in parts[1:]:
            if "-" in p:
                lo, _, hi = p.partition("-")
                try:
                    nmin, nmax = int(lo), int(hi)
                except ValueError:
                    _bad(f"{item!r}: Nmin-Nmax must be two whole numbers, e.g. 4-32")
                if not 1 <= nmin <= nmax <= MAX_NODES:
                    _bad(f"{item!r}: need 1 <= Nmin <= Nmax <= {MAX_NODES:,}")
            elif p:
                try:
                    weight = float(p)
                except ValueError:
                    _bad(f"{item!r}: the weight must be a number, e.g. {name}:2")
                if not 0 < weight < 1e9:
                    _bad(f"{item!r}: the weight must be positive")
        if any(e.model == name for e in out):
            _bad(f"model {name} appears twice in the model mix")
        out.append(MixEntry(name, weight, nmin, nmax))
        if len(out) > MAX_ENTRIES:
            _bad(f"more than {MAX_ENTRIES} entries in the model mix")
    return out


def to_text(entries: list[MixEntry]) -> str:
    """The text form of entries (parse(to_text(e)) == e)."""
    def one(e: MixEntry) -> str:
        s = e.model + (f":{e.weight:g}" if e.weight != 1 else "")
        return s + (f":{e.nmin}-{e.nmax}" if e.nmin is not None else "")
    return ",".join(one(e) for e in entries)


def assign(n: int, weights: list[float]) -> list[int]:
    """Smooth weighted round robin: the entry index of each of n Trainers."""
    total = float(sum(weights))
    cur = [0.0] * len(weights)
    out = []
    for _ in range(n):
        for i, w in enumerate(weights):
            cur[i] += w
        k = max(range(len(weights)), key=lambda i: (cur[i], -i))
        cur[k] -= total
        out.append(k)
    return out


def apply(specs: list, entries: list[MixEntry]) -> list:
    """The Trainers (in their order) with the mix's models, curves and Nmin/Nmax."""
    if not entries:
        return specs

    curves = imagenet_curves()
    out = []
    for s, k in zip(specs, assign(len(specs), [e.weight for e in entries])):
        e = entries[k]
        nmin = s.nmin if e.nmin is None else e.nmin
        nmax = s.nmax if e.nmax is None else e.nmax
        changed = e.model != s.model
        out.append(replace(s, model=e.model, curve=curves[e.model] if changed else s.curve, nmin=nmin,
                           nmax=max(nmax, nmin), batches=() if changed else s.batches,
                           batch_size=None if changed else s.batch_size))
    return out
