"""The run-time estimate shown before a replay or a grid (planner.replay.estimate): measured costs for the
fast allocators, a cost model fitted to real replays for the MILPs (the Trainers a decision sees, the
horizon, the pool); "Long run" only where a run is long. The fit's check against wall times is
benchmarks/bench_estimate.py (timings are not tested here)."""

from __future__ import annotations

import pytest

from planner.idle import fragments
from planner.idle.window import Window
from planner.replay import estimate

START = "2021-02-10T20:21:15"
MODELARTS = dict(pool="fixed", pool_size=150, hours=24.0, workload="philly", allocator="horizon-milp",
                 baseline="greedy", pj_max=10000, cadence="interval", step_min=5.0, min_every_step=True,
                 rup=0.0, rdw=0.0)  # the Papers page's ModelArts link (planner.studies.modelarts.PLANNER)


def _sc(allocator, baseline, hours, pool):
    return dict(log="summit-2021", start=START, hours=float(hours), pool_size=pool, allocator=allocator,
                baseline=baseline, pj_max=10, pool="log")


@pytest.mark.slow  # measures solve times (a wall-clock bound): the slow tier
def test_fast_exact_allocators_are_not_long_runs(summit_con):
    """A day of auto against dp on all 4,734 nodes took 2.6 s; the old table said 85 s, "Long run"."""
    s = fragments.summary(summit_con, Window("summit-2021", start=START, hours=24.0, pool_size=4734))
    e = estimate.replay_estimate(_sc("auto", "dp", 24, 4734), s)
    assert not e.long and e.seconds < 15, e.text
    # a decision per pool event, arrival and completion (hpo: 1,000 trials every 36 s, all in the day; Pj_max
    # full, so most arrivals are decided at a completion): the replay made 3,340 for 2,163 pool events
    assert s["events"] + 1000 < e.decisions < 1.05 * 3340, e.text
    # measured per decision: sub-millisecond solve plus the replay's bookkeeping
    per = estimate.per_decision_s("auto", 4734, 10)
    assert estimate.replay_overhead_s(4734) < per < 0.02


def test_milp_weeks_are_long_runs(summit_con):
    s = fragments.summary(summit_con, Window("summit-2021", start=START, hours=168.0, pool_size=4096))
    e = estimate.replay_estimate(_sc("milp", "dp", 168, 4096), s)
    assert e.long and e.text.startswith("Long run."), e.text
    # the node-level MILP: one binary per Trainer and pool node
    assert estimate.milp_decision_s("milp-node", 10, 2048) > 1.9 * estimate.milp_decision_s("milp-node", 10, 1024)


def test_sweep_estimate_divides_by_workers():
    cells = [{"allocator": "dp", "pool_size": 256}] * 4
    one, two = (estimate.sweep_estimate(cells, 6.0, 500, w) for w in (1, 2))
    assert two.seconds < one.seconds and one.decisions == 4 * estimate.DECISIONS_PER_EVENT * 500


def test_an_interval_cadence_counts_its_decisions_not_the_events():
    """ModelArts' link (a fixed 150-node pool, horizon-milp against greedy, every 5 min for 24 h) read
    "Long run, about 5.8 min (~3,600 decisions)", then ~28 s with the old table, and took 3.7 s: it makes
    24 x 12 = 288 decisions each, with ~8 Trainers at a time (bench_estimate: 3.1 s against 3.1 s)."""
    e = estimate.replay_estimate(MODELARTS, None)
    assert e.decisions == 288 and "a decision every 5 min over 24 h" in e.text and not e.long, e.text
    assert 1.0 < e.seconds < 8.0, e.text  # not 28 s
    every_10 = estimate.replay_estimate(dict(MODELARTS, step_min=10.0), None)
    assert every_10.decisions == 144 and every_10.seconds < e.seconds
    # the events cadence on a fixed pool: a decision per arrival (500 Philly jobs at 468 distinct times in
    # 24 h) and per completion (Pj_max 10,000 never full: they are apart)
    events = estimate.replay_estimate(dict(MODELARTS, cadence="events"), None)
    flow = estimate.expected_flow(MODELARTS, 150)
    assert flow.arrivals == 468 and 0 < flow.completions <= 500
    assert events.decisions == flow.arrivals + flow.completions
    assert flow.waiting == 0
    # hpo with Pj_max 10 full: most arrivals wait, each decided at the completion that admits it
    hpo = dict(pool="fixed", pool_size=64, hours=12.0, workload="hpo", pj_max=10, allocator="greedy", baseline="none")
    flow = estimate.expected_flow(hpo, 64)
    assert flow.trainers == 10 and flow.arrivals == 1000  # 1,000 trials every 36 s: all in 10 h
    assert 0.9 < flow.waiting < 1 and 0 < flow.completions <= 1000
    assert estimate.replay_estimate(hpo, None).decisions == pytest.approx(
        1000 + flow.completions - flow.waiting * min(1000, flow.completions))


def test_the_fitted_model_by_hand():
    """milp: 8.5 ms + 0.03 ms per Trainer; milp-node: 2 ms + 0.35 ms per Trainer x node; horizon-milp:
    (2.6 ms + 0.055 ms per job x step x level) x the contention factor K (when n x Nmax > P)."""
    assert estimate.milp_decision_s("milp", 10, 1024) == pytest.approx(0.0088)
    assert estimate.milp_decision_s("milp-node", 10, 64) == pytest.approx(0.002 + 0.00035 * 640)
    # ModelArts' link: 8 Philly jobs (Nmax 4: levels 1, 2, 4) on 150 nodes, T = 5: they fit, no contention
    assert estimate.milp_decision_s("horizon-milp", 8, 150, 5, 4) == pytest.approx((2.6 + 0.055 * 8 * 5 * 3) / 1000)
    # Summit's HPO Trainers: 10 of Nmax 64 on 150 nodes (levels 1..64: 7), T = 5: they compete for the
    # pool (u = 150 / 640), K = 1 + 2.86e4 (64 / 64) u^3.14 (1 - u)^6.04 = 60.9 (a replay of that: 1.15 s
    # a decision)
    u = 150 / 640
    k = 1 + 2.86e4 * u ** 3.14 * (1 - u) ** 6.04
    assert k == pytest.approx(60.9, abs=0.1)
    assert estimate.milp_decision_s("horizon-milp", 10, 150, 5, 64) == pytest.approx(
        (2.6 + 0.055 * 10 * 5 * 7) * k / 1000)
    # the same Trainers on 1,024 nodes all get their Nmax: no contention
    assert estimate.milp_decision_s("horizon-milp", 10, 1024, 5, 64) == pytest.approx(
        (2.6 + 0.055 * 10 * 5 * 7) / 1000)
    # never beyond the solver's time limit
    assert estimate.milp_decision_s("horizon-milp", 500, 4096, 50, 64, time_limit_s=10.0) == 10.0


def test_the_milp_estimates_grow_with_the_trainers_and_the_horizon():
    base = dict(pool="fixed", pool_size=256, hours=6.0, workload="hpo", allocator="horizon-milp", baseline="none")
    small, large = (estimate.replay_estimate(dict(base, pj_max=p), None) for p in (2, 20))
    assert large.seconds > small.seconds
    assert "~2 Trainers at a time" in small.text and "~20 Trainers at a time" in large.text
    short, long_ = (estimate.replay_estimate(dict(MODELARTS, horizon_steps=t), None) for t in (1, 20))
    assert long_.seconds > 3 * short.seconds
    for a in ("milp", "milp-node", "horizon-milp"):
        assert estimate.milp_decision_s(a, 40, 128, 5, 8) > estimate.milp_decision_s(a, 4, 128, 5, 8)


def test_the_trainers_a_decision_sees():
    """Pj_max when the workload fills it (hpo: 1,000 trials every 36 s for 10 places); fewer when its jobs
    are short (ModelArts' link: ~7 expected, 8.0 seen in its replay)."""
    hpo = dict(pool="fixed", pool_size=64, hours=6.0, workload="hpo", pj_max=10)
    assert estimate.expected_trainers(hpo, 64) == 10
    n = estimate.expected_trainers(MODELARTS, 150)
    assert 4 < n < 16
    # a workload that is not a built-in one is not read before the run (the page's server process would read
    # the file a URL names): Pj_max, and the older decision rules
    for path in ("/dev/zero", "upload:trainers.csv", "/nonexistent/trainers.csv"):
        assert estimate.workload_of(dict(hpo, workload=path)) is None
        assert estimate.expected_trainers(dict(hpo, workload=path), 64) == 10
    # nor are more Trainers than MAX_READ_TRAINERS (the server's time and memory)
    assert estimate.workload_of(dict(hpo, count=estimate.MAX_READ_TRAINERS + 1)) is None
    e = estimate.replay_estimate(dict(hpo, workload="/dev/zero", allocator="dp", baseline="none"), None)
    assert e.decisions == estimate.FIXED_POOL_DECISIONS_PER_H * 6


def test_a_grid_s_milp_cells_see_their_share_of_the_idle_nodes():
    """Given the whole machine's window, a MILP cell of pool_size K sees eq_nodes x K / nodes idle nodes (Summit
    6 h: 64.2 of the first 1,024; the machine's 296.9 x 1,024 / 4,734 = 64.2), not all K."""
    summ = {"events": 491, "eq_nodes": 296.9, "nodes": 4734}
    cells = [{"allocator": "milp-node", "pool_size": 1024}]
    share = estimate.sweep_estimate(cells, 6.0, 491, 1, 10, window_summary=summ)
    whole = estimate.sweep_estimate(cells, 6.0, 491, 1, 10)
    assert share.decisions == whole.decisions == estimate.DECISIONS_PER_EVENT * 491
    per = estimate.per_decision_s("milp-node", 1024, 10, pool_nodes=296.9 / 4734 * 1024, pool_varies=True)
    assert share.seconds == pytest.approx(estimate.WORKER_START_S * 1.5 + share.decisions * per)
    assert share.seconds < whole.seconds / 5  # milp-node is linear in the pool: ~64 idle nodes, not 1,024
    # the fast allocators keep their measured cost
    dp = [{"allocator": "dp", "pool_size": 256}]
    assert (estimate.sweep_estimate(dp, 6.0, 491, 1, 10, window_summary=summ).seconds
            == estimate.sweep_estimate(dp, 6.0, 491, 1, 10).seconds)
