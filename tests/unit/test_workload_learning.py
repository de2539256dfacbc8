"""Learned speed curves in the replay (Optimus): the allocator sees a fitted belief, refitted
from the rates Trainers reach; the replay credits true rates."""

import numpy as np
import pytest

from planner.replay.pool import fixed_pool
from planner.replay.simulator import simulate
from planner.workload.fitcurve import SpeedModel
from planner.workload.learning import CurveLearner
from planner.workload.trainers import Curve, TrainerSpec

TRUE = SpeedModel(a=1e-3, b=4e-5, c=5e-7)


def test_exact_probes_of_a_model_curve_are_learned_exactly():
    true = TRUE.curve(range(0, 65))
    spec = TrainerSpec(id="t", model="m", curve=true, nmax=64)
    lr = CurveLearner(probe_nodes=(1, 2, 4))
    got = lr.believed(spec, true)
    assert got(40) == pytest.approx(true(40), rel=1e-6)


def test_observations_refit_and_move_the_belief_toward_the_truth():
    true = Curve((0, 1, 2, 4, 8, 16, 32, 64), (0, 100, 190, 350, 600, 800, 820, 700))   # not the model's shape
    spec = TrainerSpec(id="t", model="m", curve=true, nmax=64)
    lr = CurveLearner(probe_nodes=(1, 2, 4))
    err0 = abs(lr.believed(spec, true)(32) - true(32))
    lr.observe(spec, 32, true(32))
    lr.observe(spec, 16, true(16))
    err1 = abs(lr.believed(spec, true)(32) - true(32))
    assert err1 < err0 / 2 and lr.refits == 3


def test_replay_with_learning_is_seeded_and_does_the_same_work():
    true = Curve((0, 1, 2, 4, 8), (0, 100, 180, 300, 380))
    specs = [TrainerSpec(id=f"t{i}", model="m", curve=true, nmin=1, nmax=8, rup_s=1, rdw_s=1,
                         work_samples=5e5, submit_s=60.0 * i) for i in range(4)]
    pool = fixed_pool(12, 0.0, 4 * 3600.0)
    runs = [simulate(pool, specs, allocator="dp", pj_max=4, learner=CurveLearner(noise=0.05, seed=3))
            for _ in range(2)]
    a, b = (r.summary for r in runs)
    assert a["samples"] == b["samples"] and a["trainers_completed"] == 4
    known = simulate(pool, specs, allocator="dp", pj_max=4).summary
    # the work is the same either way: every Trainer finished its 5e5 samples
    assert a["samples"] == pytest.approx(known["samples"])
    assert np.isfinite(a["mean_jct_s"])


def test_the_replay_credits_the_true_rate_not_the_belief():
    # one Trainer pinned at 4 nodes (Nmin = Nmax = 4) on a 4-node pool, no rescale cost: it runs
    # 3e5 samples at the TRUE rate O(4) = 300/s, so it finishes after 1,000 s. The learner's belief
    # at 4 nodes is off by more than 10 % (noisy probes), so crediting the belief would finish at
    # 3e5 / belief(4), not at 1,000 s.
    true = Curve((0, 1, 2, 4), (0, 100, 180, 300))
    spec = TrainerSpec(id="t0", model="m", curve=true, nmin=4, nmax=4, rup_s=0, rdw_s=0,
                       work_samples=3e5, submit_s=0.0)
    pool = fixed_pool(4, 0.0, 3600.0)
    belief = CurveLearner(noise=0.5, seed=1).believed(spec, true)(4)
    assert abs(belief - 300.0) > 30.0  # the belief really differs from the truth
    learned = simulate(pool, [spec], allocator="dp", learner=CurveLearner(noise=0.5, seed=1))
    known = simulate(pool, [spec], allocator="dp")
    assert known.summary["trainers_completed"] == learned.summary["trainers_completed"] == 1
    assert known.summary["mean_jct_s"] == pytest.approx(1000.0, rel=1e-6)
    assert learned.summary["mean_jct_s"] == pytest.approx(1000.0, rel=1e-6)
