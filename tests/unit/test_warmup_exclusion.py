"""Excluding a warm-up (planner.idle.warmup): the one rule every page applies."""

from __future__ import annotations

import pandas as pd

from planner.idle import warmup


def _logs():
    return pd.DataFrame({"name": ["a", "b"], "start_s": [0.0, 100.0], "end_s": [36000.0, 7300.0],
                         "start": ["1970-01-01T00:00:00Z", "1970-01-01T00:01:40Z"], "span_h": [10.0, 2.0]})


def test_exclude_moves_only_the_excluded_logs_start():
    out = warmup.exclude(_logs(), {"a": 7200.0})
    a, b = out.iloc[0], out.iloc[1]
    assert (a["start_s"], a["start"], a["span_h"]) == (7200.0, "1970-01-01T02:00:00Z", 8.0)
    assert (b["start_s"], b["span_h"]) == (100.0, 2.0)
    assert _logs().iloc[0]["start_s"] == 0.0  # the input is not changed


def test_an_exclusion_outside_the_log_is_ignored():
    out = warmup.exclude(_logs(), {"b": 9000.0, "a": -5.0})
    assert list(out["start_s"]) == [0.0, 100.0]


def test_whole_log_starts_after_an_excluded_warmup():
    assert warmup.whole_log("a", {}) == {}
    assert warmup.whole_log("a", {"b": 5.0}) == {}
    assert warmup.whole_log("a", {"a": 7200.0}) == {"start": "1970-01-01T02:00:00Z"}


def test_default_start_is_after_a_detected_warmup():
    assert warmup.default_start_s(0.0, None) == 0.0
    assert warmup.default_start_s(0.0, {"detected": False, "end_s": 50.0}) == 0.0
    assert warmup.default_start_s(0.0, {"detected": True, "end_s": 50.0}) == 50.0
    assert warmup.default_start_s(80.0, {"detected": True, "end_s": 50.0}) == 80.0
