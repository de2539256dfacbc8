"""The rigid baselines (static, static-backfill) and the runtime presets: hand-computed cases."""

import pytest

from planner.allocators.base import AllocOptions, AllocState, TrainerState, is_feasible
from planner.allocators.static import allocate, allocate_backfill, request
from planner.errors import InputError
from planner.workload import runtimes
from planner.workload.trainers import Curve

LIN = Curve((0, 64), (0.0, 6400.0))


def tr(i, r, current=(), submit=None, nmin=1, nmax=64):
    return TrainerState(id=i, nmin=nmin, nmax=nmax, curve=LIN, current=tuple(current), request_nodes=r,
                        submit_s=float(i[-1]) if submit is None else submit)


def test_fifo_blocks_behind_the_first_that_does_not_fit_backfill_does_not():
    # pool 10: a asks 4, b asks 8 (does not fit after a), c asks 2
    st = AllocState(pool=tuple(range(10)), trainers=(tr("a1", 4), tr("b2", 8), tr("c3", 2)))
    assert allocate(st, AllocOptions()).counts == {"a1": 4, "b2": 0, "c3": 0}
    assert allocate_backfill(st, AllocOptions()).counts == {"a1": 4, "b2": 0, "c3": 2}


def test_running_jobs_keep_their_size_and_a_preempted_one_stops():
    # b runs on 6..9 (asks 4); a ran on 0..3 but node 3 left the pool: a stops (cannot run on 3)
    st = AllocState(pool=(0, 1, 2, 4, 5, 6, 7, 8, 9),
                    trainers=(tr("a1", 4, current=(0, 1, 2, 3)), tr("b2", 4, current=(6, 7, 8, 9))))
    res = allocate(st, AllocOptions())
    assert res.counts == {"a1": 4, "b2": 4}          # a restarts at 4 on free nodes (5 are free)
    assert set(res.node_map["b2"]) == {6, 7, 8, 9}   # b untouched
    st2 = AllocState(pool=(0, 1, 2, 6, 7, 8, 9), trainers=st.trainers)
    assert allocate(st2, AllocOptions()).counts == {"a1": 0, "b2": 4}   # only 3 free: a waits


def test_request_defaults_to_nmax_and_is_clipped():
    assert request(tr("a1", None, nmax=16)) == 16
    assert request(tr("a1", 100, nmax=16)) == 16
    assert request(tr("a1", 1, nmin=3, nmax=16)) == 3
    assert request(tr("a1", 12, nmax=16), pow2=True) == 8


def test_never_rescales_and_stays_feasible():
    st = AllocState(pool=tuple(range(20)), trainers=tuple(tr(f"t{i}", 3 + i) for i in range(6)))
    for fn in (allocate, allocate_backfill):
        res = fn(st, AllocOptions(pj_max=4))
        assert is_feasible(st, res.counts)
        assert all(k in (0, request(t)) for t, k in zip(st.trainers, res.counts.values()))
        assert sum(k > 0 for k in res.counts.values()) <= 4


def test_runtime_presets_and_overrides():
    assert runtimes.costs("elan") == (1.0, 1.0, 1.0)
    assert runtimes.costs("stop-restart", rdw_s=5.0) == (28.0, 5.0, 4.0)
    assert runtimes.costs(None, 3.0) == (3.0, None, None)
    assert runtimes.costs("elastic-horovod")[:2] == (18.0, 12.0)
    with pytest.raises(InputError, match="field 'runtime'"):
        runtimes.get("nope")


def test_scenario_runtime_static_and_admission_options_run_end_to_end():
    from planner.scenario.record import Scenario, build_workload, run_scenario

    sc = Scenario.from_dict({"pool": "fixed", "pool_size": 21, "workload": "philly", "count": 40, "hours": 24,
                             "allocator": "static-backfill", "pj_max": 1000, "runtime": "elan"})
    specs = build_workload(sc)
    assert {(s.rup_s, s.rdw_s) for s in specs} == {(1.0, 1.0)}
    res = run_scenario(sc)
    assert res.summary["rescale_cost_samples"] == 0.0        # rigid: never rescales
    req = {s.id: s.request_nodes for s in specs}
    ran = res.trainers[res.trainers["max_nodes"] > 0]
    assert len(ran) > 0 and all(m == req[i] for i, m in zip(ran["id"], ran["max_nodes"]))
    over = Scenario.from_dict({"workload": "hpo", "runtime": "stop-restart", "rup": 5})
    assert {(s.rup_s, s.rdw_s) for s in build_workload(over)} == {(5.0, 28.0)}
    with pytest.raises(InputError, match="field 'runtime'"):
        Scenario.from_dict({"runtime": "slurm"})
    with pytest.raises(InputError, match="field 'admission'"):
        Scenario.from_dict({"admission": "lifo"})
