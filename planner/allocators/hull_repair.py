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
- the rest (the core) get an exact DP over their total deviation D from the incumbent,
  F(D) = best value so far, states pruned by loss and by where D must end (identical rows
  folded into one step: hull_groups); the answer is max_D F(D) + merged(nodes left).

This is exact over all levels. If the core DP would exceed BUDGET cell updates, a DP over a
window of D sized to the budget gives the best vector it finds, a proof only if the window
cut nothing; otherwise the caller reports the gap.
"""

from __future__ import annotations

import numpy as np

from planner.allocators import hull_groups, hull_levels

BUDGET = 40_000_000  # core DP cell updates (levels x capacities) before giving up
GATHER_MAX = 200_000  # a core row with levels x window up to this is one numpy gather
MIN_WINDOW = 64  # the windowed DP (after the budget ran out) keeps at least D in [-64, room + 64]
PASSES = (1 / 4, 1.0)  # pass i keeps levels with loss <= gap * PASSES[i] (docs/allocators.md)


def surviving_counts(L, Lm: np.ndarray, G: float) -> np.ndarray:
    """How many levels of each row have loss <= G (points plus affine-run interiors)."""
    valid = L.K < hull_levels._SENT
    pts = ((Lm <= G) & valid).sum(axis=1)
    if L.K.shape[1] < 2:
        return pts
    lp, lq = Lm[:, :-1], Lm[:, 1:]
    d = (L.K[:, 1:] - L.K[:, :-1]).astype(float)
    run = L.filled & (d >= 2)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        left = np.floor((G - lp) * d / (lq - lp) + 1e-9)
        right = np.floor((G - lq) * d / (lp - lq) + 1e-9)
    a, b = lp <= G, lq <= G
    inner = np.where(a & b, d - 1,
                     np.where(a, np.minimum(d - 1, left), np.where(b, np.minimum(d - 1, right), 0)))
    return pts + np.where(run, np.nan_to_num(inner), 0).sum(axis=1).astype(np.int64)


def repair(L, x: np.ndarray, z: float, lam: float, R: np.ndarray, ub: float, tol: float):
    """Exact optimum given the incumbent x (value z) and the bound ub: (x, value, info).

    Up to two passes over the levels with loss <= T, T = gap/4, gap (PASSES; never more
    than ub - the best value so far): a pass is exact over every vector within T of ub, so it
    proves optimality as soon as the best vector known is within T; small T are cheap."""
    Km = np.where(L.K < hull_levels._SENT, L.K, 0)
    Lm = np.where(L.K < hull_levels._SENT, R[:, None] - (L.V - lam * Km), np.inf)
    rows = np.arange(len(x))
    inc_loss = R - (hull_levels.values(L, rows, x) - lam * x)
    G = ub - z + tol
    info = {}
    for share in PASSES:
        T = min(G * share, ub - z + tol)
        x1, z1, info = _repair_at(L, x, lam, R, Lm, T, inc_loss)
        if x1 is not None and z1 > z:
            x, z = x1, z1
            inc_loss = R - (hull_levels.values(L, rows, x) - lam * x)
        # the pass found the best vector among those within T of the bound: if the best
        # vector known is within T, nothing is better
        if x1 is not None and ub - z + tol <= T:
            info["proof"] = "dp"
            return x, z, info
        if info.get("proof", "").startswith("none (core too large"):
            break  # a larger T keeps more levels and states: it would not fit either
    if info.get("proof") == "dp":  # (not reached: the last pass includes the best vector)
        info["proof"] = "none"
    if info.get("proof", "").startswith("none (core too large"):
        # no proof within the budget: a DP over a window of D around the incumbent still
        # finds a better vector (exact unless the window cut states; then only the gap is known)
        x1, z1, info2 = _repair_at(L, x, lam, R, Lm, ub - z + tol, inc_loss, window=True)
        if x1 is not None and z1 > z:
            x, z = x1, z1
        if x1 is not None and not info2.get("clamped"):
            info2["proof"] = "dp"
        else:
            info2["proof"] = "none (core too large; best of a windowed DP)"
        info = info2
    return x, z, info


def _repair_at(L, x, lam, R, Lm, G: float, inc_loss, window: bool = False):
    """The best vector whose levels and partial sums all have loss <= G (exact over every
    vector within G of the bound): (x, value, info), or (None, None, info). window=True: the
    DP keeps only deviations within a window sized to the budget (info["clamped"] says whether
    that cut anything: then the result is not proven)."""
    cnt = surviving_counts(L, Lm, G)
    multi = np.nonzero((cnt >= 2) | (inc_loss > G))[0]
    pc = pieces(L, multi, Lm, G, x)
    core, agg_rows, agg_base, inc = classify(pc, multi, x)
    info = {"core": len(core), "merged": len(agg_rows), "proof": "dp"}
    fixed = np.ones(len(x), dtype=bool)
    fixed[multi] = False
    inc_core = sum(c[1] for c in core)
    room = L.cap - int(x[fixed].sum()) - int(np.sum(agg_base)) - inc_core  # for core deviations + merged
    U = int(inc[3].sum()) if len(inc[3]) else 0  # all the merged item's increments
    core = hull_groups.group(core, R, lam, G)
    hist = _core_dp(core, lam, R, G, room, U, window)
    if hist is None:
        info["proof"] = "none (core too large)"
        return None, None, info
    if hist[-1] is None:
        info["proof"] = "none (no feasible core state)"
        return None, None, info
    lo, F, clamped = hist[-1]
    info["clamped"] = clamped
    gain, order_r, order_w = _merged(inc)
    u = room - np.arange(lo, lo + len(F))  # nodes left for the merged item
    tot = np.where(u >= 0, F + gain[np.clip(u, 0, len(gain) - 1)], -np.inf)
    best = int(np.argmax(tot))
    if not np.isfinite(tot[best]):
        info["proof"] = "none (no feasible core state)"
        return None, None, info
    x = x.copy()
    for item, d in zip(core, _walk_back(hist, core, lo + best)):
        if isinstance(item, hull_groups.Pair):
            hull_groups.assign(item, d, x)
        else:
            x[item[0]] += d
    if len(agg_rows):
        x[agg_rows] = agg_base
        units = int(min(u[best], len(gain) - 1))
        before = np.concatenate(([0], np.cumsum(order_w)[:-1]))
        take = np.clip(units - before, 0, order_w)
        x += np.bincount(order_r, weights=take, minlength=len(x)).astype(np.int64)
    z2 = float(hull_levels.values(L, np.arange(len(x)), x).sum())
    return x, z2, info


def _core_dp(core, lam: float, R: np.ndarray, G: float, room: int, U: int, window: bool = False):
    """DP over the core's total deviation D from the incumbent: F(D) = best value of the rows so
    far. States are dropped when they cannot lead to a vector within G of the bound: their
    reduced-cost loss exceeds G, or D cannot end in [room - U - G/lam, room] (room: nodes
    left for the core's deviations and the merged item, U: the merged item's width) whatever
    the later rows do. So the window of D stays small. window=True also cuts D to a window
    around [0, room] sized to BUDGET. Returns [(lo, F)] per stage (F[i] is D = lo + i) with
    (lo, F, clamped) last, a last None if no state is left, or None past BUDGET."""
    n = len(core)
    pair = [isinstance(c, hull_groups.Pair) for c in core]
    dmin = np.asarray([c.dmin if pr else int(c[2][0]) for c, pr in zip(core, pair)] + [0])
    dmax = np.asarray([c.dmax if pr else int(c[3][-1]) for c, pr in zip(core, pair)] + [0])
    fut_min = np.cumsum(dmin[::-1])[::-1]  # fut_min[i]: sum over rows i.. of the smallest deviation
    fut_max = np.cumsum(dmax[::-1])[::-1]
    d_end_min = room - U - (G / lam if lam > 0 else np.inf)
    clo, chi = -np.inf, np.inf
    if window:
        n_opts = sum(20 if pr else 4 * len(c[2]) for c, pr in zip(core, pair))
        width = max(MIN_WINDOW, BUDGET // max(1, n_opts) // 2)
        clo, chi = min(0, room) - width, max(0, room) + width
    lo, F = 0, np.zeros(1)
    hist = [(lo, F)]
    r_sum = inc_sum = 0.0
    work = 0
    clamped = False
    for i, item in enumerate(core):
        if pair[i]:
            work += (len(F) + item.dmax - item.dmin) * (1 + int(np.log2(item.M + 1)))
            if work > BUDGET and not window:
                return None
            nlo, Fn = hull_groups.step(F, lo, item)
            r_sum += item.M * item.R
            inc_sum += int(item.incs.sum())
        else:
            j, inc, pa, pb, pva, pbe = item
            wid = pb - pa
            work += int(((len(F) + wid) * (1 + np.log2(wid + 1))).sum())
            if work > BUDGET and not window:
                return None
            ds, vals = _levels(pa, pb, pva, pbe)
            nlo, Fn = lo + int(pa[0]), _row_step(F, pa - pa[0], wid, pva, pbe, ds, vals)
            r_sum += float(R[j])
            inc_sum += inc
        D = np.arange(nlo, nlo + len(Fn))
        # loss so far = r_sum - value + lam * (incumbent levels + D); keep loss <= G
        drop = (Fn < r_sum + lam * (inc_sum + D) - G) | (D > room - fut_min[i + 1])
        drop |= D < d_end_min - fut_max[i + 1]
        Fn[drop] = -np.inf
        if window:
            cut = ((D < clo) | (D > chi)) & np.isfinite(Fn)
            clamped |= bool(cut.any())
            Fn[cut] = -np.inf
        ok = np.nonzero(np.isfinite(Fn))[0]
        if len(ok) == 0:
            hist.append(None)
            return hist
        lo, F = nlo + int(ok[0]), Fn[ok[0]:ok[-1] + 1]
        hist.append((lo, F))
    hist[-1] = (lo, F, clamped) if n else (0, F, False)
    return hist


def _levels(pa, pb, pva, pbe, limit: int = 4096):
    """(deviations, values) of every level of a row's pieces, ascending; (None, None) past limit."""
    lens = pb - pa + 1
    n = int(lens.sum())
    if n > limit:
        return None, None
    t = np.arange(n) - np.repeat(np.cumsum(lens) - lens, lens)
    return np.repeat(pa, lens) + t, np.repeat(pva, lens) + np.repeat(pbe, lens) * t


def _row_step(F: np.ndarray, off: np.ndarray, wid: np.ndarray, va: np.ndarray, be: np.ndarray,
              ds=None, vals=None) -> np.ndarray:
    """One core row: Fn(i) = max over its pieces p and t in 0..wid_p of F(i - off_p - t) +
    va_p + be_p*t. Small: one gather over all its levels; large: a point piece is a shift, a
    run a sliding-window maximum (time and memory ~ window, not levels x window)."""
    n_new = len(F) + int(off[-1] + wid[-1])
    if ds is not None and len(ds) * n_new <= GATHER_MAX:
        pad = np.concatenate((np.full(n_new, -np.inf), F, np.full(n_new, -np.inf)))
        idx = n_new + np.arange(n_new)[None, :] - (ds - ds[0])[:, None]
        return (pad[idx] + vals[:, None]).max(axis=0)
    Fn = np.full(n_new, -np.inf)
    for o, m, v, b in zip(off.tolist(), wid.tolist(), va.tolist(), be.tolist()):
        G = F + v if m == 0 else hull_groups.progression(F, 1, m, v, b)[:len(F) + m]
        seg = Fn[o:o + len(G)]
        np.maximum(seg, G, out=seg)
    return Fn


def _walk_back(hist, core, D: int) -> list[int]:
    """The deviations chosen by the DP for total D (first maximum: the smallest level)."""
    out = [0] * len(core)
    for i in range(len(core) - 1, -1, -1):
        lo, F = hist[i]
        if isinstance(core[i], hull_groups.Pair):  # out[i] = s, the rows on the upper level
            out[i], D = hull_groups.back(F, lo, core[i], D)
            continue
        _, _, pa, pb, pva, pbe = core[i]
        ds, vals = _levels(pa, pb, pva, pbe, limit=1 << 62)
        idx = D - ds - lo
        ok = (idx >= 0) & (idx < len(F))
        cand = np.where(ok, F[np.clip(idx, 0, len(F) - 1)] + vals, -np.inf)
        p = int(np.argmax(cand))
        out[i] = int(ds[p])
        D -= out[i]
    return out


def _merged(inc):
    """The merged item: gain[u] = best value of u extra nodes (positive increments, largest first,
    ties by row then position), and the sorted increments' rows and widths."""
    r, pos, sl, w = inc
    keep = sl > 0
    r, pos, sl, w = r[keep], pos[keep], sl[keep], w[keep]
    order = np.lexsort((pos, r, -sl))
    r, sl, w = r[order], sl[order], w[order]
    per = np.repeat(sl, w)
    gain = np.concatenate(([0.0], np.cumsum(per)))
    return gain, r, w


def pieces(L, rows: np.ndarray, Lm: np.ndarray, G: float, x: np.ndarray):
    """Surviving levels (loss <= G) of `rows` as affine pieces, the incumbent's level included:
    (row position in `rows`, a, b, v(a), slope) arrays, sorted by row, then level. Slot 2p is
    candidate p, slot 2p+1 the interior of the run from candidate p to p+1."""
    K, V, Lr, xr = L.K[rows], L.V[rows], Lm[rows], x[rows]
    M, P = K.shape
    ar = np.arange(M)
    valid = K < hull_levels._SENT
    pt_ok = valid & (Lr <= G)
    at = (K <= xr[:, None]).sum(axis=1) - 1  # the last candidate <= the incumbent's level
    on_pt = K[ar, at] == xr
    pt_ok[ar[on_pt], at[on_pt]] = True
    S = 2 * P - 1
    A = np.zeros((M, S), dtype=np.int64)
    VA = np.zeros((M, S))
    BE = np.zeros((M, S))
    OK = np.zeros((M, S), dtype=bool)
    A[:, 0::2], VA[:, 0::2], OK[:, 0::2] = K, np.where(valid, V, 0.0), pt_ok
    B = A.copy()
    if P >= 2:
        Kp, d = K[:, :-1], np.where(valid[:, 1:], K[:, 1:] - K[:, :-1], 0)
        lp, lq = Lr[:, :-1], Lr[:, 1:]
        df = d.astype(float)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            # where they are used (lp <= G < lq for left, lq <= G < lp for right) both lie in
            # [0, d); elsewhere they may be huge or NaN: clipped so that the casts below are defined
            left = np.clip(np.nan_to_num(np.floor((G - lp) * df / (lq - lp) + 1e-9), posinf=0, neginf=0), -1, df)
            right = np.clip(np.nan_to_num(np.floor((G - lq) * df / (lp - lq) + 1e-9), posinf=0, neginf=0), -1, df)
            beta = np.where(L.filled[rows] & (d > 0), (V[:, 1:] - V[:, :-1]) / np.maximum(df, 1.0), 0.0)
        a_ok, b_ok = lp <= G, lq <= G
        t0 = np.where(a_ok, 1, np.where(b_ok, np.maximum(1, d - right.astype(np.int64)), 1))
        t1 = np.where(a_ok, np.where(b_ok, d - 1, np.minimum(d - 1, left.astype(np.int64))),
                      np.where(b_ok, d - 1, 0))
        run = L.filled[rows] & (d >= 2)
        ins = np.nonzero(~on_pt)[0]  # incumbent inside the run after candidate `at`
        if len(ins):
            p, t = at[ins], xr[ins] - K[ins, at[ins]]
            empty = t0[ins, p] > t1[ins, p]
            t0[ins, p] = np.where(empty, t, np.minimum(t0[ins, p], t))
            t1[ins, p] = np.where(empty, t, np.maximum(t1[ins, p], t))
        A[:, 1::2], B[:, 1::2] = Kp + t0, Kp + t1
        VA[:, 1::2], BE[:, 1::2] = np.where(run, V[:, :-1], 0.0) + beta * t0, beta
        OK[:, 1::2] = run & (t0 <= t1)
    r, sl = np.nonzero(OK)
    return r, A[r, sl], B[r, sl], VA[r, sl], BE[r, sl]


def classify(pc, rows: np.ndarray, x: np.ndarray):
    """Split the rows' pieces into the core (list of (row, incumbent level, and its pieces: first
    and last deviation from the incumbent, value at the first, slope)) and the merged rows
    (contiguous levels, concave values): their rows, smallest levels and unit increments (row,
    position, slope, width)."""
    r, A, B, VA, BE = pc
    M = len(rows)
    w = B - A
    same = r[1:] == r[:-1]
    bad = np.zeros(M, dtype=bool)
    bad[r[:-1][same & (A[1:] != B[:-1] + 1)]] = True  # a gap between two pieces
    # unit increments in level order: inside piece i, then from piece i to piece i+1
    n = len(r)
    s2 = np.empty(2 * n)
    w2 = np.empty(2 * n, dtype=np.int64)
    s2[0::2], w2[0::2] = BE, w
    s2[1::2], w2[1::2] = 0.0, 1
    s2[1:-1:2] = VA[1:] - (VA[:-1] + BE[:-1] * w[:-1])
    keep = np.zeros(2 * n, dtype=bool)
    keep[0::2] = w > 0
    keep[1:-1:2] = same
    r2 = np.repeat(r, 2)[keep]
    s2, w2 = s2[keep], w2[keep]
    up = (r2[1:] == r2[:-1]) & (s2[1:] > s2[:-1] + 1e-12 * np.maximum(1.0, np.abs(s2[:-1])))
    bad[r2[1:][up]] = True  # not concave
    starts = np.searchsorted(r, np.arange(M))
    ends = np.searchsorted(r, np.arange(M), side="right")
    m = ~bad
    agg_rows = rows[m]
    agg_base = A[starts[m]]
    mi = m[r2]
    pos = np.arange(len(r2))
    inc = (rows[r2[mi]], pos[mi], s2[mi], w2[mi])
    core = []
    for i in np.nonzero(bad)[0].tolist():
        a, e = starts[i], ends[i]
        j, xi = int(rows[i]), int(x[rows[i]])
        core.append((j, xi, A[a:e] - xi, B[a:e] - xi, VA[a:e], BE[a:e]))
    return core, agg_rows, agg_base, inc
