"""The Optimus study's one-change variants (planner.studies.optimus), hand-computed: the DRF baseline
with a demand cap, Optimus with an estimated remaining work, Optimus' asynchronous model as linear."""

from __future__ import annotations

import math

import numpy as np

from planner.allocators.base import AllocOptions, AllocState, TrainerState
from planner.studies import optimus as o
from planner.workload.trainers import Curve, TrainerSpec

CURVE = Curve((0, 1, 2, 3, 4), (0.0, 10.0, 18.0, 24.0, 28.0))


def tr(id, rem, nmax=10, submit=0.0):
    return TrainerState(id=id, nmin=1, nmax=nmax, curve=CURVE, remaining_samples=rem, submit_s=submit,
                        rup_s=0.0, rdw_s=0.0)


def test_drf_capped_stops_each_job_at_its_demand_and_shares_the_rest():
    ts = (tr("A", 1.0), tr("B", 1.0, submit=1.0), tr("C", 1.0, submit=2.0))
    st = AllocState(pool=tuple(range(10)), trainers=ts)
    # plain DRF 4, 3, 3; with every demand capped at 2: 2, 2, 2 and 4 nodes left free
    assert o.drf_capped(2)(st, AllocOptions()).counts == {"A": 2, "B": 2, "C": 2}
    # a cap above the fair share changes nothing
    assert o.drf_capped(5)(st, AllocOptions()).counts == {"A": 4, "B": 3, "C": 3}


def test_optimus_estimated_sees_the_erred_total_at_the_start_and_the_truth_at_the_end():
    specs = [TrainerSpec(id="A", model="m", curve=CURVE, work_samples=100.0),
             TrainerSpec(id="B", model="m", curve=CURVE, work_samples=300.0)]
    z = np.random.default_rng([2, 23]).standard_normal(2)
    est = [100.0 * math.exp(5.0 * z[0]), 300.0 * math.exp(5.0 * z[1])]  # at the start: w exp(sigma z)
    st = AllocState(pool=tuple(range(3)), trainers=(tr("A", 100.0, nmax=4), tr("B", 300.0, nmax=4, submit=1.0)))
    # both at 1 node, one node free: Optimus' gain grows with the remaining work, so the larger estimate wins
    want = {"A": 2, "B": 1} if est[0] > est[1] else {"A": 1, "B": 2}
    assert o.optimus_estimated(specs, 2, sigma=5.0)(st, AllocOptions()).counts == want
    assert est[0] > est[1]  # seed 2 draws an estimate that flips the order (the known work gives B the node)
    # no error: Optimus itself (B, the longer job, gets the node)
    assert o.optimus_estimated(specs, 2, sigma=0.0)(st, AllocOptions()).counts == {"A": 1, "B": 2}
    # near the end (remaining fraction ~0) the error is gone: A has 1 sample left, B 299 -> B
    near = AllocState(pool=st.pool, trainers=(tr("A", 1.0, nmax=4), tr("B", 299.0, nmax=4, submit=1.0)))
    assert o.optimus_estimated(specs, 2, sigma=5.0)(near, AllocOptions()).counts == {"A": 1, "B": 2}


def test_async_linear_is_linear_in_the_containers():
    c = o.async_linear(CURVE, nmax=4)
    assert [c(k) for k in range(5)] == [0.0, 10.0, 20.0, 30.0, 40.0]
