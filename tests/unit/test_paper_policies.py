"""The papers' policies, baselines and modes (issue 22), each against a hand-computed case.

optimus (Optimus' completion-time gain), elan / elan-backfill (Elan's admission + allocation),
drf (Optimus' fairness baseline), horizon-milp's constraint (15) (ModelArts), the Random-/Max-/
Min-BS batch choices (IBM) and drop mode (IBM).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from planner.allocators import allocate
from planner.allocators.base import AllocOptions, AllocState, TrainerState
from planner.allocators.horizon_milp import plan
from planner.replay.pool import fixed_pool
from planner.replay.simulator import simulate
from planner.workload.generators import batch_curve, choose_batches
from planner.workload.trainers import Curve, TrainerSpec

# O(1) = 10, O(2) = 18, O(3) = 24, O(4) = 28 samples/s
CURVE = Curve((0, 1, 2, 3, 4), (0.0, 10.0, 18.0, 24.0, 28.0))


def tr(id, rem, nmin=1, nmax=4, current=(), submit=0.0, curve=CURVE):
    return TrainerState(id=id, nmin=nmin, nmax=nmax, curve=curve, current=current, remaining_samples=rem,
                        submit_s=submit, rup_s=0.0, rdw_s=0.0)


# ---- optimus


def test_optimus_gives_the_extra_node_to_the_longer_of_two_identical_jobs():
    # both start at 1 node; one node free. Gains per node (rem/O(1) - rem/O(2)):
    #   A (rem 100): 100/10 - 100/18 = 4.444;  B (rem 300): 300/10 - 300/18 = 13.333  -> B
    st = AllocState(pool=tuple(range(3)), trainers=(tr("A", 100.0), tr("B", 300.0, submit=1.0)))
    assert allocate("optimus", st).counts == {"A": 1, "B": 2}
    # a fourth node: A's 4.444 beats B's 300/18 - 300/24 = 4.167 -> A
    st4 = AllocState(pool=tuple(range(4)), trainers=st.trainers)
    assert allocate("optimus", st4).counts == {"A": 2, "B": 2}
    # the greedy on BFTrainer's progress objective does the opposite (favours the short job):
    # per node T_fwd*dO/rem = 8/100 for A vs 8/300 for B
    mg = allocate("marginal-gain", st, AllocOptions(objective="progress", tfwd_s=1.0)).counts
    assert mg["A"] > mg["B"]


def test_optimus_starts_every_job_at_its_minimum_fifo_and_stops_at_non_positive_gain():
    flat = Curve((0, 2, 3), (0.0, 20.0, 20.0))  # no faster past 2 nodes: gain 0 -> stop
    st = AllocState(pool=tuple(range(7)), trainers=(
        tr("A", 50.0, nmin=2, nmax=6, curve=flat), tr("B", 50.0, nmin=3, submit=1.0),
        tr("C", 50.0, nmin=3, submit=2.0)))
    # A at 2, B at 3, C's 3 does not fit the 2 left -> 0; the 2 free nodes: A's gain is 0,
    # B: 50/24 - 50/28 = 0.298 > 0 -> B to 4 (its Nmax); A stays at 2; 1 node left idle
    assert allocate("optimus", st).counts == {"A": 2, "B": 4, "C": 0}


def _ends(allocator, specs, pool=4):
    """Each job's end (s) when `specs` are replayed on a fixed pool under `allocator`; all must finish."""
    res = simulate(fixed_pool(pool, 0.0, 1000.0), specs, allocator=allocator, opts=AllocOptions(tfwd_s=1.0),
                   pj_max=100, check=False)
    assert res.trainers["completed"].all()
    return dict(zip(res.trainers["id"], res.trainers["end_s"]))


def _job(id, curve, work):
    return TrainerSpec(id, "x", curve, nmin=1, nmax=4, rup_s=0.0, rdw_s=0.0, work_samples=work, submit_s=0.0)


def test_optimus_beats_drf_on_mean_jct_when_a_fair_share_is_past_a_jobs_fastest_count():
    # The summary: "beyond a certain point, adding more resources starts to slow down training".
    # A is fastest on 1 node (O = 1, 0.5 past it), B linear (O(k) = k); 4 nodes, 4 samples each, both at 0.
    # DRF: 2 + 2; B ends at 4/2 = 2 (A did 0.5 * 2 = 1); then A alone on 4 nodes at 0.5: 3 / 0.5 = 6 more -> 8.
    #   mean JCT (2 + 8) / 2 = 5.
    # Optimus: A's gain 4/1 - 4/0.5 < 0, so A stays at 1 (ends at 4); B gets the other 3 (ends at 4/3).
    #   mean JCT (4 + 4/3) / 2 = 2.667: DRF / Optimus = 1.875x.
    slow = Curve((0, 1, 2, 3, 4), (0.0, 1.0, 0.5, 0.5, 0.5))
    lin = Curve((0, 1, 2, 3, 4), (0.0, 1.0, 2.0, 3.0, 4.0))
    specs = [_job("A", slow, 4.0), _job("B", lin, 4.0)]
    assert _ends("drf", specs) == pytest.approx({"A": 8.0, "B": 2.0})
    assert _ends("optimus", specs) == pytest.approx({"A": 4.0, "B": 4 / 3})


def test_optimus_loses_to_drf_on_mean_jct_with_linear_speed_and_unequal_work():
    # The study's finding (mean JCT 0.71x): with near-linear curves the fair share wastes nothing, and
    # Optimus' gain rem/O(k) - rem/O(k+1) grows with the remaining work, so the long job gets the nodes.
    # C (4 samples) and D (16), both O(k) = k, 4 nodes. Optimus: 1 + 1, then gains C 4/1 - 4/2 = 2,
    # D 16/1 - 16/2 = 8 -> D; then C 2 vs D 16/2 - 16/3 = 2.67 -> D: C on 1 ends at 4, D did 12 on 3,
    # its last 4 on 4 nodes -> 5. Mean 4.5. DRF: 2 + 2, C ends at 2 (D did 4), D's 12 on 4 -> 5. Mean 3.5.
    lin = Curve((0, 1, 2, 3, 4), (0.0, 1.0, 2.0, 3.0, 4.0))
    specs = [_job("C", lin, 4.0), _job("D", lin, 16.0)]
    assert _ends("optimus", specs) == pytest.approx({"C": 4.0, "D": 5.0})
    assert _ends("drf", specs) == pytest.approx({"C": 2.0, "D": 5.0})


# ---- elan


def test_elan_admission_is_strictly_less_than_free_and_fifo():
    # pool 5; R runs (holds 3, Nmin 2): admitted, free = 5 - 2 = 3. W1 (Nmin 2): 2 < 3 -> admitted,
    # free 1. W2 (Nmin 1): 1 < 1 fails -> not admitted (E-FIFO), W3 behind it is blocked too.
    ts = (tr("R", 100.0, nmin=2, current=(0, 1, 2)), tr("W1", 100.0, nmin=2, submit=1.0),
          tr("W2", 100.0, nmin=1, submit=2.0), tr("W3", 100.0, nmin=1, submit=3.0))
    st = AllocState(pool=tuple(range(5)), trainers=ts)
    c = allocate("elan", st).counts
    assert c["W2"] == 0 and c["W3"] == 0
    # R and W1 identical at 2 nodes each: the one free node to the first submitted (R)
    assert c == {"R": 3, "W1": 2, "W2": 0, "W3": 0}
    # E-BF: W2 and W3 both fail 1 < 1 as well: the same
    assert allocate("elan-backfill", st).counts == c
    # a pool of 6: free after R, W1 = 2; W2: 1 < 2 admitted (free 1), W3: 1 < 1 not. The free
    # node: R, W1 2->3 gain 100/18 - 100/24 = 1.389, W2 1->2 gain 100/10 - 100/18 = 4.444 -> W2
    st6 = AllocState(pool=tuple(range(6)), trainers=ts)
    assert allocate("elan", st6).counts == {"R": 2, "W1": 2, "W2": 2, "W3": 0}


def test_elan_backfill_admits_past_a_blocked_job():
    ts = (tr("R", 100.0, nmin=2, current=(0, 1)), tr("Big", 100.0, nmin=4, submit=1.0),
          tr("Small", 100.0, nmin=1, submit=2.0))
    st = AllocState(pool=tuple(range(5)), trainers=ts)  # free after R: 3; Big 4 < 3 fails
    assert allocate("elan", st).counts["Small"] == 0
    assert allocate("elan-backfill", st).counts["Small"] >= 1


def _philly_like(n=40, seed=3):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        nmin = rng.choice([1, 1, 2, 4])
        out.append(TrainerSpec(id=f"j{i:02d}", model="m", curve=Curve((0, 1, 8), (0.0, 100.0, 600.0)),
                               nmin=nmin, nmax=nmin * 4, rup_s=5.0, rdw_s=5.0,
                               work_samples=rng.uniform(2e4, 5e5), submit_s=rng.uniform(0, 3600)))
    return out


@pytest.mark.parametrize("name", ["elan", "elan-backfill"])
def test_elan_never_leaves_an_admitted_job_below_its_minimum(name):
    # every decision of a replay: a Trainer that held nodes (admitted) keeps at least its Nmin
    # (the fixed pool never takes nodes back), and nobody gets 1..Nmin-1 nodes
    seen = []

    def spy(state, opts):
        res = allocate(name, state, opts)
        seen.append((state, res.counts))
        return res

    res = simulate(fixed_pool(12, 0.0, 6 * 3600.0), _philly_like(), allocator=spy, pj_max=10**6)
    assert res.summary["trainers_completed"] == 40
    held_checks = 0
    for state, counts in seen:
        for t in state.trainers:
            k = counts[t.id]
            assert k == 0 or t.nmin <= k <= t.nmax
            if t.current:
                held_checks += 1
                assert k >= t.nmin, (t.id, k, t.nmin)
    assert held_checks > 100
    # the project's previous elastic policy (admission min-fits + dp) does leave admitted jobs at 0
    zero = []

    def spy_dp(state, opts):
        res = allocate("dp", state, opts)
        zero.extend(t.id for t in state.trainers if t.current and res.counts[t.id] == 0)
        return res

    simulate(fixed_pool(12, 0.0, 6 * 3600.0), _philly_like(), allocator=spy_dp, pj_max=10**6,
             admission="min-fits", opts=AllocOptions(objective="progress"))
    assert zero  # so the check above can fail


# ---- drf


def test_drf_is_max_min_fair_on_nodes():
    ts = (tr("A", 1e3, nmax=10), tr("B", 1e9, nmax=10, submit=1.0), tr("C", 1.0, nmax=10, submit=2.0))
    # 10 nodes, 3 jobs: progressive filling 1,1,1 -> ... -> 4,3,3 (the extra to the first submitted)
    assert allocate("drf", AllocState(pool=tuple(range(10)), trainers=ts)).counts == {"A": 4, "B": 3, "C": 3}
    # A capped at 2: the rest shared 4, 4
    ts2 = (tr("A", 1e3, nmax=2), *ts[1:])
    assert allocate("drf", AllocState(pool=tuple(range(10)), trainers=ts2)).counts == {"A": 2, "B": 4, "C": 4}
    # FIFO admission at Nmin: C (Nmin 5) does not fit after A, B at 3 each on 10 nodes... 3+3+5 > 10
    ts3 = (tr("A", 1.0, nmin=3, nmax=10), tr("B", 1.0, nmin=3, nmax=10, submit=1.0),
           tr("C", 1.0, nmin=5, nmax=10, submit=2.0))
    assert allocate("drf", AllocState(pool=tuple(range(10)), trainers=ts3)).counts == {"A": 5, "B": 5, "C": 0}


# ---- horizon-milp: ModelArts' constraint (15)


def test_constraint_15_holds_at_every_step():
    # A: tiny demand (finishes in step 1 on 1 node), B: huge demand, C: medium. Pool 4, 4 steps.
    c = Curve((0, 1, 2, 4), (0.0, 1.0, 1.6, 2.56))
    ts = (TrainerState(id="A", nmin=1, nmax=4, curve=c, remaining_samples=60.0 * 5),
          TrainerState(id="B", nmin=1, nmax=4, curve=c, remaining_samples=1e9, submit_s=1.0),
          TrainerState(id="C", nmin=1, nmax=4, curve=c, remaining_samples=60.0 * 5 * 6, submit_s=2.0))
    st = AllocState(pool=tuple(range(4)), trainers=ts)
    base = AllocOptions(horizon_steps=4, step_min=5.0, time_limit_s=20)
    free = plan(st, base)
    # without (15) some job holds no nodes at some step (A after it finished, or B while C runs)
    assert any(free.counts[t][j] == 0 for t in range(4) for j in ("A", "B", "C"))
    p = plan(st, base.with_(extra={"min_every_step": True}))
    assert p.status in ("optimal", "optimal-within-gap")
    for t in range(4):
        assert all(p.counts[t][j] >= 1 for j in ("A", "B", "C")), (t, p.counts[t])
        assert sum(p.counts[t].values()) <= 4
    # minima that do not fit: FCFS keeps those that fit, the rest get nothing in the whole plan
    big = tuple(TrainerState(id=f"J{i}", nmin=2, nmax=4, curve=c, remaining_samples=1e6, submit_s=i)
                for i in range(3))
    p2 = plan(AllocState(pool=tuple(range(4)), trainers=big), base.with_(extra={"min_every_step": True}))
    for t in range(4):
        assert p2.counts[t]["J0"] >= 2 and p2.counts[t]["J1"] >= 2 and p2.counts[t]["J2"] == 0


def test_constraint_15_readings_by_hand():
    # c(1) = 1, c(2) = 1.6 samples/s; 5-min steps (300 samples per step on 1 node). Pool 2, 3 steps.
    c = Curve((0, 1, 2), (0.0, 1.0, 1.6))
    base = AllocOptions(horizon_steps=3, step_min=5.0, time_limit_s=20, mip_gap=1e-9)

    def run(ts, **extra):
        p = plan(AllocState(pool=(0, 1), trainers=ts), base.with_(extra={"min_every_step": True, **extra}))
        assert p.status in ("optimal", "optimal-within-gap")
        return [dict(x) for x in p.counts]

    # A runs (10 steps of work on 1 node), B waits with a huge demand: as written (15) holds B at 1
    # node every step; "running" holds only A, and B's share gain (~0) loses to A's second node
    a = TrainerState(id="A", nmin=1, nmax=2, curve=c, current=(0,), remaining_samples=3000.0)
    b = TrainerState(id="B", nmin=1, nmax=2, curve=c, remaining_samples=1e9, submit_s=1.0)
    assert run((a, b)) == [{"A": 1, "B": 1}] * 3
    assert run((a, b), min_every_step="running") == [{"A": 2, "B": 0}] * 3
    # the job set of the running jobs only: B is not in the model at all
    assert run((a, b), min_job_set="running") == [{"A": 2, "B": 0}] * 3
    # A' finishes inside step 1 on 1 node (300 samples), B' waits (15 steps of work): as written A'
    # keeps 1 node after it finished, so B' never gets 2; released, B' gets 2 from step 2
    a2 = TrainerState(id="A", nmin=1, nmax=2, curve=c, current=(0,), remaining_samples=300.0)
    b2 = TrainerState(id="B", nmin=1, nmax=2, curve=c, remaining_samples=4500.0, submit_s=1.0)
    assert run((a2, b2)) == [{"A": 1, "B": 1}] * 3
    assert run((a2, b2), min_release=True) == [{"A": 1, "B": 1}, {"A": 0, "B": 2}, {"A": 0, "B": 2}]
    # C arrives after B and finishes in one step on 1 node: outside the FCFS set (A and B fill the
    # pool) it gets nothing; with every active job in the model and (15) on the running ones, C runs
    # in step 1 (share 1 against A's second node, 0.16 - 0.1) and A takes both nodes after
    c3 = TrainerState(id="C", nmin=1, nmax=2, curve=c, remaining_samples=300.0, submit_s=2.0)
    assert run((a, b, c3), min_every_step="running") == [{"A": 2, "B": 0, "C": 0}] * 3
    assert run((a, b, c3), min_every_step="running", min_job_set="all") == [
        {"A": 1, "B": 0, "C": 1}, {"A": 2, "B": 0, "C": 0}, {"A": 2, "B": 0, "C": 0}]
    with pytest.raises(ValueError, match="min_job_set"):
        run((a, b), min_job_set="everyone")


# ---- IBM's batch-size baselines and drop mode


def _batch_spec(i, submit=0.0):
    c32 = Curve((0, 1, 2, 4), (0.0, 100.0, 150.0, 200.0))
    c64 = Curve((0, 1, 2, 4), (0.0, 160.0, 260.0, 380.0))
    c128 = Curve((0, 1, 2, 4), (0.0, 0.0, 400.0, 700.0))  # needs 2 GPUs (memory)
    b = ((32, c32), (64, c64), (128, c128))
    return TrainerSpec(id=f"j{i}", model="m", curve=c32, nmin=1, nmax=4, batches=b, batch_size=32,
                       submit_s=submit)


def test_random_bs_is_seeded_and_within_bounds():
    specs = [_batch_spec(i) for i in range(300)]
    a = choose_batches(specs, "random", seed=7)
    assert [s.batch_size for s in a] == [s.batch_size for s in choose_batches(specs, "random", seed=7)]
    assert [s.batch_size for s in a] != [s.batch_size for s in choose_batches(specs, "random", seed=8)]
    sizes = np.array([s.batch_size for s in a])
    assert sizes.min() >= 32 and sizes.max() <= 128 and not any(s.batches for s in a)
    assert 60 < sizes.mean() < 100  # uniform on 32..128: mean 80
    # a job's draw does not depend on the others
    assert choose_batches(specs[5:6], "random", seed=7)[0].batch_size == a[5].batch_size
    # interpolated curve, by hand: b = 48 is halfway between 32 and 64 -> O(1) = 130, O(4) = 290
    c = batch_curve(specs[0].batches, 48)
    assert c(1) == pytest.approx(130.0) and c(4) == pytest.approx(290.0)
    # b = 96 between 64 and 128: 128 does not run on 1 GPU, so neither does 96 -> Nmin 2
    c96 = batch_curve(specs[0].batches, 96)
    assert c96(1) == 0.0 and c96(2) == pytest.approx(330.0)
    s96 = next(s for s in a if s.batch_size > 64)
    assert s96.nmin == 2 and s96.nmax == 4
    mx, mn = choose_batches(specs[:1], "max")[0], choose_batches(specs[:1], "min")[0]
    assert (mx.batch_size, mx.nmin, mx.curve(4)) == (128, 2, 700.0)
    assert (mn.batch_size, mn.nmin, mn.curve(4)) == (32, 1, 200.0)
    assert choose_batches(specs[:1], "elastic")[0] is specs[0]


def test_drop_mode_counts_drops():
    # pool 2; jobs of Nmin = Nmax = 2 arriving at 0, 0, 0 and (after the first is done) 1000 s.
    c = Curve((0, 2), (0.0, 10.0))
    specs = [TrainerSpec(id=f"j{i}", model="m", curve=c, nmin=2, nmax=2, work_samples=1000.0, submit_s=s,
                         rup_s=0.0, rdw_s=0.0) for i, s in enumerate((0.0, 0.0, 0.0, 1000.0))]
    res = simulate(fixed_pool(2, 0.0, 3600.0), specs, allocator="dp", pj_max=10, admission="min-fits", drop=True)
    s = res.summary
    # j0 admitted (runs 100 s), j1 and j2 dropped on arrival, j3 arrives to an empty pool
    assert s["trainers_dropped"] == 2 and s["drop_ratio"] == pytest.approx(2 / 4)
    assert s["trainers_completed"] == 2 and s["trainers_waiting_at_end"] == 0
    assert list(res.trainers["outcome"]) == ["completed", "dropped", "dropped", "completed"]
    # without drop mode they queue and all complete
    q = simulate(fixed_pool(2, 0.0, 3600.0), specs, allocator="dp", pj_max=10, admission="min-fits").summary
    assert q["trainers_dropped"] == 0 and q["drop_ratio"] == 0.0 and q["trainers_completed"] == 4


def test_scenario_fields_reach_the_replay():
    from planner.scenario.record import Scenario, run_scenario

    sc = Scenario.from_dict({"pool": "fixed", "pool_size": 4, "hours": 1, "workload": "hpo", "count": 12,
                             "interarrival_s": 0, "pj_max": 2, "drop": True, "allocator": "optimus"})
    s = run_scenario(sc).summary
    assert s["trainers_dropped"] == 10 and s["drop_ratio"] == pytest.approx(10 / 12)
    assert sc.alloc_options().extra["min_every_step"] is False
    with pytest.raises(Exception, match="batch_choice"):
        Scenario.from_dict({"batch_choice": "huge"})


def test_constraint_15_paper_formulation_same_optimum_by_hand():
    # the paper's (16)-(20) (integer n, two big-M binaries per power of two) and our one-indicator form
    # have the same optimum: A finishes in step 1 on 1 node, D runs (1.5 steps on 1 node), B huge, C 6
    # steps; pool 7, 3 steps
    c = Curve((0, 1, 2, 4), (0.0, 1.0, 1.6, 2.56))
    ts = (TrainerState(id="A", nmin=1, nmax=4, curve=c, remaining_samples=300.0),
          TrainerState(id="B", nmin=1, nmax=4, curve=c, remaining_samples=1e9, submit_s=1.0),
          TrainerState(id="C", nmin=1, nmax=4, curve=c, remaining_samples=1800.0, submit_s=2.0),
          TrainerState(id="D", nmin=1, nmax=4, curve=c, remaining_samples=450.0, submit_s=3.0, current=(1,)))
    st = AllocState(pool=tuple(range(7)), trainers=ts)
    o = AllocOptions(horizon_steps=3, step_min=5.0, time_limit_s=20, mip_gap=0.0)
    ours = plan(st, o.with_(extra={"min_every_step": True}))
    paper = plan(st, o.with_(extra={"min_every_step": True, "formulation": "paper"}))
    assert {paper.status, ours.status} <= {"optimal", "optimal-within-gap"}
    assert paper.objective == pytest.approx(ours.objective, abs=1e-6)
    for t in range(3):  # (15) and the pool hold; every count is a power of two
        assert all(paper.counts[t][j] in (1, 2, 4) for j in "ABCD") and sum(paper.counts[t].values()) <= 7
    with pytest.raises(ValueError, match="formulation"):
        plan(st, o.with_(extra={"formulation": "paper"}))  # without (15) a job may hold 0: not the paper's K
    with pytest.raises(ValueError, match="formulation"):
        plan(st, o.with_(extra={"min_every_step": True, "formulation": "big-m"}))
