"""planner.predict.survival / predict_eval / predict: censoring, no peeking, seeds, the node map."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.allocators.base import AllocState, TrainerState
from planner.predict import evaluate as E
from planner.predict import survival as S
from planner.predict.replay_hooks import IdlePredictor, ranked_map
from planner.replay.pool import PoolTrace
from tests.helpers import examples, frags, synthetic_fragments

T0 = 1_609_459_200.0  # 2021-01-01 00:00 UTC, a Friday


def test_kaplan_meier_counts_censored_fragments_as_lower_bounds():
    # lengths 100, 200 (open at the window end: censored), 300, 400, all starting at T0 + 0
    t1 = T0 + 200
    fr = frags([0, 1, 2, 3], [T0 - 0, T0 + 0, T0, T0], [T0 + 100, t1, T0 + 300, T0 + 400], t1=T0 + 1000)
    fr.closed = np.array([True, False, True, True])
    m = S.fit(fr, step_s=50)
    # KM: S(100) = 3/4, S(300) = 3/4 * 1/2 = 3/8: median 300 (200 as an event would give 200)
    assert m.km_quantile_s(0.0)[()] == pytest.approx(300.0)
    assert m.km_at(250.0)[()] == pytest.approx(0.75)


def test_all_open_fragments_give_no_fitted_length_shorter_than_observed():
    rng = np.random.default_rng(3)
    n = 40
    start = T0 + rng.uniform(0, 5000, n)
    t1 = T0 + 6000
    fr = frags(np.arange(n), start, np.full(n, t1), t1=t1)  # every node still idle at the end
    assert not fr.closed.any()
    m = S.fit(fr, step_s=100)
    observed = t1 - start
    lm = S.landmarks(fr, T0, t1, t1, m.prior_hist, step_s=100, max_rows=None)
    for q in (0.1, 0.5, 0.9):
        km_total = lm.age_s + m.km_quantile_s(lm.age_s, q)
        cox_total = lm.age_s + m.quantile_s(m.lin(lm.x), q)
        obs = observed[lm.node]
        assert np.all(km_total >= obs) and np.all(cox_total >= obs)


def test_landmarks_never_see_past_the_cut():
    rng = np.random.default_rng(1)
    n = 300
    start = T0 + rng.uniform(0, 9000, n)
    end = start + rng.exponential(800, n)
    node = np.arange(n)
    fr = frags(node, start, np.minimum(end, T0 + 10_000), t1=T0 + 10_000)
    cut = T0 + 6000
    lm = S.landmarks(fr, T0, cut, cut, 5.0, step_s=60, max_rows=None)
    assert len(lm) > 100
    assert np.all(lm.t_s < cut) and np.all(lm.t_s + lm.time_s <= cut + 1e-6)
    assert np.all(lm.age_s >= 0) and np.all(lm.time_s > 0)
    # an event is a reclaim observed before the cut; fragments alive at the cut are censored
    assert np.all(end[lm.node][lm.event] <= cut)
    assert not np.any(lm.event & (end[lm.node] > cut))


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_fit_and_evaluation_are_deterministic_with_a_seed():
    fr = synthetic_fragments()
    a, cal_a = E.evaluate(fr, step_s=300, max_rows=3000, test_rows=2000, seed=7)
    b, cal_b = E.evaluate(fr, step_s=300, max_rows=3000, test_rows=2000, seed=7)
    a["train"].pop("fit_s"), b["train"].pop("fit_s")
    assert a == b
    assert cal_a.equals(cal_b)
    c, _ = E.evaluate(fr, step_s=300, max_rows=3000, test_rows=2000, seed=8)
    assert c["concordance"] != a["concordance"]  # the seed picks the subsample


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_node_history_predicts_on_synthetic_data():
    fr = synthetic_fragments(seed=2)
    fig, cal = E.evaluate(fr, step_s=300, max_rows=None, test_rows=None, seed=0)
    # half the nodes have 10x longer idle periods: the history covariate must order them
    assert fig["concordance"]["cox"] > 0.65
    assert fig["concordance"]["cox"] > fig["concordance"]["km"]
    assert fig["train"]["coef"]["hist_loglen"] < 0  # a longer history: a lower hazard
    assert set(cal.model) == set(E.MODELS)


def test_online_history_matches_the_offline_one():
    fr = synthetic_fragments(seed=4, n_nodes=12, hours=12)
    n = fr.nodes
    o = np.argsort(fr.start, kind="stable")
    init = fr.node[fr.start <= fr.t0]
    times, joins, leaves = [], [], []
    ev = sorted([(s, k, 1) for k, s in zip(fr.node, fr.start) if s > fr.t0] +
                [(e, k, 0) for k, e, c in zip(fr.node, fr.end, fr.closed) if c])
    for t, k, j in ev:
        if not times or times[-1] != t:
            times.append(t), joins.append([]), leaves.append([])
        (joins if j else leaves)[-1].append(k)
    pool = PoolTrace(log="syn", start_s=fr.t0, end_s=fr.t1, nodes=n, initial_idle=init,
                     times=np.array(times), joins=[np.array(x, np.int64) for x in joins],
                     leaves=[np.array(x, np.int64) for x in leaves], derived=False)
    m = S.fit(fr, step_s=300)
    pr = IdlePredictor(m, pool)
    pr.advance(fr.t1)
    hist = S.node_history(fr.node, fr.start, fr.end, m.prior_hist)
    alpha = S.HIST_ALPHA
    for k in range(n):
        idx = o[fr.node[o] == k]
        last = idx[-1]  # the node's last fragment: its history then, plus that fragment if closed
        want = hist[last]
        if fr.closed[last]:
            ll = np.log1p(fr.end[last] - fr.start[last])
            want = ll if len(idx) == 1 else alpha * ll + (1 - alpha) * want
        assert pr.hist[k] == pytest.approx(want)


@st.composite
def map_cases(draw):
    n = draw(st.integers(1, 30))
    pool = sorted(draw(st.sets(st.integers(0, 40), min_size=n, max_size=n)))
    j = draw(st.integers(1, 5))
    free = list(pool)
    trainers, counts = [], {}
    for i in range(j):
        held = draw(st.sets(st.sampled_from(free), max_size=min(6, len(free)))) if free else set()
        gone = draw(st.sets(st.integers(41, 45), max_size=2))  # held nodes that left the pool
        free = [x for x in free if x not in held]
        trainers.append(TrainerState(id=f"t{i}", nmin=1, nmax=64, curve=None,
                                     current=tuple(sorted(held | gone))))
    left = len(pool)
    for t in trainers:
        k = draw(st.integers(0, left))
        counts[t.id] = k
        left -= k
    rank = np.asarray(draw(st.permutations(list(range(50)))), np.int64)
    return AllocState(pool=tuple(pool), trainers=tuple(trainers)), counts, rank


@pytest.mark.parametrize("budget", examples(200))
def test_predicted_node_map_keeps_counts_and_never_migrates(budget):
    @settings(max_examples=budget, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(map_cases())
    def example(case):
        state, counts, rank = case
        out = ranked_map(state, counts, rank)
        pool = set(state.pool)
        seen = set()
        for t in state.trainers:
            new = set(out[t.id])
            assert len(out[t.id]) == counts[t.id]  # the counts are the allocator's
            assert new <= pool and not (new & seen)
            seen |= new
            cur = pool & set(t.current)
            k = counts[t.id]
            if k <= len(cur):  # shrinks or stays: keeps a subset, the best ranked
                assert new <= cur
                assert sorted(rank[list(new)]) == sorted(rank[list(cur)])[:k]
            else:  # grows: keeps all it holds
                assert cur <= new
        # the free nodes taken are the best ranked of those nobody kept
        kept = set().union(*(pool & set(t.current) & set(out[t.id]) for t in state.trainers))
        taken = seen - kept
        rest = pool - kept
        if taken:
            assert max(rank[list(taken)]) <= min(rank[list(rest - taken)], default=10**9)

    example()


def test_one_row_features_equal_the_vector_ones():
    rng = np.random.default_rng(0)
    for _ in range(50):
        age, t, frac, h = rng.uniform(0, 1e5), T0 + rng.uniform(0, 30 * 86400), rng.uniform(), rng.uniform(0, 9)
        one = S.feature_matrix(age, t, frac, h)
        vec = S.feature_matrix(np.array([age, 0.0]), t, frac, np.array([h, 0.0]))[:1]
        assert one.shape == (1, len(S.FEATURES))
        np.testing.assert_allclose(one, vec, rtol=1e-12, atol=1e-12)
