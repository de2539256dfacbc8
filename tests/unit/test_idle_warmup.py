"""planner.idle.warmup: the warm-up at a log's start (the machine filling up) is found where it is,
and not on a steady or a short log."""

from __future__ import annotations

import numpy as np
import pytest

from planner.idle import warmup
from planner.idle.window import Window


def test_warmup_is_found_where_the_machine_fills_up():
    t = np.arange(0, 48 * 3600 + 1, 600.0)
    # 90 % idle at the start, falling to 10 % over 8 h, then steady around 10 %
    share = np.where(t < 8 * 3600, 0.9 - 0.8 * t / (8 * 3600), 0.1 + 0.02 * np.sin(t / 5000))
    w = warmup.detect(t, share * 1000, 1000)
    assert w.detected and 5 <= w.hours <= 8
    assert w.idle_share_during > 0.4 and w.idle_share_after == pytest.approx(0.1, abs=0.03)


def test_no_warmup_on_a_steady_log_or_a_short_one():
    t = np.arange(0, 48 * 3600 + 1, 600.0)
    assert not warmup.detect(t, np.full(len(t), 300.0), 1000).detected
    assert not warmup.detect(t[:20], np.r_[np.full(10, 900.0), np.full(10, 100.0)], 1000).detected


def test_theta_2022_starts_with_a_warmup(tmp_path):
    from planner import logs, paths
    from planner.idle import fragments
    from planner.store import db

    con = db.connect(tmp_path / "t.duckdb")
    rep = logs.ingest(con, paths.DATASETS / "ANL-Theta-2022.swf.gz")
    s = fragments.idle_series(con, Window(rep["log"]), harvest=False)  # as loaded (views mask the warm-up)
    w = warmup.detect(s["t_s"], s["idle_nodes"], int(rep["nodes"]))
    con.close()
    assert w.detected and 6 <= w.hours <= 72
    assert w.idle_share_during > 0.5 and w.idle_share_after < 0.2
