"""How long will an idle node stay idle? A survival model of a log's idle fragments.

A fragment (planner.idle.fragments) is one node's idle period; its length is the time until the
node is reclaimed by the main scheduler. Fragments still open at the end of the data used are
right-censored (we know only that they lasted at least that long), never treated as ended.

The model answers the question a replay asks at a decision time L for an idle node: what is
its *remaining* idle time R, given what is known at L. Training rows are landmarks: every
`step_s` seconds L, one row per node idle at L (a seeded subsample if there are more than
`max_rows`), with

- covariates known at L (`FEATURES`): log(1 + time already idle), hour of day (sin, cos),
  weekend, share of the pool idle, and the node's recent history (an exponentially weighted
  mean of log(1 + length) of its previous fragments, the training mean for a node without one);
- outcome R = end - L, an event if the fragment ended inside the data used, else censored at
  the data's end. Fit on a prefix [t0, cut) of a log, the outcome is censored at the cut: no
  row knows anything after the cut (no peeking).

Estimators (scikit-survival, not hand-written): a Cox proportional-hazards model on the
covariates (`CoxPHSurvivalAnalysis`, Breslow ties, small ridge), and the Kaplan-Meier estimate
of fragment length (`kaplan_meier_estimator`) as the baseline, which conditions on the time
already idle only: S(a + r) / S(a). The naive rule predicts that a node stays idle as long
again as it has been idle already (remaining = age).

Quantiles beyond the data are +inf ("longer than anything observed"), never a made-up number.
Fragments cut by the window's start are counted from the window start (their age is a lower
bound: a known limitation, small for long windows). Time-based evaluation: `evaluate`
(planner.predict.evaluate).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from planner.errors import InputError

FEATURES = ("log_age", "hour_sin", "hour_cos", "weekend", "idle_frac", "hist_loglen")
HIST_ALPHA = 0.3  # weight of the newest fragment in a node's history
STEP_S = 600.0
MAX_ROWS = 60_000
RIDGE = 1e-3


# ---------------------------------------------------------------- covariates (one place)

def feature_matrix(age_s, t_s, idle_frac, hist_loglen) -> np.ndarray:
    """Rows of FEATURES; scalars broadcast (t_s and idle_frac are usually one per decision).
    All-scalar input (one row per replay decision) takes a plain-float path, same formulas."""
    if all(np.ndim(v) == 0 for v in (age_s, t_s, idle_frac, hist_loglen)):
        t = float(t_s)
        h = 2 * math.pi * ((t % 86400.0) / 3600.0) / 24.0
        return np.array([[math.log1p(max(float(age_s), 0.0)), math.sin(h), math.cos(h),
                          float(((t // 86400.0) + 3) % 7 >= 5), float(idle_frac), float(hist_loglen)]])
    age_s, hist = np.asarray(age_s, float), np.asarray(hist_loglen, float)
    n = max(age_s.size, hist.size, np.size(t_s), np.size(idle_frac))
    t = np.broadcast_to(np.asarray(t_s, float), (n,))
    hour = (t % 86400.0) / 3600.0
    dow = ((t // 86400.0) + 3) % 7  # 1970-01-01 was a Thursday: 0 = Monday
    x = np.empty((n, len(FEATURES)))
    x[:, 0] = np.log1p(np.maximum(np.broadcast_to(age_s, (n,)), 0.0))
    x[:, 1] = np.sin(2 * np.pi * hour / 24.0)
    x[:, 2] = np.cos(2 * np.pi * hour / 24.0)
    x[:, 3] = dow >= 5
    x[:, 4] = np.broadcast_to(np.asarray(idle_frac, float), (n,))
    x[:, 5] = np.broadcast_to(hist, (n,))
    return x


def node_history(node, start, end, prior: float) -> np.ndarray:
    """Per fragment: the node's history before it (EWMA of log1p(length) of its previous
    fragments, `prior` for its first). Fragments of one node never overlap."""
    df = pd.DataFrame({"node": np.asarray(node), "start": np.asarray(start, float),
                       "loglen": np.log1p(np.asarray(end, float) - np.asarray(start, float))})
    df = df.sort_values(["node", "start"], kind="stable")
    ew = df.groupby("node", sort=False)["loglen"].transform(
        lambda s: s.ewm(alpha=HIST_ALPHA, adjust=False).mean().shift(1))
    out = np.empty(len(df))
    out[df.index.to_numpy()] = ew.fillna(prior).to_numpy()
    return out


# ---------------------------------------------------------------- landmark rows

@dataclass
class Fragments:
    """Per-node fragments of a window (bands of count-level logs expanded to their ids)."""
    node: np.ndarray
    start: np.ndarray
    end: np.ndarray
    closed: np.ndarray  # ended inside the window (else open at its end: censored)
    t0: float
    t1: float
    nodes: int
    st: np.ndarray  # N(t) step series of the window
    sn: np.ndarray
    derived: bool = False

    @classmethod
    def of(cls, c) -> Fragments:
        """From a planner.idle.fragments.Characterization."""
        w = np.asarray(c.frag_width, np.int64)
        rep = np.repeat(np.arange(len(w)), w)
        off = np.arange(len(rep)) - np.repeat(np.cumsum(w) - w, w)
        node = np.asarray(c.frag_node, np.int64)[rep] + off
        start, end = np.asarray(c.frag_start, float)[rep], np.asarray(c.frag_end, float)[rep]
        return cls(node=node, start=start, end=end, closed=end < c.wd.t1, t0=c.wd.t0, t1=c.wd.t1,
                   nodes=int(c.wd.nodes), st=np.asarray(c.wd.st, float), sn=np.asarray(c.wd.sn),
                   derived=bool(c.wd.derived))

    def idle_frac(self, t_s) -> np.ndarray:
        i = np.clip(np.searchsorted(self.st, t_s, side="right") - 1, 0, len(self.st) - 1)
        return self.sn[i] / max(self.nodes, 1)


@dataclass
class Landmarks:
    t_s: np.ndarray
    node: np.ndarray
    age_s: np.ndarray
    time_s: np.ndarray  # remaining idle time observed (to the end or to the censoring time)
    event: np.ndarray  # bool: the node was reclaimed at t_s + time_s
    x: np.ndarray  # FEATURES

    def __len__(self):
        return len(self.t_s)

    def take(self, idx) -> Landmarks:
        return Landmarks(*(a[idx] for a in (self.t_s, self.node, self.age_s, self.time_s, self.event, self.x)))


def landmarks(fr: Fragments, t_from: float, t_to: float, censor_s: float, prior: float,
              step_s: float = STEP_S, max_rows: int | None = MAX_ROWS, seed: int = 0) -> Landmarks:
    """Rows (landmark L, node idle at L) for L = t_from, t_from + step_s, ... < t_to; outcomes
    censored at censor_s (and at the window end)."""
    if step_s <= 0:
        raise InputError(f"landmark step must be positive, got {step_s!r}", field="step_s")
    hist = node_history(fr.node, fr.start, fr.end, prior)
    k0 = np.maximum(np.ceil((fr.start - t_from) / step_s), 0)
    last = np.ceil((np.minimum(fr.end, t_to) - t_from) / step_s) - 1  # L < min(end, t_to)
    cnt = np.maximum(last - k0 + 1, 0).astype(np.int64)
    f = np.repeat(np.arange(len(cnt)), cnt)
    k = k0[f] + (np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    if max_rows is not None and len(f) > max_rows:
        keep = np.sort(np.random.default_rng(seed).choice(len(f), size=max_rows, replace=False))
        f, k = f[keep], k[keep]
    L = t_from + k * step_s
    stop = np.minimum(fr.end[f], censor_s)
    event = fr.closed[f] & (fr.end[f] <= censor_s)
    age = L - fr.start[f]
    x = feature_matrix(age, L, fr.idle_frac(L), hist[f])
    return Landmarks(t_s=L, node=fr.node[f], age_s=age, time_s=stop - L, event=event, x=x)


# ---------------------------------------------------------------- the fitted model

@dataclass
class SurvivalModel:
    """Cox model on FEATURES (standardized) + Kaplan-Meier of fragment length."""
    coef: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    h0_t: np.ndarray  # cumulative baseline hazard of remaining time: steps at h0_t
    h0: np.ndarray
    km_t: np.ndarray  # KM of fragment length
    km_s: np.ndarray
    prior_hist: float
    info: dict = field(default_factory=dict)

    def lin(self, x: np.ndarray) -> np.ndarray:
        """Linear predictor (log relative hazard): higher = reclaimed sooner."""
        return ((np.asarray(x, float) - self.mean) / self.scale) @ self.coef

    def quantile_s(self, lin, q: float = 0.5) -> np.ndarray:
        """q-quantile of the remaining time of a node with linear predictor lin (a group's
        first reclaim when lin is the log of its summed hazards: `pool_quantile_s`). +inf where
        the model's survival never falls that low."""
        need = -np.log1p(-q) / np.exp(np.asarray(lin, float))
        i = np.searchsorted(self.h0, need, side="left")
        ext = np.r_[self.h0_t, np.inf]
        return ext[i]

    def pool_quantile_s(self, lin, q: float = 0.5) -> float:
        """q-quantile of the time until the first of these nodes is reclaimed (independent
        nodes: the hazards add up)."""
        lin = np.asarray(lin, float)
        if lin.size == 0:
            return float("inf")
        m = lin.max()
        return float(self.quantile_s(m + np.log(np.exp(lin - m).sum()), q))

    def survival(self, lin: float, t_s) -> np.ndarray:
        """S(t | x) = exp(-H0(t) exp(lin)) at the times t_s."""
        i = np.searchsorted(self.h0_t, np.asarray(t_s, float), side="right") - 1
        h = np.where(i >= 0, self.h0[np.maximum(i, 0)], 0.0)
        return np.exp(-h * np.exp(lin))

    def km_at(self, t_s) -> np.ndarray:
        i = np.searchsorted(self.km_t, np.asarray(t_s, float), side="right") - 1
        return np.where(i >= 0, self.km_s[np.maximum(i, 0)], 1.0)

    def km_quantile_s(self, age_s, q: float = 0.5) -> np.ndarray:
        """Kaplan-Meier baseline: q-quantile of remaining time given the age only,
        the smallest r with S(a + r) <= (1 - q) S(a); +inf beyond the data."""
        age = np.asarray(age_s, float)
        target = (1.0 - q) * self.km_at(age)
        # S is non-increasing: the first step at or after `age` whose value is <= target
        neg = -self.km_s
        j = np.searchsorted(neg, -target, side="left")
        j = np.maximum(j, np.searchsorted(self.km_t, age, side="left"))
        ext = np.r_[self.km_t, np.inf]
        return np.maximum(ext[np.minimum(j, len(self.km_t))] - age, 0.0)


def km_curve(time_s, event):
    """Kaplan-Meier estimate (scikit-survival): (times, survival) at the event times."""
    from sksurv.nonparametric import kaplan_meier_estimator  # lazy: heavy (sksurv)

    if len(time_s) == 0:
        return np.empty(0), np.empty(0)
    t, s = kaplan_meier_estimator(np.asarray(event, bool), np.asarray(time_s, float))
    return np.asarray(t, float), np.asarray(s, float)


def _cox(x, time_s, event, ridge):
    """Cox fit (standardized covariates); no events: zero coefficients and zero hazard."""
    mean = x.mean(axis=0) if len(x) else np.zeros(x.shape[1])
    scale = x.std(axis=0) if len(x) else np.ones(x.shape[1])
    scale = np.where(scale > 1e-12, scale, 1.0)
    if not np.any(event):
        return np.zeros(x.shape[1]), mean, scale, np.empty(0), np.empty(0)
    from sksurv.linear_model import CoxPHSurvivalAnalysis  # lazy: heavy (sksurv)
    from sksurv.util import Surv  # lazy: heavy (sksurv)

    m = CoxPHSurvivalAnalysis(alpha=ridge, ties="breslow", n_iter=100)
    m.fit((x - mean) / scale, Surv.from_arrays(np.asarray(event, bool), np.asarray(time_s, float)))
    # sksurv's baseline is for its own linear predictor X @ coef (no centring): use it as is
    return (np.asarray(m.coef_, float), mean, scale, np.asarray(m.cum_baseline_hazard_.x, float),
            np.asarray(m.cum_baseline_hazard_.y, float))


def fit(fr: Fragments, cut_s: float | None = None, step_s: float = STEP_S, max_rows: int | None = MAX_ROWS,
        seed: int = 0, ridge: float = RIDGE) -> SurvivalModel:
    """Fit on the fragments' data before cut_s (default: the whole window), censored at the cut."""
    t0 = time.perf_counter()
    cut = fr.t1 if cut_s is None else float(min(cut_s, fr.t1))
    if cut <= fr.t0:
        raise InputError("the training span is empty (cut at or before the window start)", field="cut")
    started = fr.start < cut
    stop = np.minimum(fr.end[started], cut)
    ev = fr.closed[started] & (fr.end[started] <= cut)
    km_t, km_s = km_curve(stop - fr.start[started], ev)
    loglen = np.log1p(stop - fr.start[started])
    prior = float(loglen[ev].mean()) if ev.any() else float(loglen.mean()) if len(loglen) else 0.0
    lm = landmarks(fr, fr.t0, cut, cut, prior, step_s, max_rows, seed)
    coef, mean, scale, h0_t, h0 = _cox(lm.x, lm.time_s, lm.event, ridge)
    info = {"rows": len(lm), "events": int(lm.event.sum()), "fragments": int(started.sum()),
            "fragment_events": int(ev.sum()), "cut_s": cut, "step_s": step_s, "seed": seed,
            "coef": dict(zip(FEATURES, np.round(coef, 4).tolist())), "fit_s": time.perf_counter() - t0}
    return SurvivalModel(coef=coef, mean=mean, scale=scale, h0_t=h0_t, h0=h0, km_t=km_t, km_s=km_s,
                         prior_hist=prior, info=info)


def curves(model: SurvivalModel, ages_s=(0.0, 600.0, 3600.0), t_max_s: float | None = None,
           points: int = 200) -> pd.DataFrame:
    """Survival of the remaining idle time of a node idle for `age` already: Kaplan-Meier
    (S(a + t) / S(a)) and Cox (other covariates at their training means). Columns model,
    age_s, time_s, survival; times on a log grid from 10 s to t_max_s (default: the longest
    fragment length seen)."""
    hi = t_max_s or (float(model.km_t[-1]) if len(model.km_t) else 86400.0)
    t = np.unique(np.r_[0.0, np.geomspace(10.0, max(hi, 20.0), points)])
    rows = []
    for a in ages_s:
        sa = float(model.km_at(a))
        km = model.km_at(a + t) / sa if sa > 0 else np.full(len(t), np.nan)
        x = model.mean.copy()
        x[0] = np.log1p(a)
        cox = model.survival(float(((x - model.mean) / model.scale) @ model.coef), t)
        for name, s in (("km", km), ("cox", cox)):
            rows.append(pd.DataFrame({"model": name, "age_s": float(a), "time_s": t, "survival": s}))
    return pd.concat(rows, ignore_index=True)
