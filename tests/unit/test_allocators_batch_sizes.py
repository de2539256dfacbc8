"""IBM's second knob: node count and total batch size chosen jointly and exactly (dp, milp)."""

import itertools
import json
import math

import numpy as np
import pytest

from planner.allocators import allocate
from planner.allocators.base import AllocOptions, AllocState, TrainerState
from planner.allocators.instances import load_instance
from planner.errors import InputError
from planner.workload.trainers import Curve
from tests.helpers import seeds


def brute(state: AllocState, opts: AllocOptions) -> float:
    """Best total over every (count, batch size) per Trainer, written from the definition."""
    pool = set(state.pool)
    per = []
    for t in state.trainers:
        c = len(pool.intersection(t.current))
        cur = dict(t.batches)[t.batch_size] if t.batches else t.curve
        o_now = cur(c)
        opts_list = [(0, None, -(o_now * t.rdw_s if c > 0 else 0.0))]
        for k in range(max(t.nmin, 1), min(t.nmax, len(pool)) + 1):
            for b, curve in (t.batches or ((None, t.curve),)):
                cost = o_now * (t.rup_s if k > c else t.rdw_s if k < c else
                                (t.rdw_s if b is not None and b != t.batch_size else 0.0))
                opts_list.append((k, b, opts.tfwd_s * curve(k) - cost))
        per.append(opts_list)
    best = -math.inf
    for combo in itertools.product(*per):
        if sum(x[0] for x in combo) <= len(pool):
            best = max(best, sum(x[2] for x in combo))
    return best


def random_instance(rng, jobs=3, pool=8):
    trainers = []
    free = list(range(pool))
    for j in range(jobs):
        batches = []
        for b in sorted(rng.choice([64, 128, 256, 512], size=rng.integers(1, 4), replace=False)):
            pts = np.sort(rng.choice(np.arange(1, 9), size=3, replace=False))
            vals = np.cumsum(rng.uniform(50, 400, size=3)) * (b / 128) ** rng.uniform(-0.3, 0.5)
            if rng.random() < 0.3:
                vals = vals[::-1].copy()   # non-concave, falling curves too
            batches.append((int(b), Curve(tuple(int(p) for p in pts), tuple(float(v) for v in vals))))
        now = batches[int(rng.integers(0, len(batches)))][0]
        hold = int(rng.integers(0, 3))
        cur = tuple(free[:hold])
        free = free[hold:]
        nmin = int(rng.integers(1, 3))
        trainers.append(TrainerState(id=f"t{j}", nmin=nmin, nmax=int(rng.integers(nmin, 9)),
                                     curve=dict(batches)[now], current=cur, rup_s=float(rng.uniform(0, 30)),
                                     rdw_s=float(rng.uniform(0, 20)), batches=tuple(batches), batch_size=now))
    return AllocState(pool=tuple(range(pool)), trainers=tuple(trainers))


@pytest.mark.parametrize("seed", seeds(60))
def test_dp_and_milp_match_brute_force_with_batch_sizes(seed):
    rng = np.random.default_rng(seed)
    state = random_instance(rng, jobs=int(rng.integers(1, 4)), pool=int(rng.integers(2, 9)))
    opts = AllocOptions(tfwd_s=float(rng.choice([10, 120, 600])))
    want = brute(state, opts)
    for name in ("dp", "milp", "hull", "dp-reduced", "auto"):
        res = allocate(name, state, opts)
        assert res.objective == pytest.approx(want, rel=1e-9, abs=1e-6), (name, seed)
        for t in state.trainers:   # the reported batch size is one of the Trainer's
            assert res.batch_sizes[t.id] in dict(t.batches)


def test_hand_computed_choice_small_batch_on_few_nodes_large_on_many():
    # batch 64 is faster on 1-2 nodes, batch 512 on 4 (per-GPU batch too small to use them otherwise)
    small = Curve((0, 1, 2, 4), (0.0, 100.0, 150.0, 170.0))
    large = Curve((0, 1, 2, 4), (0.0, 60.0, 120.0, 240.0))
    t = TrainerState(id="a", nmin=1, nmax=4, curve=small, rup_s=0.0, rdw_s=0.0,
                     batches=((64, small), (512, large)), batch_size=64)
    for pool, want_b in ((1, 64), (2, 64), (4, 512)):
        res = allocate("dp", AllocState(pool=tuple(range(pool)), trainers=(t,)), AllocOptions(tfwd_s=100))
        assert res.counts["a"] == pool and res.batch_sizes["a"] == want_b
        assert res.to_json()["batch_sizes"] == {"a": want_b}
    # the IBM baseline: batch size fixed at 64 gives 170 samples/s on 4 nodes instead of 240
    fixed = TrainerState(id="a", nmin=1, nmax=4, curve=small, rup_s=0.0, rdw_s=0.0)
    assert allocate("dp", AllocState(pool=(0, 1, 2, 3), trainers=(fixed,)),
                    AllocOptions(tfwd_s=100)).objective == pytest.approx(17000.0)


def test_instance_json_batch_sizes_and_errors(tmp_path):
    doc = {"pool_nodes": 4, "trainers": [{"id": "a", "batch_size": 512, "batch_sizes": [
        {"batch_size": 64, "nodes": [1, 2, 4], "samples_per_s": [100, 150, 170]},
        {"batch_size": 512, "nodes": [1, 2, 4], "samples_per_s": [60, 120, 240]}]}]}
    f = tmp_path / "i.json"
    f.write_text(json.dumps(doc))
    state, _ = load_instance(f)
    assert state.trainers[0].batch_size == 512 and state.trainers[0].curve(4) == 240.0
    doc["trainers"][0]["batch_size"] = 100
    f.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"trainers\[0\]\.batch_size"):
        load_instance(f)
    doc["trainers"][0]["batch_size"] = 64
    doc["trainers"][0]["batch_sizes"][1]["batch_size"] = 64
    f.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="distinct"):
        load_instance(f)


def test_replay_switches_batch_size_when_the_pool_grows():
    """A fixed pool of 2 nodes grows to 4 (a log pool): the Trainer runs batch 64 on 2 nodes, then
    batch 512 on 4; samples follow each batch size's curve; the rescale cost uses the old rate."""
    from planner.replay.pool import PoolTrace
    from planner.replay.simulator import simulate
    from planner.workload.trainers import TrainerSpec

    small = Curve((0, 1, 2, 4), (0.0, 100.0, 150.0, 170.0))
    large = Curve((0, 1, 2, 4), (0.0, 60.0, 120.0, 240.0))
    spec = TrainerSpec(id="a", model="m", curve=small, nmin=1, nmax=4, rup_s=10.0, rdw_s=5.0,
                       work_samples=1e12, batches=((64, small), (512, large)), batch_size=64)
    pool = PoolTrace(log="t", start_s=0.0, end_s=1000.0, nodes=4, initial_idle=[0, 1],
                     times=[400.0], joins=[[2, 3]], leaves=[[]])
    res = simulate(pool, [spec], allocator="dp", pj_max=1)
    # 400 s at 150/s, then 600 s at 240/s, minus Rup 10 s of the old rate 150/s
    assert res.summary["samples"] == pytest.approx(400 * 150 + 600 * 240 - 10 * 150)
    assert res.summary["rescale_cost_samples"] == pytest.approx(1500.0)


def test_trainer_csv_batch_sizes_column(tmp_path):
    from planner.workload.generators import from_csv

    cell = json.dumps([{"batch_size": 64, "nodes": [1, 2], "samples_per_s": [100, 150]},
                       {"batch_size": 512, "nodes": [1, 2], "samples_per_s": [60, 120]}]).replace('"', '""')
    f = tmp_path / "w.csv"
    f.write_text(f'id,model,submit_s,work_samples,batch_sizes,batch_size,request_nodes\n'
                 f'a,resnet18,0,1e6,"{cell}",512,2\nb,resnet18,5,1e6,,,\n')
    a, b = from_csv(f)
    assert a.batch_size == 512 and a.curve(2) == 120.0 and len(a.batches) == 2 and a.request_nodes == 2
    assert b.batches == () and b.batch_size is None and b.request_nodes is None
    f.write_text('id,model,submit_s,work_samples,batch_sizes\na,resnet18,0,1e6,"[{""batch_size"": 0}]"\n')
    with pytest.raises(InputError, match=r"line 2, field 'batch_sizes\[0\]\.batch_size'"):
        from_csv(f)


def test_batch_levels_cache_keys_every_input():
    """batch_levels is cached: Trainers differing only in the current batch size, the rescale
    cost or the remaining work (the progress weight) must not share a table, and a cached table
    equals a fresh computation (read-only, so no caller can change it for the next one)."""
    from dataclasses import replace

    from planner.allocators import base

    c1 = Curve((0, 1, 2, 4), (0.0, 1.0, 1.6, 2.0))
    c2 = Curve((0, 1, 2, 4), (0.0, 1.2, 1.5, 1.7))
    t = TrainerState(id="a", nmin=1, nmax=4, curve=c1, batches=((64, c1), (128, c2)), batch_size=64,
                     rup_s=5.0, rdw_s=3.0, remaining_samples=50.0)
    variants = [t, replace(t, curve=c2, batch_size=128), replace(t, rdw_s=9.0), replace(t, remaining_samples=500.0)]
    for objective in ("throughput", "progress", "scaling-efficiency"):
        opts = AllocOptions(tfwd_s=10.0, objective=objective)
        warm = [tuple(a.tolist() for a in base.batch_levels(v, opts, 4, 2)) for v in variants]
        for v, got in zip(variants, warm):
            base._batch_levels_small.cache_clear()
            fresh = base.batch_levels(v, opts, 4, 2)
            assert got == tuple(a.tolist() for a in fresh)
            assert not any(a.flags.writeable for a in fresh)
        assert warm[0] != warm[1] and warm[0] != warm[2]
        if objective == "progress":
            assert warm[0] != warm[3]
