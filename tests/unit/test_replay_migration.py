"""Migration at preemptions (Elan): counts kept, nodes replaced, the preset's cost charged."""

import numpy as np

from planner.replay.pool import PoolTrace
from planner.replay.simulator import simulate
from planner.workload.trainers import Curve, TrainerSpec

LIN = Curve((0, 8), (0.0, 800.0))   # 100 samples/s per node


def pool_with_a_leave():
    # 8 nodes idle from t=0; at t=100 nodes 0 and 1 leave (the Trainer holds 0..3), back at 300
    return PoolTrace(log="t", nodes=8, start_s=0.0, end_s=600.0, initial_idle=list(range(8)),
                     times=[100.0, 300.0], joins=[[], [0, 1]], leaves=[[0, 1], []])


def run(migrate_s):
    spec = TrainerSpec(id="t", model="lin", curve=LIN, nmin=4, nmax=4, rup_s=0.0, rdw_s=30.0,
                       work_samples=1e12, submit_s=0.0)
    return simulate(pool_with_a_leave(), [spec], allocator="dp", pj_max=1, migrate_s=migrate_s)


def test_without_migration_the_trainer_drops_below_nmin_and_pays_rdw():
    res = run(None)
    p = res.preemptions
    assert p["nodes_after"].tolist() == [0] and p["nodes_migrated"].tolist() == [0]
    assert p["cost_samples"].tolist() == [30.0 * 400]
    assert res.summary["migrations"] == 0


def test_with_migration_it_moves_to_free_nodes_keeps_4_and_pays_the_migration_cost():
    res = run(1.0)
    p = res.preemptions
    assert p["nodes_before"].tolist() == [4] and p["nodes_after"].tolist() == [4]
    assert p["nodes_migrated"].tolist() == [2]
    assert p["cost_samples"].tolist() == [1.0 * 400]
    assert res.summary["migrations"] == 1
    tl = res.timeline
    assert (tl.loc[tl["t_s"] >= 100, "allocated_nodes"] == 4).all()   # never stopped
    # 600 s at 400 samples/s minus the 1 s migration cost
    assert np.isclose(res.summary["samples"], 600 * 400 - 400)


def test_min_fits_admission_admits_only_while_every_minimum_fits():
    from planner.replay.pool import fixed_pool
    specs = [TrainerSpec(id=f"t{i}", model="lin", curve=LIN, nmin=3, nmax=8, rup_s=0.0, rdw_s=0.0,
                         work_samples=1e12, submit_s=0.0) for i in range(4)]
    pool = fixed_pool(8, 0.0, 100.0)
    fcfs = simulate(pool, specs, allocator="dp", pj_max=10)
    fits = simulate(pool, specs, allocator="dp", pj_max=10, admission="min-fits")
    assert fcfs.trainers["admit_s"].notna().sum() == 4
    assert fits.trainers["admit_s"].notna().sum() == 2      # 3 + 3 <= 8 < 3 + 3 + 3
