"""Idle-time predictions as probabilities, and how well calibrated they are.

    p = p_stays(model, landmarks, t_s)          # P(node stays idle >= T), per landmark row (Cox)
    pool_at_least(p)                             # P(at least k of these nodes stay idle), k = 0..n
    out = calibrate(fr, cut_s, t_mins=(5, 15, 30, 60))   # the `planner calibrate --json` figures
    now = at_moment(fr, at_s)                    # per node and for the pool, at one moment (`--at`)

Three predictors of P(remaining idle time R >= T) for a node idle for `age` at a decision time L:

- `cox`: the Cox model of planner.predict.survival on all covariates: exp(-H0(T) exp(lin)),
- `km`: Kaplan-Meier of fragment length conditioned on the age only: S(age + T) / S(age),
- `naive`: the rule "a node stays idle as long again as it has been idle": 1 if age >= T else 0.

Measured on data AFTER the fitting period (fit on [log start, cut), test landmarks in
[cut, end - T] so that every test outcome is known: a node idle at L either left before L + T
(did not stay) or was still idle at L + T (stayed); nothing is censored). Per T:

- reliability diagram: test rows in BINS equal-width bins of predicted probability; per bin
  the mean prediction, the observed share that stayed, and the count;
- ECE (expected calibration error) = sum over bins of (rows in bin / rows) * |mean predicted -
  observed share|; `over_ece` is the same sum over the bins where the prediction is above the
  observed share only (over-prediction: saying a node stays when it does not, the harmful
  direction); `under_ece` the rest (ECE = over_ece + under_ece);
- false-stay rate: of the rows predicted to stay (p >= 0.5), the share that did not stay;
- Brier score = mean (p - y)^2 (y = 1 if it stayed), for cox, km and naive.

The pool: at a test landmark, the number of the idle nodes that stay idle >= T, predicted as
independent Bernoulli(p_i) (a Poisson-binomial, `pool_at_least`). The operator's guarantee
"at least k nodes stay idle for T with probability 0.9" is k_0.9 = the largest k with
P(>= k) >= 0.9; its coverage is the observed share of landmarks where at least k_0.9 stayed
(0.9 when calibrated; lower means the promise was too generous: nodes leave in groups, which
independence ignores).

Reference: Azure's Harvest VMs (Ambati et al., OSDI 2020) predict survival with under 2 % error in
the short term and under 6 % longer; we read "error" as the ECE of P(stays >= T) and compare
5 and 15 min with 2 %, 30 and 60 min with 6 % (`azure_target`, `meets_azure`).
"""

from __future__ import annotations

import numpy as np

from planner.errors import InputError
from planner.predict.survival import STEP_S, Fragments, Landmarks, SurvivalModel, fit, landmarks

T_MINS = (5.0, 15.0, 30.0, 60.0)
BINS = 10
PREDICTORS = ("cox", "km", "naive")
POOL_P = 0.9
AZURE_SHORT_MIN = 15.0  # T up to this is "short term" (target 2 %), longer ones 6 %
AZURE_SHORT, AZURE_LONG = 0.02, 0.06


def azure_target(t_min: float) -> float:
    return AZURE_SHORT if t_min <= AZURE_SHORT_MIN else AZURE_LONG


# ---------------------------------------------------------------- the probabilities

def p_stays(model: SurvivalModel, lm: Landmarks, t_s: float, predictor: str = "cox") -> np.ndarray:
    """P(remaining idle time >= t_s) per landmark row."""
    t = float(t_s)
    if predictor == "cox":
        i = np.searchsorted(model.h0_t, t, side="right") - 1
        h = float(model.h0[i]) if i >= 0 else 0.0
        return np.exp(-h * np.exp(model.lin(lm.x)))
    if predictor == "km":
        age = np.asarray(lm.age_s, float)
        sa = model.km_at(age)
        return np.where(sa > 0, model.km_at(age + t) / np.where(sa > 0, sa, 1.0), 0.0)
    if predictor == "naive":
        return (np.asarray(lm.age_s, float) >= t).astype(float)
    raise InputError(f"choose one of {', '.join(PREDICTORS)}, got {predictor!r}", field="predictor")


def pool_at_least(p) -> np.ndarray:
    """P(at least k of independent Bernoulli(p_i) succeed), k = 0..n (Poisson-binomial, exact DP)."""
    dist = np.zeros(len(p) + 1)
    dist[0] = 1.0
    for i, q in enumerate(np.asarray(p, float)):
        dist[1:i + 2] = dist[1:i + 2] * (1 - q) + dist[:i + 1] * q
        dist[0] *= 1 - q
    return np.clip(np.cumsum(dist[::-1])[::-1], 0.0, 1.0)


def guaranteed_k(p, level: float = POOL_P) -> int:
    """The largest k with P(at least k stay) >= level."""
    tail = pool_at_least(p)
    return int(np.flatnonzero(tail >= level - 1e-12).max())


POOL_LEVELS = (0.5, 0.9, 0.99)


def at_moment(fr: Fragments, at_s: float, t_mins=T_MINS, levels=POOL_LEVELS, model: SurvivalModel | None = None,
              step_s: float = STEP_S, max_rows: int | None = 60_000, seed: int = 0) -> dict:
    """The model's answers at one moment `at_s` (fit on the log before it unless `model` is given):
    per node idle then, P(stays idle >= T) for each T; for the pool, per T and level p, the largest
    k with P(at least k of them stay idle >= T) >= p (independent nodes, `guaranteed_k`), the
    expected number that stay, and, where the log goes on past at_s + T, how many did stay."""
    if not fr.t0 < at_s < fr.t1:
        raise InputError("the moment must fall inside the log (after its start, before its end)", field="at")
    t_mins = [float(t) for t in t_mins]
    if not t_mins or any(not (t > 0) for t in t_mins):
        raise InputError("every T must be a positive number of minutes", field="t_min")
    if model is None:
        model = fit(fr, cut_s=at_s, step_s=step_s, max_rows=max_rows, seed=seed)
    lm = landmarks(fr, at_s, at_s + 1e-6, fr.t1, model.prior_hist, step_s=1.0, max_rows=None)
    order = np.argsort(lm.node, kind="stable")
    p = {t: p_stays(model, lm, t * 60.0)[order] for t in t_mins}
    nodes = [{"node": int(n), "idle_for_s": float(a), **{f"p_{t:g}min": float(p[t][i]) for t in t_mins}}
             for i, (n, a) in enumerate(zip(lm.node[order], lm.age_s[order]))]
    pool = []
    for t in t_mins:
        known = at_s + t * 60.0 <= fr.t1
        pool.append({"t_min": t, "expected": float(p[t].sum()),
                     "at_least": {f"{lv:g}": guaranteed_k(p[t], lv) for lv in levels},
                     "stayed": int((lm.time_s[order] >= t * 60.0).sum()) if known else None})
    return {"at_s": float(at_s), "idle_nodes": len(nodes), "nodes": nodes, "pool": pool, "levels": list(levels)}


def pool_sentence(row: dict, level: float = POOL_P) -> str:
    """'at least 403 nodes stay idle for 30 min with probability 0.9 (expected 430.2)'."""
    k = row["at_least"][f"{level:g}"]
    text = (f"at least {k:,} {'node stays' if k == 1 else 'nodes stay'} idle for {row['t_min']:g} min with probability "
            f"{level:g} (expected {row['expected']:,.1f})")
    return text + (f"; {row['stayed']:,} did" if row.get("stayed") is not None else "")


# ---------------------------------------------------------------- calibration of given predictions

def reliability(p, y, bins: int = BINS) -> list[dict]:
    """Per equal-width bin of p: rows, mean predicted, observed share (empty bins left out)."""
    p, y = np.asarray(p, float), np.asarray(y, float)
    b = np.minimum((p * bins).astype(int), bins - 1)
    out = []
    for k in range(bins):
        m = b == k
        if m.any():
            out.append({"bin": k, "lo": k / bins, "hi": (k + 1) / bins, "rows": int(m.sum()),
                        "predicted": float(p[m].mean()), "observed": float(y[m].mean())})
    return out


def scores(p, y, bins: int = BINS) -> dict:
    """ECE (with its over- and under-prediction parts), Brier score and the false-stay rate."""
    p, y = np.asarray(p, float), np.asarray(y, float)
    n = len(p)
    if n == 0:
        return {"rows": 0, "ece": None, "over_ece": None, "under_ece": None, "brier": None,
                "false_stay_rate": None, "predicted_mean": None, "observed_mean": None}
    rel = reliability(p, y, bins)
    over = sum(r["rows"] / n * max(r["predicted"] - r["observed"], 0.0) for r in rel)
    under = sum(r["rows"] / n * max(r["observed"] - r["predicted"], 0.0) for r in rel)
    said_stay = p >= 0.5
    return {"rows": int(n), "ece": float(over + under), "over_ece": float(over), "under_ece": float(under),
            "brier": float(np.mean((p - y) ** 2)),
            "false_stay_rate": float(np.mean(y[said_stay] == 0)) if said_stay.any() else None,
            "predicted_mean": float(p.mean()), "observed_mean": float(y.mean())}


# ---------------------------------------------------------------- on a log

def held_out_rows(fr: Fragments, model: SurvivalModel, cut_s: float, t_s: float, step_s: float = STEP_S,
              max_rows: int | None = 20_000, seed: int = 1) -> tuple[Landmarks, np.ndarray]:
    """Test landmarks in [cut, end - t_s] and y (1 = stayed idle >= t_s); every outcome is known."""
    hi = fr.t1 - float(t_s)
    if hi <= cut_s:
        return None, np.empty(0)
    lm = landmarks(fr, cut_s, hi + 1e-9, fr.t1, model.prior_hist, step_s, max_rows, seed)
    y = (lm.time_s >= t_s).astype(float)
    return lm, y


def pool_coverage(fr: Fragments, model: SurvivalModel, cut_s: float, t_s: float, level: float = POOL_P,
                  step_s: float = 3600.0, max_landmarks: int = 200) -> dict:
    """At test landmarks every `step_s` (all idle nodes): k_level from the Cox probabilities and
    whether at least k_level stayed; the observed share (coverage) and the mean k vs stayed."""
    lm = landmarks(fr, cut_s, fr.t1 - float(t_s) + 1e-9, fr.t1, model.prior_hist, step_s, None, 0)
    if len(lm) == 0:
        return {"landmarks": 0, "level": level, "coverage": None}
    p = p_stays(model, lm, t_s)
    stayed = lm.time_s >= t_s
    ks, hits, ns, obs = [], [], [], []
    times = np.unique(lm.t_s)
    if len(times) > max_landmarks:
        times = times[np.linspace(0, len(times) - 1, max_landmarks).astype(int)]
    for t in times:
        m = lm.t_s == t
        k = guaranteed_k(p[m], level)
        s = int(stayed[m].sum())
        ks.append(k)
        obs.append(s)
        ns.append(int(m.sum()))
        hits.append(s >= k)
    return {"landmarks": len(times), "level": level, "coverage": float(np.mean(hits)),
            "mean_idle_nodes": float(np.mean(ns)), "mean_k": float(np.mean(ks)), "mean_stayed": float(np.mean(obs)),
            "example": {"t_s": float(times[-1]), "idle_nodes": ns[-1], "k": ks[-1], "stayed": obs[-1]}}


def calibrate(fr: Fragments, cut_s: float, t_mins=T_MINS, bins: int = BINS, step_s: float = STEP_S,
              max_rows: int | None = 60_000, test_rows_max: int | None = 20_000, seed: int = 0,
              pool: bool = True) -> dict:
    """Fit on [fr.t0, cut_s), measure on [cut_s, fr.t1]; the JSON of `planner calibrate`."""
    if not fr.t0 < cut_s < fr.t1:
        raise InputError("the test start must fall inside the log (after its start, before its end)", field="start")
    t_mins = [float(t) for t in t_mins]
    if not t_mins or any(not (t > 0) for t in t_mins):
        raise InputError("every T must be a positive number of minutes", field="t_min")
    model = fit(fr, cut_s=cut_s, step_s=step_s, max_rows=max_rows, seed=seed)
    per_t = []
    for t_min in t_mins:
        t = t_min * 60.0
        lm, y = held_out_rows(fr, model, cut_s, t, step_s, test_rows_max, seed + 1)
        row: dict = {"t_min": t_min, "azure_target": azure_target(t_min)}
        if lm is None or len(lm) == 0:
            row.update(rows=0, note="no test landmark: the test span is shorter than T")
            per_t.append(row)
            continue
        row["rows"] = len(lm)
        row["observed_stay_share"] = float(y.mean())
        for name in PREDICTORS:
            p = p_stays(model, lm, t, name)
            row[name] = scores(p, y, bins)
            if name == "cox":
                row["reliability"] = reliability(p, y, bins)
        row["meets_azure"] = row["cox"]["ece"] is not None and row["cox"]["ece"] < row["azure_target"]
        if pool:
            row["pool"] = pool_coverage(fr, model, cut_s, t)
        per_t.append(row)
    return {"fit": {k: v for k, v in model.info.items() if k != "coef"}, "coef": model.info.get("coef"),
            "test_start_s": cut_s, "test_end_s": fr.t1, "test_hours": (fr.t1 - cut_s) / 3600.0,
            "bins": bins, "per_t": per_t}
