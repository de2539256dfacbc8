"""The Planner's run pair split in two (replays, then limits) and run at once by fork: the same
results as one replay after the other, float for float (planner.scenario.pair, forked)."""

from __future__ import annotations

import os

import pytest

from planner.errors import InputError
from planner.scenario import forked
from planner.scenario.pair import Pair, make_scenario, run_pair
from planner.scenario.record import run_scenario
from tests.helpers import assert_same_run

SC = {"log": "summit-2021", "start": "2021-02-10 20:21:15", "hours": 1.0, "pool": "log", "pool_size": 600,
      "workload": "hpo", "count": 16, "interarrival_s": 90, "allocator": "dp", "baseline": "equal-share",
      "pj_max": 6, "seed": 1}
@pytest.mark.slow  # 2.5 s at load 10 (three pairs on the Summit log)
@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork: Linux")
@pytest.mark.parametrize("parallel", [True, False])  # serial: both replays and twins on the same inputs
def test_parallel_pair_equals_each_scenario_run_alone(summit_con, parallel):
    alone = {label: run_scenario(make_scenario(SC, label), con=summit_con) for label in ("dp", "equal-share")}
    seen = []
    par = run_pair(SC, con=summit_con, parallel=parallel, progress=lambda *a: seen.append(a))
    assert list(par) == ["dp", "equal-share"]
    for label in par:
        assert "cost_free" in par[label].summary
        assert list(par[label].summary) == list(alone[label].summary)  # the same keys in the same order
        assert_same_run(par[label], alone[label])
    assert seen and seen[-1][1] == pytest.approx(1.0)
    assert all(a[0] == "dp" for a in seen) if parallel else {a[0] for a in seen} == {"dp", "equal-share"}


def test_the_pair_reads_its_pool_and_trainers_once(summit_con):
    pair = Pair(SC, con=summit_con)
    (s1, specs1, pool1), (s2, specs2, pool2) = pair.inputs.values()
    assert (s1.allocator, s2.allocator) == ("dp", "equal-share")
    assert specs2 is specs1 and pool2 is pool1  # the allocator changes neither


def test_limits_come_after_the_replays(summit_con):
    pair = Pair({**SC, "baseline": "none"}, con=summit_con)
    runs = pair.replay()
    assert "cost_free" not in runs["dp"].summary
    added = pair.limits(runs)
    assert set(added["dp"]) == {"cost_free"} and runs["dp"].summary["cost_free"] == added["dp"]["cost_free"]
    assert Pair({**SC, "baseline": "none", "bound": "none"}, con=summit_con).limits(runs) == {"dp": {}}


def test_a_bad_field_is_refused_before_anything_runs(summit_con):
    with pytest.raises(InputError) as e:
        Pair({**SC, "pj_max": 0}, con=summit_con)
    assert e.value.field == "pj_max"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork: Linux")
def test_run_all_gives_the_calls_results_in_order_and_reruns_a_child_that_left_none():
    parent = os.getpid()

    def dies_in_a_child():
        if os.getpid() != parent:
            os._exit(9)  # as a crash would: no result file
        return "here"

    def fails():
        raise InputError("bad value", field="x")

    assert forked.run_all([lambda: 1, lambda: os.getpid() != parent, lambda: 3], workers=2) == [1, True, 3]
    assert forked.run_all([lambda: 1, dies_in_a_child], workers=2) == [1, "here"]
    with pytest.raises(InputError, match="bad value"):  # the call's own exception, raised here
        forked.run_all([lambda: 1, fails], workers=2)
    with pytest.raises(InputError, match="bad value"):  # a failure here ends the children too
        forked.run_all([fails, lambda: 2], workers=2)
    assert forked.run_all([lambda: 1, lambda: 2], parallel=False) == [1, 2]
