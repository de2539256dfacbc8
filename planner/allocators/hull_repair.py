"""The exact repair step of `hull` (planner.allocators.hull): reduced-cost fixing, then a DP.

With the Lagrangian price lam and R_j = max_k v_j(k) - lam*k, every count vector x satisfies

    value(x) = UB - sum_j loss_j(x_j) - lam * (|N| - sum_j x_j),   loss_j(k) = R_j - (v_j(k) - lam*k) >= 0

so a vector better than the incumbent (value z) has loss_j(x_j) < G = UB - z for every j. Levels
with a larger loss are dropped (on an affine run the loss is affine, so the survivors of a run
are an interval). Then:

- a Trainer with one surviving level keeps it (the incumbent's level always survives);
- Trainers whose survivors are one contiguous range on which v_j is concave are merged into
  one item: its best value for any number of extra nodes is the sum of their unit increments
  taken largest first (the sup-convolution of concave functions);
- the rest (the core) get an exact DP over capacity, F(c) = best value of the core with at
  most c nodes above their smallest survivors; the answer is max_c F(c) + merged(rest).

This is exact over all levels. If the core DP would exceed BUDGET cell updates the incumbent
is kept and the caller reports the gap.
"""

from __future__ import annotations

import numpy as np

from planner.allocators import hull_levels

BUDGET = 40_000_000  # core DP cell updates (levels x capacities) before giving up


def surviving_counts(L, Lm: np.ndarray, G: float) -> np.ndarray:
    """How many levels of each row have loss <= G (points plus affine-run interiors)."""
    valid = L.K < hull_levels._SENT
    pts = ((Lm <= G) & valid).sum(axis=1)
    if L.K.shape[1] < 2:
        return pts
    lp, lq = Lm[:, :-1], Lm[:, 1:]
    d = (L.K[:, 1:] - L.K[:, :-1]).astype(float)
    run = L.filled & (d >= 2)
    inner = np.zeros(lp.shape)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        left = np.floor((G - lp) * d / (lq - lp) + 1e-9)
        right = np.floor((G - lq) * d / (lp - lq) + 1e-9)
    a, b = lp <= G, lq <= G
    inner = np.where(a & b, d - 1, np.where(a, np.minimum(d - 1, left), np.where(b, np.minimum(d - 1, right), 0)))
    return pts + np.where(run, np.nan_to_num(inner), 0).sum(axis=1).astype(np.int64)


def row_pieces(L, j: int, lm: np.ndarray, G: float, xj: int) -> list[tuple[int, int, float, float]]:
    """Surviving levels of row j as affine pieces (a, b, v(a), slope), sorted, the incumbent's
    level xj included."""
    K, V, F = L.K[j], L.V[j], L.filled[j]
    n = int((K < hull_levels._SENT).sum())
    out = []
    for p in range(n):
        if lm[p] <= G:
            out.append((int(K[p]), int(K[p]), float(V[p]), 0.0))
        if p + 1 < n and F[p] and K[p + 1] - K[p] >= 2:
            d = int(K[p + 1] - K[p])
            lp, lq = float(lm[p]), float(lm[p + 1])
            t0, t1 = 1, d - 1
            if lp <= G and lq <= G:
                pass
            elif lp <= G:
                t1 = min(t1, int(np.floor((G - lp) * d / (lq - lp) + 1e-9)))
            elif lq <= G:
                t0 = max(t0, d - int(np.floor((G - lq) * d / (lp - lq) + 1e-9)))
            else:
                t0, t1 = 1, 0
            if t0 <= t1:
                beta = (float(V[p + 1]) - float(V[p])) / d
                out.append((int(K[p]) + t0, int(K[p]) + t1, float(V[p]) + beta * t0, beta))
    if not any(a <= xj <= b for a, b, _, _ in out):
        out.append((xj, xj, float(hull_levels.values(L, np.asarray([j]), np.asarray([xj]))[0]), 0.0))
    out.sort()
    return out


def increments(pieces) -> list[tuple[float, int]] | None:
    """(slope, width) unit increments of a row whose pieces cover one contiguous range with
    non-increasing slopes (v concave there); None otherwise."""
    inc = []
    for (a, b, va, be), nxt in zip(pieces, pieces[1:] + [None]):
        if b > a:
            inc.append((be, b - a))
        if nxt is not None:
            if nxt[0] != b + 1:
                return None
            inc.append((nxt[2] - (va + be * (b - a)), 1))
    for (s0, _), (s1, _) in zip(inc, inc[1:]):
        if s1 > s0 + 1e-12 * max(1.0, abs(s0)):
            return None
    return inc


def repair(L, x: np.ndarray, z: float, lam: float, R: np.ndarray, G: float, opts):
    """Exact optimum given the incumbent x (value z) and the gap budget G: (x, value, info)."""
    Km = np.where(L.K < hull_levels._SENT, L.K, 0)
    Lm = np.where(L.K < hull_levels._SENT, R[:, None] - (L.V - lam * Km), np.inf)
    cnt = surviving_counts(L, Lm, G)
    multi = np.nonzero(cnt >= 2)[0]
    core, agg_rows, agg_inc, agg_base = [], [], [], []
    for j in multi.tolist():
        pcs = row_pieces(L, j, Lm[j], G, int(x[j]))
        inc = increments(pcs)
        if inc is None:
            core.append((j, pcs))
        else:
            agg_rows.append(j)
            agg_base.append(pcs[0][0])
            agg_inc.append(inc)
    info = {"core": len(core), "merged": len(agg_rows), "proof": "dp"}
    fixed = np.ones(len(x), dtype=bool)
    fixed[multi] = False
    mins = [p[0][0] for _, p in core]
    cap_core = L.cap - int(x[fixed].sum()) - sum(agg_base) - sum(mins)
    levels = [_options(p, m) for (_, p), m in zip(core, mins)]
    Wc = max(0, min(cap_core, sum(int(o[-1]) for o, _ in levels)))
    if cap_core < 0 or sum(len(o) for o, _ in levels) * (Wc + 1) > BUDGET:
        info["proof"] = "none (core too large)"
        return x, z, info
    hist = _core_dp(levels, Wc)
    gain, order_r, order_w = _merged(agg_rows, agg_inc)
    u = np.minimum(cap_core - np.arange(Wc + 1), len(gain) - 1)
    tot = hist[-1] + gain[u]
    c = int(np.argmax(tot))
    x = x.copy()
    for (j, _), m, k in zip(core, mins, _walk_back(hist, levels, c)):
        x[j] = m + k
    if agg_rows:
        x[agg_rows] = agg_base
        units = int(u[c])
        before = np.concatenate(([0], np.cumsum(order_w)[:-1]))
        take = np.clip(units - before, 0, order_w)
        np.add.at(x, order_r, take)
    z2 = float(hull_levels.values(L, np.arange(len(x)), x).sum())
    return x, z2, info


def _options(pieces, m: int):
    """Offsets (levels - m) and values of every level in the pieces, ascending."""
    offs, vals = [], []
    for a, b, va, be in pieces:
        k = np.arange(a, b + 1)
        offs.append(k - m)
        vals.append(va + be * (k - a))
    return np.concatenate(offs), np.concatenate(vals)


def _core_dp(levels, W: int) -> list[np.ndarray]:
    """F_i(c) for c in 0..W, i = 0..len(levels): F_0 = 0 (unused nodes allowed)."""
    F = np.zeros(W + 1)
    hist = [F]
    for offs, vals in levels:
        Fn = np.full(W + 1, -np.inf)
        for o, v in zip(offs.tolist(), vals.tolist()):
            if o > W:
                break
            np.maximum(Fn[o:], F[:W + 1 - o] + v, out=Fn[o:])
        hist.append(Fn)
        F = Fn
    return hist


def _walk_back(hist, levels, c: int) -> list[int]:
    """The offsets chosen by the DP for total c (first maximum: the smallest offset)."""
    out = [0] * len(levels)
    for i in range(len(levels) - 1, -1, -1):
        offs, vals = levels[i]
        ok = offs <= c
        cand = np.where(ok, hist[i][np.maximum(c - offs, 0)] + vals, -np.inf)
        p = int(np.argmax(cand))
        out[i] = int(offs[p])
        c -= out[i]
    return out


def _merged(rows, incs):
    """The merged item: gain[u] = best value of u extra nodes (positive increments, largest first,
    ties by row then position), and the sorted increments' rows and widths."""
    if not rows:
        return np.zeros(1), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    r = np.concatenate([np.full(len(inc), j) for j, inc in zip(rows, incs)])
    pos = np.concatenate([np.arange(len(inc)) for inc in incs])
    s = np.concatenate([np.asarray([i[0] for i in inc], dtype=float) for inc in incs])
    w = np.concatenate([np.asarray([i[1] for i in inc], dtype=np.int64) for inc in incs])
    keep = s > 0
    r, pos, s, w = r[keep], pos[keep], s[keep], w[keep]
    order = np.lexsort((pos, r, -s))
    r, s, w = r[order], s[order], w[order]
    total = int(w.sum())
    per = np.repeat(s, w) if total else np.zeros(0)
    gain = np.concatenate(([0.0], np.cumsum(per)))
    return gain, r, w
