"""Hand-solved cases, the equal-share point of the paper, a time-limited milp-node, instances and CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from planner import cli
from planner.allocators import AllocOptions, AllocState, TrainerState, allocate
from planner.allocators import names as allocator_names
from planner.allocators.base import is_feasible, level_tables
from planner.allocators.instances import fig5_instance, load_instance, parse_instance, random_instance, save_instance
from planner.errors import InputError
from planner.paths import EXAMPLES
from planner.workload.trainers import Curve
from tests.helpers import seeds

EXACT = allocator_names(exact=True)  # milp-node, milp, dp, hull, auto
# the registry's flag is what is tested below: it must keep covering the exact allocators
assert {"milp-node", "milp", "dp", "hull", "auto"} <= set(EXACT)


def linear(per_node: float, nmax: int = 8) -> Curve:
    return Curve((0, nmax), (0.0, per_node * nmax))


def tr(tid, curve, nmin=1, nmax=8, current=(), **kw) -> TrainerState:
    return TrainerState(id=tid, nmin=nmin, nmax=nmax, curve=curve, current=tuple(current), **kw)


@pytest.mark.parametrize("name", EXACT)
def test_big_m_trap_one_trainer_two_nodes(name):
    # DESIGN.md: with big-M = |N|+1 the published model gives this Trainer one node, not two
    state = AllocState(pool=(0, 1), trainers=(tr("a", linear(100.0)),))
    res = allocate(name, state, AllocOptions(tfwd_s=120.0))
    assert res.counts == {"a": 2}
    assert res.objective == pytest.approx(120.0 * 200.0)


@pytest.mark.parametrize("name", EXACT)
def test_two_trainers_three_nodes(name):
    # A: 10, 20, 21 samples/s on 1..3 nodes; B: 15, 16 on 1..2. Best: A=2, B=1 (35 > 26, 21)
    a = tr("A", Curve((0, 1, 2, 3), (0.0, 10.0, 20.0, 21.0)), nmax=3)
    b = tr("B", Curve((0, 1, 2), (0.0, 15.0, 16.0)), nmax=2)
    res = allocate(name, AllocState(pool=(0, 1, 2), trainers=(a, b)), AllocOptions(tfwd_s=1.0))
    assert res.counts == {"A": 2, "B": 1}
    assert res.objective == pytest.approx(35.0)


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("rup_s,expect,objective", [(18.0, 2, 2000.0), (1.0, 3, 2800.0)])
def test_growing_pays_rup(name, rup_s, expect, objective):
    # holds 2 of 3 nodes, 100 samples/s per node, T_fwd 10: growing gains 1000, costs 200 * Rup
    state = AllocState(pool=(0, 1, 2), trainers=(tr("a", linear(100.0), current=(0, 1), rup_s=rup_s),))
    res = allocate(name, state, AllocOptions(tfwd_s=10.0))
    assert res.counts == {"a": expect}
    assert res.objective == pytest.approx(objective)
    assert set(res.node_map["a"]) >= {0, 1}


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("rdw_s,expect,objective", [(12.0, {"A": 4, "B": 0}, 4000.0),
                                                    (0.0, {"A": 0, "B": 4}, 6000.0)])
def test_shrinking_pays_rdw(name, rdw_s, expect, objective):
    # A holds all 4 nodes at 100/node; B waits at 150/node. Handing over costs A 400 * Rdw.
    a = tr("A", linear(100.0), current=(0, 1, 2, 3), rdw_s=rdw_s)
    b = tr("B", linear(150.0))
    res = allocate(name, AllocState(pool=(0, 1, 2, 3), trainers=(a, b)), AllocOptions(tfwd_s=10.0))
    assert res.counts == expect
    assert res.objective == pytest.approx(objective)


@pytest.mark.parametrize("name", allocator_names(bench=True))  # all but horizon-milp
def test_no_idle_nodes(name):
    # the Trainers' nodes all left the pool: nothing to give, nothing held, objective 0
    ts = (tr("a", linear(100.0), current=(5, 6)), tr("b", linear(50.0)))
    res = allocate(name, AllocState(pool=(), trainers=ts), AllocOptions())
    assert res.counts == {"a": 0, "b": 0}
    assert res.objective == 0.0


def test_equal_share_hand_cases():
    ts = tuple(tr(x, linear(10.0), submit_s=float(i)) for i, x in enumerate("abc"))
    st10 = AllocState(pool=tuple(range(10)), trainers=ts)
    assert allocate("equal-share", st10, AllocOptions()).counts == {"a": 4, "b": 3, "c": 3}
    assert allocate("equal-share", st10, AllocOptions(pj_max=2)).counts == {"a": 5, "b": 5, "c": 0}
    # pow2: shares 3 -> 2 each, 4 left: a 2 -> 4 (2 left), b 2 -> 4
    assert allocate("equal-share", st10, AllocOptions(pow2=True)).counts == {"a": 4, "b": 4, "c": 2}
    # shares raised to Nmin=2 do not all fit in 5 nodes: FCFS admission, leftover to the first
    ts2 = tuple(replace(t, nmin=2) for t in ts)
    st5 = AllocState(pool=tuple(range(5)), trainers=ts2)
    assert allocate("equal-share", st5, AllocOptions()).counts == {"a": 3, "b": 2, "c": 0}


def test_greedy_hand_cases():
    # rule 3: the waiting head needs 4, 2 are free: halve the longest-running A (6 -> 3), start B with 5
    a = tr("A", linear(10.0), current=tuple(range(6)), running_s=100.0)
    b = tr("B", linear(10.0), nmin=4, submit_s=1.0)
    res = allocate("greedy", AllocState(pool=tuple(range(8)), trainers=(a, b)), AllocOptions())
    assert res.counts == {"A": 3, "B": 5}
    # rule 2: no queue, free nodes go to the shortest-running Trainer first
    a = tr("A", linear(10.0), current=(0, 1), running_s=100.0)
    c = tr("C", linear(10.0), current=(2, 3), running_s=10.0)
    res = allocate("greedy", AllocState(pool=tuple(range(8)), trainers=(a, c)), AllocOptions())
    assert res.counts == {"A": 2, "C": 6}


def test_marginal_gain_hand_cases():
    a = tr("A", linear(10.0, 3), nmax=3)
    b = tr("B", linear(5.0, 3), nmax=3, submit_s=1.0)
    st = AllocState(pool=(0, 1, 2), trainers=(a, b))
    assert allocate("marginal-gain", st, AllocOptions(tfwd_s=1.0)).counts == {"A": 3, "B": 0}
    # B starts only as a block of Nmin=3 worth 20 per node: it beats A's 10 per node
    b = tr("B", linear(20.0, 3), nmin=3, nmax=3, submit_s=1.0)
    st = AllocState(pool=(0, 1, 2), trainers=(a, b))
    assert allocate("marginal-gain", st, AllocOptions(tfwd_s=1.0)).counts == {"A": 0, "B": 3}


@pytest.mark.parametrize("seed", seeds(40))
def test_equal_share_feasible_and_never_better_without_rescaling_cost(seed):
    # BFTrainer: with Rup = Rdw = 0 the equal share is one feasible point of the MILP
    st = random_instance(300 + seed, max_jobs=5, max_pool=16, max_nmax=8)
    st = replace(st, trainers=tuple(replace(t, rup_s=0.0, rdw_s=0.0) for t in st.trainers))
    opts = AllocOptions(tfwd_s=120.0)
    eq = allocate("equal-share", st, opts)
    assert is_feasible(st, eq.counts)
    _, items = level_tables(st, opts)
    assert all(eq.counts[t.id] in set(lv.tolist()) for t, lv, _ in items)
    best = allocate("milp", st, opts)
    assert best.status in ("optimal", "optimal-within-gap")
    assert eq.objective <= best.objective + 1e-6 * max(1.0, abs(best.objective))


# --- solver trouble ---------------------------------------------------------------------------

# HiGHS unavailable, raising or reporting infeasible: tests/unit/test_allocators_solver_faults.py (every MILP)


@pytest.mark.slow  # 0.4 s CPU measured in the default run: the slow tier
def test_milp_node_time_limit_keeps_invariants():
    st = fig5_instance(20, 400, seed=3)
    res = allocate("milp-node", st, AllocOptions(time_limit_s=0.3))
    assert res.status in ("time-limit-feasible", "fallback", "optimal", "optimal-within-gap")
    pool = set(st.pool)
    used = [n for v in res.node_map.values() for n in v]
    assert len(used) == len(set(used)) and set(used) <= pool
    for t in st.trainers:
        mine, held = set(res.node_map[t.id]), set(t.current) & pool
        assert mine >= held or mine <= held
        assert len(mine) == res.counts[t.id]


# --- instances and CLI ------------------------------------------------------------------------

def test_instance_round_trip(tmp_path):
    for seed in range(5):
        st = random_instance(seed)
        path = tmp_path / f"i{seed}.json"
        save_instance(path, st, tfwd_s=60.0)
        back, opts = load_instance(path)
        assert back == st
        assert opts == {"tfwd_s": 60.0}


def test_instance_remaining_samples_null_or_absent_is_unbounded():
    for extra in ({}, {"remaining_samples": None}):
        st, _ = parse_instance({"pool": [0], "trainers": [{"id": "a", "model": "shufflenet", **extra}]})
        assert st.trainers[0].remaining_samples == float("inf")
    st, _ = parse_instance({"pool": [0], "trainers": [{"id": "a", "model": "shufflenet", "remaining_samples": 5}]})
    assert st.trainers[0].remaining_samples == 5.0
    with pytest.raises(InputError, match="remaining_samples"):
        parse_instance({"pool": [0], "trainers": [{"id": "a", "model": "shufflenet", "remaining_samples": -1}]})


@pytest.mark.parametrize("data,field", [
    ({"trainers": []}, "pool"),
    ({"pool": [0, 0], "trainers": []}, "pool"),
    ({"pool": [0], "trainers": [{"id": "a"}]}, "trainers[0].curve"),
    ({"pool": [0], "trainers": [{"id": "a", "model": "shufflenet", "nmin": 4, "nmax": 2}]}, "trainers[0].nmax"),
    ({"pool": [0], "trainers": [{"id": "a", "model": "shufflenet", "nmin": "x"}]}, "trainers[0].nmin"),
    ({"pool": [0, 1], "trainers": [{"id": "a", "model": "shufflenet", "current": [1]},
                                   {"id": "b", "model": "shufflenet", "current": [1]}]}, "trainers[1].current"),
    ({"pool": [0], "trainers": [{"id": "a", "curve": {"nodes": [2, 1], "samples_per_s": [1, 2]}}]},
     "trainers[0].curve"),
    ({"pool": [0], "objective": "speed", "trainers": []}, "objective"),
    ({"pool": [0], "pj_max": "ten", "trainers": []}, "pj_max"),
    ({"pool": [0], "pow2": 1, "trainers": []}, "pow2"),
    ({"pool_nodes": -3, "trainers": []}, "pool_nodes"),
])
def test_bad_instance_names_the_field(data, field):
    with pytest.raises(InputError) as e:
        parse_instance(data, "inst.json")
    msg = str(e.value)
    assert "inst.json" in msg and f"field '{field}'" in msg and "\n" not in msg


def test_cli_allocate_example(capsys):
    assert cli.main(["allocate", "--instance", str(EXAMPLES / "instance.json"), "--allocator", "milp",
                     "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"allocator", "status", "objective", "counts", "build_s", "solve_s"}
    assert out["allocator"] == "milp" and out["status"] == "optimal"
    dp = allocate("dp", *[load_instance(EXAMPLES / "instance.json")[0]])
    assert out["objective"] == pytest.approx(dp.objective)
    assert sum(out["counts"].values()) <= 16


def test_cli_allocate_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"pool": [0], "trainers": [{"id": "a", "model": "nope"}]}))
    assert cli.main(["allocate", "--instance", str(bad), "--json"]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "trainers[0].model" in err
    bad.write_text("{not json")
    assert cli.main(["allocate", "--instance", str(bad)]) == 2
    assert "line 1" in capsys.readouterr().err


def test_cli_bench_allocators_small_grid(tmp_path, capsys):
    out = tmp_path / "b.json"
    assert cli.main(["bench", "allocators", "--jobs", "3", "--pool", "20,40", "--reps", "2",
                     "--allocators", "dp,milp,equal-share", "--out", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == json.loads(out.read_text())
    assert len(rows) == 6
    keys = {"allocator", "jobs", "pool", "reps", "build_s_median", "build_s_p95", "solve_s_median",
            "solve_s_p95", "objective_median"}
    for r in rows:
        assert keys <= set(r)
        if r["allocator"] in ("dp", "milp"):  # exact: the benchmark must find dp's optimum
            assert r["exact"] and r["matches_dp"] == 1.0
    assert cli.main(["bench", "allocators", "--jobs", "x"]) == 2
