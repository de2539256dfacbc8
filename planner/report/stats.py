"""Statistics of a headline over many windows: its spread, and a paired comparison.

    spread([0.82, 0.91, ...]) -> {"n", "median", "p10", "p90", "min", "max", "mean",
                                  "median_ci": [lo, hi], "ci_level"}
    paired(dp, equal_share) -> {"n", "wins", "losses", "ties", "median_diff", "p10_diff",
                                "p90_diff", "median_diff_ci": [lo, hi], "sign_test_p", ...}
    paired_sentence("dp", "equal share", p, "U") -> "dp beats equal share in 27 of 28 windows, ..."

Definitions (one place; docs/windows.md repeats them):

- median, 10 % and 90 % points: numpy's linear-interpolation percentiles of the windows' values;
  the 10-90 % band holds the middle 80 % of the windows.
- bootstrap CI of the median: percentile bootstrap, `BOOT` resamples of the windows with
  replacement (seeded: the same input gives the same interval), the (1 - level)/2 and
  (1 + level)/2 percentiles of the resampled medians. Windows of one log are not independent
  (neighbouring days share weather); the interval reads as "over windows like these".
- paired comparison: per window the difference a - b (same window, same workload, same seed);
  wins = windows with a > b by more than `tie_tol` (relative to |b|), losses the reverse, ties
  the rest; the median difference with its bootstrap CI (resampling windows, pairs kept);
  the two-sided exact sign test p-value of wins vs losses (ties dropped).
"""

from __future__ import annotations

import math

import numpy as np

BOOT = 2000
CI_LEVEL = 0.90
TIE_TOL = 1e-9


def _clean(values) -> np.ndarray:
    a = np.asarray([np.nan if v is None else v for v in values], dtype=float)
    return a[np.isfinite(a)]


def bootstrap_median_ci(values, level: float = CI_LEVEL, boot: int = BOOT, seed: int = 0) -> list | None:
    """Percentile-bootstrap interval of the median; None for no values; [x, x] for one."""
    a = _clean(values)
    if not len(a):
        return None
    if len(a) == 1:
        return [float(a[0]), float(a[0])]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), size=(boot, len(a)))
    meds = np.median(a[idx], axis=1)
    lo, hi = np.percentile(meds, [50 * (1 - level), 50 * (1 + level)])
    return [float(lo), float(hi)]


def spread(values, level: float = CI_LEVEL, boot: int = BOOT, seed: int = 0) -> dict:
    """Median, 10-90 % band, min/max, mean and the bootstrap CI of the median (None-safe)."""
    a = _clean(values)
    if not len(a):
        return {"n": 0, "median": None, "p10": None, "p90": None, "min": None, "max": None, "mean": None,
                "median_ci": None, "ci_level": level}
    p10, med, p90 = np.percentile(a, [10, 50, 90])
    return {"n": int(len(a)), "median": float(med), "p10": float(p10), "p90": float(p90),
            "min": float(a.min()), "max": float(a.max()), "mean": float(a.mean()),
            "median_ci": bootstrap_median_ci(a, level, boot, seed), "ci_level": level}


def sign_test_p(wins: int, losses: int) -> float | None:
    """Two-sided exact binomial sign test, P(as extreme | p = 1/2); None without non-ties."""
    n = wins + losses
    if n == 0:
        return None
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
    return float(min(1.0, 2 * tail))


def paired(a, b, level: float = CI_LEVEL, boot: int = BOOT, seed: int = 0, tie_tol: float = TIE_TOL,
           higher_is_better: bool = True) -> dict:
    """Paired comparison of a and b (one value per window, same order). Windows where either is
    missing are dropped (counted in `dropped`). With higher_is_better False, a "win" is a < b."""
    x = np.asarray([np.nan if v is None else v for v in a], dtype=float)
    y = np.asarray([np.nan if v is None else v for v in b], dtype=float)
    if len(x) != len(y):
        raise ValueError(f"paired values need one per window each, got {len(x)} and {len(y)}")
    ok = np.isfinite(x) & np.isfinite(y)
    d = x[ok] - y[ok]
    tol = tie_tol * np.maximum(np.abs(y[ok]), 1.0)
    sign = 1.0 if higher_is_better else -1.0
    wins = int(np.sum(sign * d > tol))
    losses = int(np.sum(sign * d < -tol))
    ties = int(len(d) - wins - losses)
    s = spread(d, level, boot, seed)
    return {"n": int(len(d)), "dropped": int((~ok).sum()), "wins": wins, "losses": losses, "ties": ties,
            "median_diff": s["median"], "p10_diff": s["p10"], "p90_diff": s["p90"],
            "mean_diff": s["mean"], "median_diff_ci": s["median_ci"], "ci_level": level,
            "sign_test_p": sign_test_p(wins, losses), "higher_is_better": higher_is_better}


def _fmt(x, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:+.{digits}g}" if abs(x) < 1e-3 else f"{x:+.{digits}f}".rstrip("0").rstrip(".")


def paired_sentence(a_name: str, b_name: str, p: dict, unit: str = "", digits: int = 3) -> str:
    """"dp beats equal-share in 27 of 28 windows, by +0.07 U median (90 % CI +0.05 to +0.09)"."""
    if not p["n"]:
        return f"{a_name} vs {b_name}: no window with both values"
    u = f" {unit}" if unit else ""
    ci = p["median_diff_ci"]
    cis = f" ({round(100 * p['ci_level'])} % CI {_fmt(ci[0], digits)} to {_fmt(ci[1], digits)})" if ci else ""
    verb = "beats" if p["wins"] >= p["losses"] else "loses to"
    count = p["wins"] if p["wins"] >= p["losses"] else p["losses"]
    tie = f", {p['ties']} ties" if p["ties"] else ""
    return (f"{a_name} {verb} {b_name} in {count} of {p['n']} windows{tie}, by "
            f"{_fmt(p['median_diff'], digits)}{u} median{cis}")
