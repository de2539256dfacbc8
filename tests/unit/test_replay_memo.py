"""A decision whose inputs did not change since the previous one, which changed nothing, is
reused (planner.replay.engine.MEMO_ALLOCATORS): the replay's every record is the one it has when
the allocator is asked again at every event, float for float."""

from __future__ import annotations

import pytest

from planner.replay import engine
from planner.scenario.record import run_scenario
from tests.helpers import WALL_FIELDS, assert_same_run

# what a reused decision may change: its wall-clock times and the flag saying it was reused
WALL = WALL_FIELDS | {"reused"}


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
    assert_same_run(memo, asked, WALL)


def test_no_reuse_where_the_answer_may_depend_on_the_clock(summit_con):
    sc = {"log": "summit-2021", "start": "2021-02-10 20:21:15", "hours": 1.0, "pool": "log", "pool_size": 700,
          "workload": "hpo", "count": 20, "interarrival_s": 60, "bound": "none", "pj_max": 4}
    for kw in (dict(allocator="dp", objective="progress"), dict(allocator="greedy")):
        assert not run_scenario({**sc, **kw}, con=summit_con).decisions["reused"].any()
