"""`dp-reduced` (planner.allocators.dp_reduced): the Lagrangian reduction keeps dp's optimum.

Direct tests on random multiple-choice knapsacks (the level tables dp solves): non-concave and
falling values, negative values, ties, Nmin gaps, capacities below the smallest positive levels,
against dp.solve_levels and brute force; each proof path (bound, reduced dp, whole dp) is seen."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from planner.allocators import dp, dp_reduced
from tests.helpers import seeds


def knapsack(seed: int, items: int, cap: int):
    """Random level tables: levels 0 and Nmin..Nmax (sometimes sparse), values of four kinds."""
    rng = np.random.default_rng(seed)
    levels, values = [], []
    for _ in range(items):
        nmin = int(rng.integers(1, 6))
        nmax = min(cap, nmin + int(rng.integers(0, 30)))
        lv = np.arange(nmin, nmax + 1) if nmin <= nmax else np.zeros(0, dtype=np.int64)
        if len(lv) and rng.random() < 0.2:
            lv = np.unique(rng.choice(lv, size=max(1, len(lv) // 3)))
        lv = np.concatenate(([0], lv)).astype(np.int64)
        kind = rng.integers(4)
        x = lv.astype(float)
        if kind == 0:    # concave, rising (a saturating speed-up)
            v = 1000 * np.sqrt(x)
        elif kind == 1:  # non-concave, noisy, may fall
            v = np.cumsum(rng.normal(20, 60, size=len(lv)))
        elif kind == 2:  # ties: small integers
            v = rng.integers(0, 4, size=len(lv)).astype(float) * 10
        else:            # a rescale-cost spike at a held count, as base._levels_values makes
            c = int(rng.choice(lv))
            v = 800 * np.log1p(x) - np.where(lv > c, 300.0, np.where(lv < c, 200.0, 0.0))
        v[0] = float(rng.choice([0.0, -50.0, float(v[0])]))
        levels.append(lv)
        values.append(v)
    return cap, levels, values


def value_of(levels, values, chosen) -> tuple[int, float]:
    return (sum(int(lv[i]) for lv, i in zip(levels, chosen)),
            sum(float(v[i]) for v, i in zip(values, chosen)))


@pytest.mark.parametrize("seed", seeds(400))
def test_matches_dp(seed):
    rng = np.random.default_rng(10_000 + seed)
    cap, levels, values = knapsack(seed, int(rng.integers(1, 25)), int(rng.integers(0, 300)))
    _, want = dp.solve_levels(cap, levels, values)
    chosen, got, info = dp_reduced.solve_levels(cap, levels, values)
    used, val = value_of(levels, values, chosen)
    assert used <= cap
    assert val == pytest.approx(want, rel=1e-9, abs=1e-9) and got == pytest.approx(want, rel=1e-9, abs=1e-9)
    assert info["bound"] >= want - 1e-9 * max(1.0, abs(want))  # weak duality
    assert info["proof"] in ("bound", "reduced", "dp")
    assert dp_reduced.solve_levels(cap, levels, values)[0] == chosen  # deterministic


@pytest.mark.parametrize("seed", seeds(60))
def test_matches_brute_force(seed):
    rng = np.random.default_rng(20_000 + seed)
    cap, levels, values = knapsack(seed, int(rng.integers(1, 4)), int(rng.integers(0, 12)))
    levels = [lv[:6] for lv in levels]
    values = [v[:6] for v in values]
    best = max(val for used, val in (value_of(levels, values, c)
                                     for c in itertools.product(*[range(len(lv)) for lv in levels]))
               if used <= cap)
    assert dp_reduced.solve_levels(cap, levels, values)[1] == pytest.approx(best, rel=1e-12, abs=1e-9)


@pytest.mark.slow  # 0.8 s CPU measured in the default run: the slow tier
def test_every_proof_path_is_taken():
    """Over these instances the bound alone, the reduced dp and the whole dp each prove some:
    the tests above exercise all three."""
    seen = set()
    for seed in range(400):
        rng = np.random.default_rng(10_000 + seed)
        cap, levels, values = knapsack(seed, int(rng.integers(1, 25)), int(rng.integers(0, 300)))
        seen.add(dp_reduced.solve_levels(cap, levels, values)[2]["proof"])
    assert seen == {"bound", "reduced", "dp"}


def test_hull_is_above_every_point_and_cached():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        lv = np.concatenate(([0], np.sort(rng.choice(np.arange(1, 200), size=n, replace=False)))).astype(np.int64)
        v = rng.normal(0, 100, size=n + 1).cumsum()
        idx, slopes, widths = dp_reduced.value_hull(lv, v)
        assert idx[0] == 0 and np.all(np.diff(idx) > 0)
        assert np.all(slopes > 0) and np.all(np.diff(slopes) < 0)
        assert np.array_equal(widths, np.diff(lv[idx]))
        # every point lies on or below the hull's line through its segment; past the last
        # vertex nothing rises above it
        for a, b, s in zip(idx, idx[1:], slopes):
            seg = (lv >= lv[a]) & (lv <= lv[b])
            assert np.all(v[seg] <= v[a] + s * (lv[seg] - lv[a]) + 1e-6)
        assert np.all(v[idx[-1]:] <= v[idx[-1]] + 1e-9)
        assert np.all(v <= v[idx[-1]] + 1e-9)
        assert dp_reduced.value_hull(lv, v) is dp_reduced.value_hull(lv, v)  # cached per table
    fresh = np.array([0.0, 5.0, 6.0])
    other = fresh.copy()
    other[1] = 1.0  # a different table with equal shape: its own hull
    assert dp_reduced.value_hull(np.arange(3), fresh)[0].tolist() == [0, 1, 2]
    assert dp_reduced.value_hull(np.arange(3), other)[0].tolist() == [0, 2]


def test_empty_and_zero_capacity():
    assert dp_reduced.solve_levels(5, [], [])[:2] == ([], 0.0)
    levels = [np.array([0, 2, 3]), np.array([0, 1])]
    values = [np.array([-1.0, 5.0, 7.0]), np.array([0.0, 4.0])]
    chosen, opt, _ = dp_reduced.solve_levels(0, levels, values)
    assert chosen == [0, 0] and opt == -1.0


def test_caches_are_bounded_and_release_tables():
    """A hull entry lives as long as its level table; tables of thousands of levels (one per held
    count) are kept 64 at a time, not 8,192 (gigabytes over a long replay)."""
    from planner.allocators import base
    from planner.workload.trainers import imagenet_curves

    v = np.array([0.0, 3.0, 5.0, 6.0])
    dp_reduced.value_hull(np.arange(4), v)
    key = id(v)
    assert key in dp_reduced._HULLS
    del v
    assert key not in dp_reduced._HULLS
    curve = next(iter(imagenet_curves().values()))
    before = base._levels_values_small.cache_info().currsize
    for c in range(100):  # 100 held counts of a Trainer with Nmax 5,000 on a 5,000-node pool
        lv, vals = base._levels_values(curve, 1, 5000, 5000, False, c, 18.0, 12.0, 1.0, 120.0, False)
        assert len(lv) == 5001
    assert base._levels_values_large.cache_info().currsize <= 64
    assert base._levels_values_small.cache_info().currsize == before


def test_dp_keeps_no_buffer_past_its_cap(monkeypatch):
    """dp reuses its table buffers per thread, but one call larger than KEEP_MAX leaves none behind
    (and its answer equals the one with every buffer kept)."""
    import threading

    levels = [np.array([0, 1000, 3000]), np.array([0, 2000, 2500])]  # tables of ~5,000 values
    values = [np.array([0.0, 1.0, 2.6]), np.array([0.0, 2.1, 2.5])]
    want = dp.solve_levels(5000, levels, values)
    out = {}

    def fresh_thread():  # a thread of its own: no buffer from earlier tests
        monkeypatch.setattr(dp, "KEEP_MAX", 100)
        out["got"] = dp.solve_levels(5000, levels, values)
        out["kept"] = {k: len(v) for k, v in vars(dp._BUFFERS).items()}

    t = threading.Thread(target=fresh_thread)
    t.start()
    t.join()
    assert out["got"] == want
    assert want[1] == pytest.approx(4.7)  # 3000 + 2000 nodes
    assert all(n <= 1024 for n in out["kept"].values()), out["kept"]  # none of the large ones
