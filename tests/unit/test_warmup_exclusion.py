"""Excluding a warm-up (planner.idle.warmup): the one rule every page applies."""

from __future__ import annotations

from planner.idle import warmup


def test_default_start_is_after_a_detected_warmup():
    assert warmup.default_start_s(0.0, None) == 0.0
    assert warmup.default_start_s(0.0, {"detected": False, "end_s": 50.0}) == 0.0
    assert warmup.default_start_s(0.0, {"detected": True, "end_s": 50.0}) == 50.0
    assert warmup.default_start_s(80.0, {"detected": True, "end_s": 50.0}) == 80.0
