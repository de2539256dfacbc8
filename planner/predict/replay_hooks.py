"""The survival model at work in a replay: adaptive T_fwd and preemption-aware node choice.

An `IdlePredictor` follows the pool of one replay window event by event (`advance(t_s)`
consumes the pool's joins and leaves up to t_s, nothing later) and keeps, per pool node, when
its current idle period began and its history (planner.predict.survival.node_history's EWMA, updated
online when a fragment ends). At a decision it scores nodes with the Cox model fit on the log
*before the window start* (planner.predict.survival.fit on [log start, window start)): the score is the
log relative hazard (higher = reclaimed sooner).

- `tfwd_s(t_s)`: adaptive T_fwd = the median of the predicted time until the first idle node
  of the pool is reclaimed, times a scale fitted on the history (observed median time to the
  next leave event / predicted median, over the history's events: nodes are reclaimed in
  groups, not independently), clipped to [tfwd_min_s, tfwd_max_s].
- `node_tfwd_s(t_s)` (tfwd_rule "node-survival", the prediction-aware objective of issue 24):
  T_fwd = the median over idle pool nodes of each node's own predicted median remaining idle
  time, clipped as above; no group scale (docs/windows.md measures it on held-out windows).
- `node_map(state, counts)`: the counts stay exactly the allocator's; a shrinking Trainer keeps
  the nodes predicted to stay idle longest (releases those predicted to be reclaimed soonest);
  growing Trainers keep all theirs and take free nodes longest-predicted-idle first. No
  migration, by construction, as planner.allocators.base.counts_to_map.
"""

from __future__ import annotations

import copy
import math
import time

import numpy as np

from planner import paths
from planner.errors import InputError
from planner.idle import fragments as F
from planner.idle.window import Window
from planner.predict.survival import HIST_ALPHA, Fragments, SurvivalModel, feature_matrix, fit
from planner.replay.pool import PoolTrace
from planner.store import catalog

NODE_CHOICES = ("lowest-id", "predicted")
TFWD_RULES = ("fixed", "adaptive", "node-survival")
TFWD_MIN_S, TFWD_MAX_S = 10.0, 600.0
TFWD_Q = 0.5


class IdlePredictor:
    def __init__(self, model: SurvivalModel, pool: PoolTrace, tfwd_scale: float = 1.0,
                 tfwd_min_s: float = TFWD_MIN_S, tfwd_max_s: float = TFWD_MAX_S, q: float = TFWD_Q):
        self.model, self.pool = model, pool
        self.tfwd_scale, self.tfwd_min_s, self.tfwd_max_s, self.q = tfwd_scale, tfwd_min_s, tfwd_max_s, q
        n = int(pool.nodes)
        self.idle = np.zeros(n, bool)
        self.idle[pool.initial_idle] = True
        self.since = np.full(n, float(pool.start_s))
        self.hist = np.full(n, float(model.prior_hist))
        self.has_hist = np.zeros(n, bool)
        self.pi = 0
        w = model.coef / model.scale
        self.w_age, self.w_hist = float(w[0]), float(w[5])
        self.calls = 0
        self.busy_s = 0.0
        self._common_key, self._common = None, 0.0

    def carry_state(self, other: IdlePredictor):
        """Start from the state another predictor reached at this pool's start (its history)."""
        self.since[:] = np.where(self.idle & other.idle, other.since, self.pool.start_s)
        self.hist[:], self.has_hist[:] = other.hist, other.has_hist

    def advance(self, t_s: float):
        """Consume the pool events at times <= t_s (absolute seconds)."""
        p = self.pool
        while self.pi < len(p.times) and p.times[self.pi] <= t_s:
            t = float(p.times[self.pi])
            lv = np.asarray(p.leaves[self.pi], np.int64)
            if len(lv):
                lv = lv[self.idle[lv]]
                ll = np.log1p(t - self.since[lv])
                h = self.has_hist[lv]
                self.hist[lv] = np.where(h, HIST_ALPHA * ll + (1 - HIST_ALPHA) * self.hist[lv], ll)
                self.has_hist[lv] = True
                self.idle[lv] = False
            jn = np.asarray(p.joins[self.pi], np.int64)
            if len(jn):
                jn = jn[~self.idle[jn]]
                self.idle[jn] = True
                self.since[jn] = t
            self.pi += 1

    def scores(self, ids, t_s: float) -> np.ndarray:
        """Log relative hazard of nodes `ids` at t_s (higher = reclaimed sooner)."""
        ids = np.asarray(ids, np.int64)
        frac = self.idle.sum() / max(len(self.idle), 1)
        if self._common_key != (t_s, frac):  # one per decision time (T_fwd and node map share it)
            self._common_key = (t_s, frac)
            self._common = float(self.model.lin(feature_matrix(0.0, t_s, frac, 0.0))[0])
        common = self._common
        age = np.maximum(t_s - self.since[ids], 0.0)
        return common + self.w_age * np.log1p(age) + self.w_hist * self.hist[ids]

    def raw_pool_s(self, t_s: float) -> float:
        return self.model.pool_quantile_s(self.scores(np.flatnonzero(self.idle), t_s), self.q)

    def tfwd_s(self, t_s: float) -> float:
        """Adaptive T_fwd at t_s (absolute seconds); advance first."""
        c0 = time.perf_counter()
        self.advance(t_s)
        raw = self.raw_pool_s(t_s) * self.tfwd_scale
        self.calls += 1
        self.busy_s += time.perf_counter() - c0
        return float(min(max(raw, self.tfwd_min_s), self.tfwd_max_s)) if not math.isnan(raw) else self.tfwd_max_s

    def node_tfwd_s(self, t_s: float) -> float:
        """Prediction-aware T_fwd at t_s: the median over the pool's idle nodes of each node's own
        predicted median remaining idle time (what an allocation is worth over the time its
        nodes are expected to stay, instead of the time until the first of ~K nodes goes),
        clipped to [tfwd_min_s, tfwd_max_s]; advance first."""
        c0 = time.perf_counter()
        self.advance(t_s)
        ids = np.flatnonzero(self.idle)
        per = self.model.quantile_s(self.scores(ids, t_s), 0.5) if len(ids) else np.empty(0)
        raw = float(np.median(np.minimum(per, self.tfwd_max_s))) if len(per) else self.tfwd_max_s
        self.calls += 1
        self.busy_s += time.perf_counter() - c0
        return float(min(max(raw, self.tfwd_min_s), self.tfwd_max_s))

    def node_map(self, state, counts: dict[str, int], t_s: float) -> dict[str, tuple[int, ...]]:
        """Node map of `counts` without migration, by predicted idle time (see the module doc)."""
        c0 = time.perf_counter()
        held = state.held_nodes  # built once per decision (base.AllocState)
        if all(counts.get(t.id, 0) == len(held[t.id]) for t in state.trainers):  # nobody changes
            out = {t.id: tuple(held[t.id]) for t in state.trainers}
        else:
            self.advance(t_s)
            pool = np.asarray(state.pool, np.int64)
            rank = np.full(_id_span(pool, state), len(pool), np.int64)
            rank[pool[np.argsort(self.scores(pool, t_s), kind="stable")]] = np.arange(len(pool))
            out = ranked_map(state, counts, rank)
        self.calls += 1
        self.busy_s += time.perf_counter() - c0
        return out


def _id_span(pool: np.ndarray, state) -> int:
    """1 + the largest node id the state mentions (pool or held)."""
    return 1 + max([int(pool.max()) if len(pool) else -1] + [max(t.current) for t in state.trainers if t.current])


def _held(current, inpool: np.ndarray) -> np.ndarray:
    """The Trainer's nodes still in the pool, ascending."""
    cur = np.asarray(current, np.int64)
    return np.sort(cur[inpool[cur]]) if len(cur) else cur


def ranked_map(state, counts: dict[str, int], rank: np.ndarray) -> dict[str, tuple[int, ...]]:
    """counts_to_map with an order: nodes with a lower rank are kept and taken first.
    `rank` is indexed by node id and covers the pool and every node a Trainer holds."""
    pool = np.asarray(state.pool, np.int64)
    inpool = np.zeros(len(rank), bool)
    inpool[pool] = True
    used = np.zeros(len(rank), bool)
    taken, need = {}, 0
    for t in state.trainers:
        n = counts.get(t.id, 0)
        cur = _held(t.current, inpool) if n > 0 else pool[:0]
        keep = cur if len(cur) <= n else cur[np.argsort(rank[cur], kind="stable")[:n]]
        taken[t.id] = keep
        used[keep] = True
        need += max(n - len(keep), 0)
    free = pool[:0]
    if need:
        free = pool[~used[pool]]
        free = free[np.argsort(rank[free], kind="stable")[:need]]
    if len(free) < need:
        raise ValueError("counts exceed the pool")
    pos, out = 0, {}
    for t in state.trainers:
        want = max(counts.get(t.id, 0) - len(taken[t.id]), 0)
        ids = np.concatenate((taken[t.id], free[pos:pos + want])) if want else taken[t.id]
        ids.sort()
        out[t.id] = tuple(ids.tolist())
        pos += want
    return out


def _history_trace(con, win: Window, t0: float):
    """Fragments and pool trace of [log start, t0) with the replay's pool ids (win's pool)."""
    row = F._log_row(con, win.log)
    lo = float(row["start_s"])
    if t0 <= lo:
        raise InputError("adaptive T_fwd and predicted node choice fit on the log before the window: "
                         "start the window after the log's start", field="start")
    hours = (t0 - lo) / 3600.0
    wd = F.window_data(con, win.replace(start=lo, hours=hours))
    return Fragments.of(F.characterize_window(wd)), F.trace_from_window(wd)


def tfwd_scale(pred: IdlePredictor, trace: PoolTrace) -> float:
    """Observed / predicted median time to the next leave event over the history's events."""
    lt = trace.times[np.array([len(x) > 0 for x in trace.leaves], bool)] if len(trace.times) else np.empty(0)
    obs, raw = [], []
    for i, t in enumerate(trace.times):
        pred.advance(t)
        j = np.searchsorted(lt, t, side="right")
        if j < len(lt) and i % 4 == 0:  # every 4th event: enough for a median, 4x cheaper
            obs.append(lt[j] - t)
            raw.append(pred.raw_pool_s(t))
    raw = np.asarray(raw, float)
    ok = np.isfinite(raw) & (raw > 0)
    if not ok.any():
        return 1.0
    return float(np.median(np.asarray(obs)[ok]) / np.median(raw[ok]))


def for_window(con, win: Window, pool: PoolTrace, model: SurvivalModel | None = None, **kw) -> IdlePredictor:
    """A predictor for a replay of `pool` (the pool of `win`): the model fit on the log before the
    window (unless given; seeded with win.seed), the T_fwd scale and each node's state at the
    window start from that history."""
    fr, hist = _history_trace(con, win, float(pool.start_s))
    if model is None:
        model = fit(fr, seed=win.seed)
    past = IdlePredictor(model, hist)
    scale = tfwd_scale(past, hist)
    past.advance(float(pool.start_s))
    pred = IdlePredictor(model, pool, tfwd_scale=scale, **kw)
    pred.carry_state(past)
    return pred


# ---------------------------------------------------------------- the replay hooks (planner.replay.hooks)

class PredictedNodes:
    """NodeMapper: growing Trainers take the free nodes predicted to stay idle longest, shrinking
    ones release those predicted to be reclaimed soonest; counts are the allocator's."""

    name = "predicted"

    def __init__(self, pred: IdlePredictor):
        self.pred = pred

    def decision_map(self, state, result) -> dict[str, tuple[int, ...]]:
        return self.pred.node_map(state, result.counts, self.pred.pool.start_s + state.now_s)

    def pick_free(self, free: np.ndarray, k: int, now_s: float) -> np.ndarray:
        t = self.pred.pool.start_s + now_s
        self.pred.advance(t)
        free = np.asarray(free, np.int64)
        return free[np.argsort(self.pred.scores(free, t), kind="stable")[:k]]


class AdaptiveTfwd:
    """TfwdRule: the predictor's adaptive T_fwd at each decision."""

    def __init__(self, pred: IdlePredictor):
        self.pred = pred

    def __call__(self, state) -> float:
        return self.pred.tfwd_s(self.pred.pool.start_s + state.now_s)


class NodeSurvivalTfwd(AdaptiveTfwd):
    """TfwdRule: T_fwd from each idle node's predicted remaining idle time (IdlePredictor.node_tfwd_s)."""

    def __call__(self, state) -> float:
        return self.pred.node_tfwd_s(self.pred.pool.start_s + state.now_s)


def hooks(con, win: Window, pool: PoolTrace, tfwd_rule: str = "fixed", node_choice: str = "lowest-id",
          predictor: IdlePredictor | None = None) -> dict:
    """simulate() keyword arguments for the chosen rules ({} for today's)."""
    if tfwd_rule not in TFWD_RULES:
        raise InputError(f"choose one of {', '.join(TFWD_RULES)}, got {tfwd_rule!r}", field="tfwd_rule")
    if node_choice not in NODE_CHOICES:
        raise InputError(f"choose one of {', '.join(NODE_CHOICES)}, got {node_choice!r}", field="node_choice")
    if tfwd_rule == "fixed" and node_choice == "lowest-id":
        return {}
    if pool.kind != "log":
        raise InputError("adaptive T_fwd and predicted node choice need a log pool (a fixed pool never "
                         "loses nodes)", field="tfwd_rule" if tfwd_rule != "fixed" else "node_choice")
    pred = predictor or for_window(con, win, pool)
    out = {}
    if tfwd_rule == "adaptive":
        out["tfwd_rule"] = AdaptiveTfwd(pred)
    elif tfwd_rule == "node-survival":
        out["tfwd_rule"] = NodeSurvivalTfwd(pred)
    if node_choice == "predicted":
        out["node_mapper"] = PredictedNodes(pred)
    return out


_FITTED: dict = {}  # (db, log, window, pool subset, seed) -> a fitted predictor (a few, per process)
_FITTED_MAX = 4


def scenario_hooks(sc, pool: PoolTrace, con=None) -> dict:
    """hooks() for a planner.scenario.record.Scenario (opens sc.db read-only when no con is given). The
    fitted predictor depends only on the log before the window and the pool, not on the
    allocator or the workload: it is fit once per process for those and copied for each replay
    (a sweep over allocators or T_fwd no longer refits the model in every cell)."""
    if sc.tfwd_rule == "fixed" and sc.node_choice == "lowest-id":
        return {}

    key = (str(sc.db or paths.default_db()), sc.log, float(pool.start_s), float(pool.end_s), sc.pool_size,
           sc.pool_subset, sc.seed)
    with catalog.log_connection(sc.db, sc.log, con) as (con, log):
        if key not in _FITTED and pool.kind == "log":
            if len(_FITTED) >= _FITTED_MAX:
                _FITTED.pop(next(iter(_FITTED)))
            _FITTED[key] = for_window(con, sc.window(log), pool)
        pred = copy.deepcopy(_FITTED[key]) if key in _FITTED else None
        return hooks(con, sc.window(log), pool, sc.tfwd_rule, sc.node_choice, predictor=pred)
