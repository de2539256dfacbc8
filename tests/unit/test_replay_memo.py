"""A decision whose inputs did not change since the previous one, which changed nothing, is
reused (planner.replay.engine.MEMO_ALLOCATORS): the replay's every record is the one it has when
the allocator is asked again at every event, float for float."""

from __future__ import annotations

import pandas as pd
import pytest

from planner.replay import engine
from planner.scenario.record import run_scenario

WALL = {"wall_s", "solve_s", "build_s", "reused"}  # what a reused decision may change


def _frames_equal(a, b) -> None:
    sa = {k: v for k, v in a.summary.items() if k not in WALL}
    sb = {k: v for k, v in b.summary.items() if k not in WALL}
    assert sa == sb
    for t in ("timeline", "trainers", "decisions", "preemptions"):
        fa, fb = getattr(a, t), getattr(b, t)
        keep = [c for c in fa.columns if c not in WALL]
        pd.testing.assert_frame_equal(fa[keep], fb[keep], check_exact=True)


@pytest.mark.parametrize("kw", [
    dict(allocator="dp", pj_max=4),
    dict(allocator="equal-share", pj_max=4, admission="min-fits"),
    dict(allocator="dp", pj_max=3, objective="scaling-efficiency", rup=40, rdw=30),
])
def test_reused_decisions_change_no_record(summit_con, monkeypatch, kw):
    sc = {"log": "summit-2021", "start": "2021-02-10 20:21:15", "hours": 2.0, "pool": "log", "pool_size": 700,
          "workload": "hpo", "count": 40, "interarrival_s": 60, "bound": "none", **kw}
    memo = run_scenario(sc, con=summit_con)
    monkeypatch.setattr(engine, "MEMO_ALLOCATORS", frozenset())
    asked = run_scenario(sc, con=summit_con)
    reused = memo.decisions["reused"]
    assert reused.sum() >= 10 and not asked.decisions["reused"].any()  # the rule really applied
    assert (memo.decisions.loc[reused, "changed"] == 0).all()
    _frames_equal(memo, asked)


def test_no_reuse_where_the_answer_may_depend_on_the_clock(summit_con):
    sc = {"log": "summit-2021", "start": "2021-02-10 20:21:15", "hours": 1.0, "pool": "log", "pool_size": 700,
          "workload": "hpo", "count": 20, "interarrival_s": 60, "bound": "none", "pj_max": 4}
    for kw in (dict(allocator="dp", objective="progress"), dict(allocator="greedy")):
        assert not run_scenario({**sc, **kw}, con=summit_con).decisions["reused"].any()
