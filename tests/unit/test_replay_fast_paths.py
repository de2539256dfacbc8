"""The replay's fast paths against the array code they replaced, float for float (issue 25, the
Planner's Run: dp's and equal share's replays in plain floats and fewer NumPy calls). Each
reference below is the earlier implementation, kept here as the oracle; the replays themselves are
compared whole in tests/unit/test_scenario_golden.py, test_replay_memo.py and test_pair_parallel.py."""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import fields

import numpy as np

from planner.allocators import dp
from planner.allocators.base import AllocOptions, TrainerState, trainer_state
from planner.replay import metrics
from planner.replay.metrics import equal_shares, static_replay
from planner.replay.pool import fixed_pool
from planner.replay.simulator import simulate
from planner.workload.generators import make_workload
from planner.workload.trainers import Curve, TrainerSpec, interp
from tests.helpers import WALL_FIELDS, assert_same_run


def _equal_shares_arrays(nodes, nmin, nmax):
    n = len(nmin)
    out = np.zeros(n)
    if n == 0:
        return []
    prefmax = np.maximum.accumulate(np.asarray(nmin, dtype=float))
    m = int((nodes / np.arange(1, n + 1) >= prefmax).sum())
    if m == 0:
        return out.tolist()
    caps = np.asarray(nmax[:m], dtype=float)
    left, k = float(nodes), m
    rest = np.ones(m, dtype=bool)
    for i in np.argsort(caps, kind="stable"):
        if caps[i] <= left / k:
            out[i] = caps[i]
            left -= caps[i]
            k -= 1
            rest[i] = False
        else:
            break
    if k:
        out[:m][rest] = left / k
    return out.tolist()


def _static_replay_arrays(specs, nodes, horizon_s, pj_max):
    specs = sorted([s for s in specs if s.submit_s < horizon_s], key=lambda s: s.submit_s)
    ai, now, active, samples, completed, queue = 0, 0.0, [], 0.0, 0, deque()
    while True:
        ta = specs[ai].submit_s if ai < len(specs) else math.inf
        tc = min((now + a[1] / a[2] for a in active if a[2] > 0), default=math.inf)
        tn = min(ta, tc, horizon_s)
        dt = tn - now
        if dt > 0:
            for a in active:
                if a[2] > 0:
                    got = min(a[2] * dt, a[1])
                    a[1] -= got
                    samples += got
        now = tn
        if now >= horizon_s:
            break
        left = []
        for a in active:
            if a[1] <= 1e-9 * a[0].work_samples + 1e-6 or (a[2] > 0 and now + a[1] / a[2] <= now):
                samples += max(a[1], 0.0)
                completed += 1
            else:
                left.append(a)
        active = left
        while ai < len(specs) and specs[ai].submit_s <= now:
            queue.append(specs[ai])
            ai += 1
        while queue and len(active) < pj_max:
            s = queue.popleft()
            active.append([s, float(s.work_samples), 0.0])
        shares = _equal_shares_arrays(nodes, [a[0].nmin for a in active], [a[0].nmax for a in active])
        for a, sh in zip(active, shares):
            c = a[0].curve
            a[2] = float(np.interp(min(sh, c.nodes[-1]), c.nodes, c.samples_per_s))
        if not active and ai >= len(specs):
            break
    return {"samples": samples, "completed": completed}


def test_interp_is_numpys_number():
    rng = np.random.default_rng(0)
    for _ in range(40):
        xs = tuple(sorted({0, *rng.integers(1, 300, size=int(rng.integers(1, 10))).tolist()}))
        ys = tuple(np.sort(rng.uniform(0, 1e5, size=len(xs))).tolist())
        pts = np.concatenate([rng.uniform(-5, xs[-1] * 1.3, 150), np.asarray(xs, float), 1024 / np.arange(1, 40)])
        for x in pts.tolist():
            assert interp(x, xs, ys) == float(np.interp(x, xs, ys))


def test_equal_shares_and_static_replay_are_the_array_codes_numbers():
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(0, 12))
        nmin = rng.integers(1, 6, n).tolist()
        nmax = (np.asarray(nmin) + rng.integers(0, 40, n)).tolist()
        nodes = float(rng.uniform(0, 200))
        assert equal_shares(nodes, nmin, nmax) == _equal_shares_arrays(nodes, nmin, nmax)
    specs = make_workload("diverse", seed=2, count=60) + make_workload("hpo", seed=1, count=40)
    for nodes, pj_max in ((37.3, 6), (410.0, 10), (3.5, 3)):
        metrics._static_replay.cache_clear()  # computed, not remembered
        want = _static_replay_arrays(specs, nodes, 6 * 3600.0, pj_max)
        assert static_replay(specs, nodes, 6 * 3600.0, pj_max) == want


def _problem(rng, J, cap, ties):
    levels, values = [], []
    for _ in range(J):
        kmax = int(rng.integers(0, 12))
        levels.append(np.arange(kmax + 1))
        v = rng.integers(-3, 6, kmax + 1).astype(float) if ties else rng.normal(0, 5, kmax + 1)
        values.append(v)
    return cap, levels, values


def test_dp_contiguous_path_is_the_general_paths_answer():
    """Levels 0..kmax take dp's lean path; its choices and optimum are the general path's, ties
    included (integer values: many ties; the smallest level wins)."""
    rng = np.random.default_rng(3)
    for i in range(200):
        cap, levels, values = _problem(rng, int(rng.integers(1, 9)), int(rng.integers(0, 40)), ties=i % 2 == 0)
        got = dp.solve_levels(cap, levels, values)
        want = dp._solve_general(cap, levels, values)
        assert got[0] == want[0] and repr(got[1]) == repr(want[1])


def test_dp_memo_answers_the_same_and_only_for_read_only_tables():
    rng = np.random.default_rng(4)
    cap, levels, values = _problem(rng, 6, 20, ties=True)
    want = dp._solve_general(cap, levels, values)
    out = {}

    def fresh_thread():
        assert dp.solve_levels(cap, levels, values) == want
        out["writable"] = len(getattr(dp._BUFFERS, "memo", {}))
        for a in levels + values:
            a.setflags(write=False)
        first = dp.solve_levels(cap, levels, values)
        again = dp.solve_levels(cap, levels, values)  # from the memo
        out["memo"] = len(dp._BUFFERS.memo)
        assert first == again == want

    t = threading.Thread(target=fresh_thread)
    t.start()
    t.join()
    assert out == {"writable": 0, "memo": 1}


def test_trainer_state_and_known_alloc_state_equal_the_constructed_ones():
    c = Curve((0, 1, 4), (0.0, 100.0, 400.0))
    kw = {f.name: getattr(TrainerState(id="x", nmin=1, nmax=4, curve=c), f.name) for f in fields(TrainerState)}
    kw.update(current=(3, 5), remaining_samples=7.0, eta_node_h=0.5, running_s=9.0)
    assert trainer_state(dict(kw)) == TrainerState(**kw)
    assert trainer_state({"id": "y", "nmin": 2, "nmax": 3, "curve": c}) == TrainerState(id="y", nmin=2, nmax=3, curve=c)

    seen = []

    def spy(state, opts):  # the replay's states: given pool set and held nodes = computed ones
        seen.append(state.pool_set == frozenset(state.pool) and state.held_nodes == {
            t.id: sorted(frozenset(state.pool).intersection(t.current)) for t in state.trainers})
        return dp.allocate(state, opts)

    specs = [TrainerSpec(id=f"t{i}", model="m", curve=c, nmin=1, nmax=4, work_samples=4e5, submit_s=60.0 * i)
             for i in range(8)]
    simulate(fixed_pool(10, 0.0, 3600.0), specs, spy, opts=AllocOptions(tfwd_s=60), pj_max=4, check=True)
    assert len(seen) > 5 and all(seen)


def test_dp_replay_with_memo_and_lean_paths_matches_the_general_solver(monkeypatch):
    """A whole replay with dp's lean path and memo equals the one with the general solver alone."""
    pool = fixed_pool(48, 0.0, 2 * 3600.0)
    specs = make_workload("diverse", seed=5, count=30)
    a = simulate(pool, specs, "dp", opts=AllocOptions(objective="scaling-efficiency"), pj_max=6)
    monkeypatch.setattr(dp, "solve_levels", lambda cap, lv, v: dp._solve_general(cap, lv, v))
    b = simulate(pool, specs, "dp", opts=AllocOptions(objective="scaling-efficiency"), pj_max=6)
    assert_same_run(a, b, WALL_FIELDS)
