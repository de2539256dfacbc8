"""The run-time estimate shown before a replay or a grid (planner.replay.estimate): measured costs for the
fast allocators, a table for the MILPs; "Long run" only where a run is long."""

from __future__ import annotations

import pytest

from planner.idle import fragments
from planner.idle.window import Window
from planner.replay import estimate

START = "2021-02-10T20:21:15"


def _sc(allocator, baseline, hours, pool):
    return dict(log="summit-2021", start=START, hours=float(hours), pool_size=pool, allocator=allocator,
                baseline=baseline, pj_max=10, pool="log")


@pytest.mark.slow  # measures solve times (a wall-clock bound): the slow tier
def test_fast_exact_allocators_are_not_long_runs(summit_con):
    """A day of auto against dp on all 4,734 nodes took 2.6 s; the old table said 85 s, "Long run"."""
    s = fragments.summary(summit_con, Window("summit-2021", start=START, hours=24.0, pool_size=4734))
    e = estimate.replay_estimate(_sc("auto", "dp", 24, 4734), s)
    assert not e.long and e.seconds < 15, e.text
    assert e.decisions == estimate.DECISIONS_PER_EVENT * s["events"]
    # measured per decision: sub-millisecond solve plus the replay's bookkeeping
    per = estimate.per_decision_s("auto", 4734, 10)
    assert estimate.REPLAY_MS_PER_DECISION / 1000 < per < 0.02


def test_milp_weeks_are_long_runs(summit_con):
    s = fragments.summary(summit_con, Window("summit-2021", start=START, hours=168.0, pool_size=4096))
    e = estimate.replay_estimate(_sc("milp", "dp", 168, 4096), s)
    assert e.long and e.text.startswith("Long run.")
    assert estimate.per_decision_s("milp-node", 2048) == 2 * estimate.per_decision_s("milp-node", 1024)


def test_sweep_estimate_divides_by_workers():
    cells = [{"allocator": "dp", "pool_size": 256}] * 4
    one, two = (estimate.sweep_estimate(cells, 6.0, 500, w) for w in (1, 2))
    assert two.seconds < one.seconds and one.decisions == 4 * estimate.DECISIONS_PER_EVENT * 500


def test_an_interval_cadence_counts_its_decisions_not_the_events():
    """ModelArts' link (a fixed 150-node pool, horizon-milp against greedy, every 5 min for 24 h) read
    "Long run, about 5.8 min (~3,600 decisions)" and took 3.7 s: it makes 24 x 12 = 288 decisions each."""
    sc = dict(_sc("horizon-milp", "greedy", 24, 150), pool="fixed", cadence="interval", step_min=5.0)
    e = estimate.replay_estimate(sc, None)
    assert e.decisions == 288 and "a decision every 5 min over 24 h" in e.text and not e.long, e.text
    events = estimate.replay_estimate(dict(sc, cadence="events"), None)
    assert events.decisions == estimate.FIXED_POOL_DECISIONS_PER_H * 24 and events.seconds > e.seconds
