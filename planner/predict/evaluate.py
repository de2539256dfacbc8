"""Time-based evaluation of the idle-fragment survival model (planner.predict.survival).

Fit on the first `train_frac` of a log window (outcomes censored at the cut), test on landmark
rows of the rest (outcomes censored at the window end). Three predictors of the remaining idle
time of a node idle at a decision time:

- `cox`: the Cox model on all covariates (its median remaining time),
- `km`: the Kaplan-Meier baseline conditioned on the time already idle,
- `naive`: remaining = time already idle.

Figures: Harrell's concordance index on the test rows (scikit-survival's
`concordance_index_censored`; 0.5 = no better than chance at ordering nodes by when they are
reclaimed), and calibration: test rows binned by predicted median (deciles), per bin the median
prediction beside the observed median remaining time (Kaplan-Meier within the bin, so censored
rows count correctly), and overall the share of rows still idle at their predicted median
(Kaplan-Meier of remaining / predicted at 1; 0.5 when calibrated).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.errors import InputError
from planner.idle import fragments
from planner.idle.window import Window
from planner.predict.survival import (
    MAX_ROWS,
    STEP_S,
    Fragments,
    Landmarks,
    SurvivalModel,
    curves,
    fit,
    km_curve,
    landmarks,
)

MODELS = ("cox", "km", "naive")
BIG_S = 1e12  # stands for "longer than anything observed" where a risk score needs a number


def predict_median(model: SurvivalModel, lm: Landmarks) -> dict[str, np.ndarray]:
    """Median remaining idle time per row, by each predictor (seconds; +inf = beyond the data)."""
    return {"cox": model.quantile_s(model.lin(lm.x)), "km": model.km_quantile_s(lm.age_s),
            "naive": np.asarray(lm.age_s, float)}


def _km_median(time_s, event) -> float:
    t, s = km_curve(time_s, event)
    i = np.searchsorted(-s, -0.5, side="left")
    return float(t[i]) if i < len(t) else float("inf")


def _share_beyond(time_s, event, pred) -> float:
    """Kaplan-Meier estimate of P(remaining > predicted median)."""
    p = np.maximum(np.where(np.isfinite(pred), pred, BIG_S), 1.0)
    t, s = km_curve(np.asarray(time_s) / p, event)
    i = np.searchsorted(t, 1.0, side="right") - 1
    return float(s[i]) if i >= 0 else 1.0


def calibration(lm: Landmarks, preds: dict, bins: int = 10) -> pd.DataFrame:
    """Per predictor and bin of predicted median: rows, predicted and observed median remaining."""
    out = []
    for name, p in preds.items():
        pf = np.where(np.isfinite(p), p, BIG_S)
        edges = np.unique(np.quantile(pf, np.linspace(0, 1, bins + 1)))
        b = np.clip(np.searchsorted(edges, pf, side="right") - 1, 0, max(len(edges) - 2, 0))
        for k in np.unique(b):
            m = b == k
            out.append({"model": name, "bin": int(k), "rows": int(m.sum()),
                        "predicted_median_s": float(np.median(p[m])),
                        "observed_median_s": _km_median(lm.time_s[m], lm.event[m])})
    return pd.DataFrame(out)


def concordance(lm: Landmarks, preds: dict) -> dict[str, float | None]:
    from sksurv.metrics import concordance_index_censored  # lazy: heavy (sksurv)

    res = {}
    for name, p in preds.items():
        risk = -np.where(np.isfinite(p), p, BIG_S)
        try:
            res[name] = float(concordance_index_censored(lm.event, lm.time_s, risk)[0])
        except ValueError:  # no comparable pairs (e.g. no events in the test span)
            res[name] = None
    return res


def evaluate(fr: Fragments, train_frac: float = 0.7, step_s: float = STEP_S, max_rows: int | None = MAX_ROWS,
             test_rows: int | None = 20_000, seed: int = 0, bins: int = 10) -> tuple[dict, pd.DataFrame]:
    """(JSON-ready figures, calibration table) of a fit on the first train_frac of the window."""
    figures, cal, _ = evaluate_model(fr, train_frac, step_s, max_rows, test_rows, seed, bins)
    return figures, cal


def evaluate_model(fr: Fragments, train_frac: float = 0.7, step_s: float = STEP_S,
                   max_rows: int | None = MAX_ROWS, test_rows: int | None = 20_000, seed: int = 0,
                   bins: int = 10) -> tuple[dict, pd.DataFrame, SurvivalModel]:
    """evaluate(), and the model fit on the training span."""
    if not 0.0 < float(train_frac) < 1.0:
        raise InputError(f"train_frac must be between 0 and 1, got {train_frac!r}", field="train_frac")
    cut = fr.t0 + float(train_frac) * (fr.t1 - fr.t0)
    model = fit(fr, cut_s=cut, step_s=step_s, max_rows=max_rows, seed=seed)
    test = landmarks(fr, cut, fr.t1, fr.t1, model.prior_hist, step_s, test_rows, seed + 1)
    if len(test) == 0:
        raise InputError("no node is idle at any test landmark: nothing to evaluate", field="log")
    preds = predict_median(model, test)
    cal = calibration(test, preds, bins)
    ci = concordance(test, preds)
    figures = {
        "train_frac": float(train_frac), "cut_s": cut, "step_s": step_s, "seed": seed,
        "train": model.info, "test_rows": len(test), "test_events": int(test.event.sum()),
        "concordance": ci,
        "share_idle_at_predicted_median": {k: _share_beyond(test.time_s, test.event, p)
                                           for k, p in preds.items()},
        "median_abs_log2_error": {k: _log2_err(cal[cal.model == k]) for k in preds},
    }
    return figures, cal, model


def _log2_err(cal: pd.DataFrame) -> float | None:
    """Row-weighted median |log2(predicted / observed)| over calibration bins with finite values."""
    ok = np.isfinite(cal.predicted_median_s) & np.isfinite(cal.observed_median_s) & \
        (cal.predicted_median_s > 0) & (cal.observed_median_s > 0)
    if not ok.any():
        return None
    e = np.abs(np.log2(cal.predicted_median_s[ok] / cal.observed_median_s[ok])).to_numpy()
    w = cal.rows[ok].to_numpy()
    o = np.argsort(e)
    c = np.cumsum(w[o])
    return float(e[o][np.searchsorted(c, c[-1] / 2.0)])


def evaluate_log(con, win: Window, seed: int = 0) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """(figures, calibration table, survival curves) of a fit on the first 70 % of a window (the
    Idle page passes the whole log: Window(log, pool_size=K)) with 30,000 training and 10,000 test
    rows (a few seconds): the Idle page's survival section. `seed`: the model fit's."""
    fr = Fragments.of(fragments.characterize(con, win))
    figs, cal, model = evaluate_model(fr, seed=seed, max_rows=30_000, test_rows=10_000)
    figs["derived_identity"] = fr.derived
    return figs, cal, curves(model)
