"""Many windows: the window set is exact, the spread and paired statistics by hand, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from planner.errors import InputError
from planner.replay.windows import parse_windows, summarize, window_set
from planner.report import stats

H = 3600.0


def test_every_window_back_to_back_count_and_boundaries():
    # 14.9 days in 24 h windows: 14 whole windows, back to back, the tail not replayed
    t0 = 1_000_000.0
    ws = window_set(t0, t0 + 14.9 * 24 * H, hours=24)
    assert len(ws) == 14
    assert ws[0] == (t0, t0 + 24 * H)
    assert ws[-1] == (t0 + 13 * 24 * H, t0 + 14 * 24 * H)
    assert all(b - a == 24 * H for a, b in ws)
    assert all(ws[i + 1][0] - ws[i][0] == 24 * H for i in range(len(ws) - 1))


def test_stride_and_exact_fit():
    # [0, 10 h], 4 h windows every 3 h: starts 0, 3, 6 (6 + 4 = 10 fits exactly), not 9
    ws = window_set(0.0, 10 * H, hours=4, stride_hours=3)
    assert ws == [(0.0, 4 * H), (3 * H, 7 * H), (6 * H, 10 * H)]
    # overlapping windows, stride 1 h: floor((10 - 4) / 1) + 1 = 7
    assert len(window_set(0.0, 10 * H, hours=4, stride_hours=1)) == 7
    # shorter than one window: none
    assert window_set(0.0, 3 * H, hours=4) == []


def test_random_windows_seeded_inside_and_sorted():
    a = window_set(0.0, 100 * H, hours=6, count=20, seed=3)
    b = window_set(0.0, 100 * H, hours=6, count=20, seed=3)
    c = window_set(0.0, 100 * H, hours=6, count=20, seed=4)
    assert a == b and a != c and len(a) == 20
    starts = [s for s, _ in a]
    assert starts == sorted(starts)
    assert all(0.0 <= s and e <= 100 * H and e - s == 6 * H and s == round(s) for s, e in a)


@pytest.mark.parametrize("kw, field", [({"hours": 0}, "window_hours"),
                                       ({"hours": 4, "stride_hours": -1}, "stride_hours"),
                                       ({"hours": 4, "count": 0}, "windows"),
                                       ({"hours": 20, "count": 2}, "window_hours")])
def test_bad_window_sets_name_the_field(kw, field):
    with pytest.raises(InputError) as e:
        window_set(0.0, 10 * H, **kw)
    assert e.value.field == field


def test_parse_windows():
    assert parse_windows("all") is None and parse_windows(" 12 ") == 12
    for bad in ("0", "x", "-3", "1.5"):
        with pytest.raises(InputError):
            parse_windows(bad)


def test_spread_by_hand():
    s = stats.spread([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    # numpy linear percentiles: p10 = 1 + 0.9 * 1 = 1.9, median 5.5, p90 = 9.1
    assert s["n"] == 10 and s["median"] == 5.5
    assert s["p10"] == pytest.approx(1.9) and s["p90"] == pytest.approx(9.1)
    lo, hi = s["median_ci"]
    assert 1 <= lo <= 5.5 <= hi <= 10
    assert stats.spread([None, float("nan")])["n"] == 0
    assert stats.spread([4.0])["median_ci"] == [4.0, 4.0]


def test_paired_by_hand():
    # five windows: a - b = +0.1, +0.2, -0.05, +0.1, 0 -> 3 wins, 1 loss, 1 tie, median +0.1
    a = [0.9, 0.8, 0.7, 0.95, 0.6]
    b = [0.8, 0.6, 0.75, 0.85, 0.6]
    p = stats.paired(a, b)
    assert (p["n"], p["wins"], p["losses"], p["ties"]) == (5, 3, 1, 1)
    assert p["median_diff"] == pytest.approx(0.1)
    assert p["mean_diff"] == pytest.approx((0.1 + 0.2 - 0.05 + 0.1) / 5)
    # sign test of 3 wins vs 1 loss: 2 * P(X <= 1 | n=4) = 2 * (1 + 4) / 16
    assert p["sign_test_p"] == pytest.approx(10 / 16)
    lo, hi = p["median_diff_ci"]
    assert -0.05 - 1e-12 <= lo <= 0.1 <= hi <= 0.2 + 1e-12
    assert stats.paired_sentence("dp", "equal-share", p, "U").startswith(
        "dp beats equal-share in 3 of 5 windows, 1 ties, by +0.1 U median (90 % CI")
    # lower is better: the same numbers are 1 win (the -0.05) and 3 losses
    q = stats.paired(a, b, higher_is_better=False)
    assert (q["wins"], q["losses"]) == (1, 3)
    # a missing value drops the window
    assert stats.paired([1.0, None], [0.5, 0.4])["n"] == 1
    with pytest.raises(ValueError):
        stats.paired([1.0], [1.0, 2.0])


def test_bootstrap_ci_is_reproducible_and_covers_the_median():
    x = np.random.default_rng(0).normal(0.9, 0.05, 28)
    assert stats.bootstrap_median_ci(x) == stats.bootstrap_median_ci(x)
    lo, hi = stats.bootstrap_median_ci(x)
    assert lo < float(np.median(x)) < hi


def test_summarize_pairs_by_window():
    rows = [{"window": w, "allocator": a, "status": "ok", "utilization_efficiency": u}
            for w, (d, e) in enumerate([(0.9, 0.8), (0.95, 0.9), (0.85, 0.86)])
            for a, u in (("dp", d), ("equal-share", e))]
    s = summarize(rows, ["dp", "equal-share"])
    assert s["baseline"] == "equal-share"
    p = s["paired"]["dp"]["utilization_efficiency"]
    assert (p["wins"], p["losses"]) == (2, 1)
    assert s["per_allocator"]["dp"]["utilization_efficiency"]["median"] == pytest.approx(0.9)
    assert s["paired"]["dp"]["sentence"].startswith("dp beats equal-share in 2 of 3 windows")


def _planner(*args, db):
    return subprocess.run([sys.executable, "-m", "planner", *args, "--db", str(db)], capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
def test_cli_windows_rows_and_summary(summit_db):
    r = _planner("simulate", "--windows", "all", "--window-hours", "1", "--stride-hours", "120",
                 "--pool-size", "1024", "--count", "20", "--executor", "inline", "--json", db=summit_db)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    # the Summit log spans 358.18 h: 1 h windows every 120 h start at 0, 120, 240 h
    assert out["windows"] == 3 and len(out["rows"]) == 6
    assert {row["allocator"] for row in out["rows"]} == {"dp", "equal-share"}
    assert all(row["status"] == "ok" for row in out["rows"])
    # the first window has no idle node among the first 1,024 (U undefined); the others have some
    with_u = [row for row in out["rows"] if row["utilization_efficiency"] is not None]
    assert len(with_u) == 4 and all(row["cost_free_utilization_efficiency"] is not None for row in with_u)
    p = out["summary"]["paired"]["dp"]["utilization_efficiency"]
    assert (p["n"], p["dropped"]) == (2, 1)
    assert "windows" in out["summary"]["paired"]["dp"]["sentence"]


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_cli_windows_bad_input_is_one_line(summit_db):
    r = _planner("simulate", "--windows", "many", "--window-hours", "1", db=summit_db)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "windows" in r.stderr
    r = _planner("simulate", "--windows", "all", db=summit_db)
    assert r.returncode == 2 and "window-hours" in r.stderr.replace("_", "-")
    r = _planner("simulate", "--window-hours", "3", db=summit_db)
    assert r.returncode == 2 and "--windows" in r.stderr
