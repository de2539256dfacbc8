"""The count-level problem of a decision in compact form, for `hull` (planner.allocators.hull).

base.level_tables lists every allowed level of every Trainer; at 10,000 Trainers that is a
Python call and an array per Trainer. Here the same values are described by their structure:
a Trainer's value v_j(k) (base._levels_values) is affine in k between

    0, Nmin, min(Nmax, |N|), the curve's measured node counts, C_j - 1, C_j, C_j + 1,
    and for `progress` the two integers around the point where T_fwd*O_j(k)*w_j reaches 1,

so those "candidate" levels (at most ~20 per Trainer) and their values, one row per Trainer in a
(Trainers x candidates) matrix, describe every level: between two consecutive candidates that
are both allowed and joined by allowed levels (a "filled" bridge) v_j is affine. With pow2 the
candidates are 0 and the powers of two in [Nmin, min(Nmax, |N|)], none joined.

Memory is O(Trainers x candidates), independent of the pool size and of Nmax. Values use the
same arithmetic as base._levels_values (np.interp's formula for O_j, then T_fwd*O*w - cost).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.allocators.base import AllocOptions, AllocState, fcfs_eligible, throughput_weight

_SENT = np.iinfo(np.int64).max // 4  # a candidate that is not a level (sorts last)


@dataclass
class Levels:
    """Per-Trainer parameters (arrays over the eligible Trainers) and the candidate matrix."""

    trainers: list          # eligible TrainerState, row order
    cap: int                # |N|
    lo: np.ndarray          # smallest positive level (Nmin, pow2-rounded)
    hi: np.ndarray          # largest level, min(Nmax, |N|); lo > hi: only level 0
    c: np.ndarray           # C_j, nodes held still in the pool
    w: np.ndarray
    rup: np.ndarray
    rdw: np.ndarray
    gid: np.ndarray         # curve id of each row
    cx: np.ndarray          # all curves' node counts, concatenated
    cy: np.ndarray          # their throughputs
    ckey: np.ndarray        # gid * span + node count (sorted): for searchsorted
    cend: np.ndarray        # index past each curve's last node
    span: int
    tfwd_s: float
    progress: bool
    pow2: bool
    cost_up: np.ndarray | None = None    # w * O(C) * Rup: the cost of growing past C_j
    cost_down: np.ndarray | None = None  # w * O(C) * Rdw
    K: np.ndarray | None = None      # candidates, (rows x P) int64, ascending, _SENT padded
    V: np.ndarray | None = None      # their values, -inf where K is _SENT
    filled: np.ndarray | None = None  # (rows x P-1) bool: levels K[:, p]..K[:, p+1] all allowed


def build(state: AllocState, opts: AllocOptions) -> Levels:
    """Levels of the Trainers that may get nodes (base.fcfs_eligible), candidates included."""
    pool = state.pool_set
    cap = len(pool)
    elig, _ = fcfs_eligible(state, opts.pj_max)
    J = len(elig)
    curves: dict = {}
    by_id: dict = {}  # id(curve) -> curve id (hashing a Curve costs more than its id)
    g, rows = [], []
    objective, tfwd_s = opts.objective, opts.tfwd_s
    plain = objective == "throughput"  # weight 1 (base.throughput_weight)
    for t in elig:
        cv = t.curve
        k = by_id.get(id(cv))
        if k is None:
            k = by_id[id(cv)] = curves.setdefault(cv, len(curves))
        g.append(k)
        rows.append((t.nmin, t.nmax, len(pool.intersection(t.current)) if t.current else 0,
                     t.rup_s, t.rdw_s, 1.0 if plain else throughput_weight(t, objective, tfwd_s)))
    gid = np.asarray(g, dtype=np.int64)
    a = np.asarray(rows, dtype=float).reshape(J, 6)
    nmin, nmax, c = (a[:, i].astype(np.int64) for i in range(3))
    rup, rdw, w = a[:, 3].copy(), a[:, 4].copy(), a[:, 5].copy()
    lo = np.maximum(nmin, 1)
    if opts.pow2:
        lo = np.left_shift(1, _bit_length(lo - 1))
    hi = np.minimum(nmax, cap)
    cl = list(curves)
    cx = np.concatenate([np.asarray(cv.nodes, dtype=np.int64) for cv in cl]) if cl else np.zeros(0, np.int64)
    cy = np.concatenate([np.asarray(cv.samples_per_s, dtype=float) for cv in cl]) if cl else np.zeros(0)
    sizes = np.asarray([len(cv.nodes) for cv in cl], dtype=np.int64)
    span = int(max(cx.max(initial=0), hi.max(initial=0), c.max(initial=0))) + 2
    cg = np.repeat(np.arange(len(cl), dtype=np.int64), sizes)
    L = Levels(elig, cap, lo, hi, c, w, rup, rdw, gid, cx, cy, cg * span + cx, np.cumsum(sizes), span,
               float(opts.tfwd_s), opts.objective == "progress", bool(opts.pow2))
    o_now = throughput(L, np.arange(J), c) * w
    L.cost_up, L.cost_down = o_now * rup, o_now * rdw
    _candidates(L, sizes)
    return L


def _bit_length(x: np.ndarray) -> np.ndarray:
    """int.bit_length of non-negative int64s."""
    out = np.zeros(len(x), dtype=np.int64)
    x = x.copy()
    while (x > 0).any():
        nz = x > 0
        out[nz] += 1
        x >>= 1
    return out


def throughput(L: Levels, rows: np.ndarray, k: np.ndarray) -> np.ndarray:
    """O_j(k) for rows j, levels k (broadcast): np.interp's arithmetic, flat past the last node."""
    g = L.gid[rows]
    key = g * L.span + k
    i = np.searchsorted(L.ckey, key, side="right") - 1
    last = L.cend[g] - 1
    inside = i < last
    i1 = np.where(inside, i + 1, i)
    x0, y0 = L.cx[i], L.cy[i]
    dx = np.where(inside, L.cx[i1] - x0, 1)
    slope = (L.cy[i1] - y0) / dx
    return np.where(inside & (k != x0), slope * (k - x0) + y0, y0)


def values(L: Levels, rows: np.ndarray, k: np.ndarray) -> np.ndarray:
    """v_j(k) as base._levels_values computes it (rows, k broadcast to one shape)."""
    rows, k = np.broadcast_arrays(rows, k)
    gain = L.tfwd_s * throughput(L, rows, k) * L.w[rows]
    if L.progress:
        gain = np.minimum(gain, 1.0)
    c = L.c[rows]
    cost = np.where(k > c, L.cost_up[rows], np.where(k < c, L.cost_down[rows], 0.0))
    return gain - cost


def _candidates(L: Levels, sizes: np.ndarray) -> None:
    """Fill L.K, L.V, L.filled (see the module docstring)."""
    J = len(L.lo)
    if L.pow2:
        top = int(L.hi.max(initial=0))
        pw = np.left_shift(1, np.arange(max(top, 1).bit_length() + 1, dtype=np.int64))
        cols = [np.zeros(J, dtype=np.int64)] + [np.full(J, p) for p in pw]
    else:
        cols = [np.zeros(J, dtype=np.int64), L.lo, L.hi, L.c - 1, L.c, L.c + 1]
        # every measured node count of the Trainer's curve (padded with 0)
        M = int(sizes.max(initial=0))
        start = L.cend - sizes
        idx = start[L.gid][:, None] + np.arange(M)[None, :]
        ok = idx < L.cend[L.gid][:, None]
        nodes = np.where(ok, L.cx[np.minimum(idx, len(L.cx) - 1)], 0)
        cols += list(nodes.T)
        if L.progress and M > 1:
            cols += _progress_cross(L, nodes, ok)
    K = np.stack(cols, axis=1) if cols else np.zeros((J, 1), dtype=np.int64)
    allowed = (K == 0) | ((K >= L.lo[:, None]) & (K <= L.hi[:, None]))
    K = np.where(allowed, K, _SENT)
    K.sort(axis=1)
    dup = np.zeros(K.shape, dtype=bool)
    dup[:, 1:] = K[:, 1:] == K[:, :-1]
    K[dup] = _SENT
    K.sort(axis=1)
    keep = int((K < _SENT).sum(axis=1).max(initial=1))
    K = np.ascontiguousarray(K[:, :keep])
    valid = K < _SENT
    V = np.full(K.shape, -np.inf)
    r, p = np.nonzero(valid)
    V[r, p] = values(L, r, K[r, p])
    both = valid[:, 1:] & valid[:, :-1]
    step = K[:, 1:] - K[:, :-1]
    filled = both & ((step == 1) | ((K[:, :-1] >= L.lo[:, None]) & (not L.pow2)))
    L.K, L.V, L.filled = K, V, filled


def _progress_cross(L: Levels, nodes: np.ndarray, ok: np.ndarray) -> list:
    """floor and ceil of where T_fwd*O_j(k)*w_j crosses 1 on each piece of the curve."""
    J, M = nodes.shape
    rows = np.repeat(np.arange(J), M).reshape(J, M)
    g = L.tfwd_s * throughput(L, rows, nodes) * L.w[:, None]
    g0, g1 = g[:, :-1], g[:, 1:]
    x0, x1 = nodes[:, :-1], nodes[:, 1:]
    cross = ok[:, 1:] & ((g0 - 1.0) * (g1 - 1.0) < 0) & (x1 > x0)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(cross, x0 + (1.0 - g0) * (x1 - x0) / np.where(cross, g1 - g0, 1.0), 0.0)
    x = np.clip(np.nan_to_num(x), 0, L.span)
    return list(np.floor(x).astype(np.int64).T) + list(np.ceil(x).astype(np.int64).T)
