"""The replay's configuration record and its pluggable admission and cadence (planner.replay.config,
planner.replay.hooks)."""

from __future__ import annotations

import pytest

from planner.allocators import get
from planner.allocators.base import AllocOptions
from planner.replay.config import ReplayConfig, ReplayHooks
from planner.replay.hooks import Fcfs, Interval, MinFits
from planner.replay.pool import fixed_pool
from planner.replay.simulator import simulate
from planner.scenario.record import Scenario
from planner.scenario.schema import DEFAULTS
from planner.workload.trainers import Curve, TrainerSpec

LIN = Curve((0, 1, 4), (0.0, 100.0, 400.0))


def spec(i, submit=0.0, work=1e9, nmin=1, nmax=4):
    return TrainerSpec(id=f"t{i}", model="lin", curve=LIN, nmin=nmin, nmax=nmax, rup_s=10.0,
                       rdw_s=5.0, work_samples=work, submit_s=submit)


def test_defaults_are_the_schemas():
    cfg = ReplayConfig()
    for name in ("pj_max", "cadence", "step_min", "admission", "idle_during_solve", "scaling_delay_s"):
        assert getattr(cfg, name) == DEFAULTS[name], name


def test_from_scenario_reads_every_replay_field():
    sc = Scenario.from_dict({"pool": "fixed", "pool_size": 8, "pj_max": 3, "cadence": "interval",
                             "step_min": 2.5, "admission": "min-fits", "idle_during_solve": True,
                             "scaling_delay_s": 7.0, "allow_migration": True, "drop": True})
    cfg = sc.replay_config()
    assert (cfg.pj_max, cfg.cadence, cfg.step_min, cfg.admission) == (3, "interval", 2.5, "min-fits")
    assert cfg.idle_during_solve and cfg.scaling_delay_s == 7.0 and cfg.migrate_s > 0 and cfg.drop
    # the allocator options no longer carry replay settings nobody read
    assert set(sc.alloc_options().extra) == {"early_finish", "min_every_step"}


def test_keywords_and_record_give_the_same_replay():
    pool, specs = fixed_pool(6, 0.0, 3600.0), [spec(i, 60.0 * i, 2e5) for i in range(5)]
    a = simulate(pool, specs, "dp", config=ReplayConfig(pj_max=2, cadence="interval", step_min=1.0))
    b = simulate(pool, specs, "dp", pj_max=2, cadence="interval", step_min=1.0)
    c = simulate(pool, specs, "dp")
    cols = ["t_s", "trainers", "allocated_nodes", "rate_after_samples_per_s"]
    assert a.decisions[cols].equals(b.decisions[cols])
    assert a.trainers.equals(b.trainers)
    assert not a.decisions[cols].equals(c.decisions[cols])


def test_unknown_keyword_names_itself():
    with pytest.raises(TypeError, match="pjmax"):
        simulate(fixed_pool(2, 0.0, 10.0), [spec(0)], "dp", pjmax=3)


def test_bad_names_are_refused():
    with pytest.raises(ValueError, match="cadence"):
        ReplayConfig(cadence="hourly")
    with pytest.raises(ValueError, match="admission"):
        ReplayConfig(admission="lifo")
    with pytest.raises(ValueError, match="pj_max"):
        ReplayConfig(pj_max=0)


def test_allocator_sees_the_replays_pj_max_and_step():
    seen = []
    dp = get("dp")

    def spy(state, opts):
        seen.append((opts.pj_max, opts.step_min))
        return dp(state, opts)

    simulate(fixed_pool(4, 0.0, 600.0), [spec(0)], spy, AllocOptions(pj_max=99, step_min=99.0),
             ReplayConfig(pj_max=3, step_min=2.0))
    assert seen and set(seen) == {(3, 2.0)}


class NoneBefore(Fcfs):
    """A plugged-in admission rule: nothing is admitted before t = 100 s (counted via calls)."""

    name = "none-before"

    def __init__(self):
        self.calls = 0

    def admit(self, queued, admitted, n_idle, pj_max):
        self.calls += 1
        return 0 if self.calls < 3 else super().admit(queued, admitted, n_idle, pj_max)


def test_admission_hook_is_used():
    pool = fixed_pool(4, 0.0, 1000.0)
    specs = [spec(0, 0.0), spec(1, 100.0), spec(2, 200.0)]
    rule = NoneBefore()
    res = simulate(pool, specs, "dp", hooks=ReplayHooks(admission=rule))
    admits = sorted(res.trainers["admit_s"].dropna())
    assert rule.calls >= 3
    assert admits[0] == 200.0  # the first two events admitted nobody; the third admits the queue


def test_min_fits_rule():
    q = [spec(0, nmin=3), spec(1, nmin=2)]
    assert MinFits().admit(q, [], 4, 10) == 1
    assert MinFits().admit(q, [], 5, 10) == 2
    assert MinFits().admit(q, [spec(9, nmin=2)], 4, 10) == 0
    assert Fcfs().admit(q, [spec(9)], 0, 2) == 1


def test_cadence_hook_is_used():
    """A plugged-in cadence (ticks every 2 minutes) equals the named interval cadence with step 2."""
    pool, specs = fixed_pool(6, 0.0, 1800.0), [spec(i, 45.0 * i, 1e5) for i in range(6)]
    named = simulate(pool, specs, "dp", cadence="interval", step_min=2.0)
    plugged = simulate(pool, specs, "dp", step_min=2.0, hooks=ReplayHooks(cadence=Interval(2.0)))
    assert list(named.decisions["t_s"]) == list(plugged.decisions["t_s"])
    every = simulate(pool, specs, "dp")
    assert len(every.decisions) != len(named.decisions)
