"""`dp`: the exact dynamic program for the count-level problem (IBM's P(j,K) recursion).

The node-level MILP's optimum depends on node counts only (see docs/allocators.md), so a
decision is a multiple-choice knapsack: one level k_j in {0} U [Nmin_j, min(Nmax_j, |N|)] per
Trainer, sum k_j <= |N|, maximise sum v_j(k_j) with v_j from base.level_tables.

    F_0(c) = 0,   F_j(c) = max_{k in levels_j, k <= c} F_{j-1}(c - k) + v_j(k)

F_j(c) is the best value of the first j Trainers with at most c nodes, so F_J(|N|) is the
optimum. O(J * |N| * kmax), vectorized with numpy: one (levels x window) array per Trainer.
Only the capacities that can still matter are computed: F_j is needed on
[|N| - (sum of the later Trainers' top levels), min(|N|, sum of the earlier ones)].

Ties are broken deterministically: walking back from the last Trainer, the smallest level
reaching the optimum is taken (np.argmax returns the first maximum).

Speed (J=30, pool 800 is ~30 steps of a 65 x 800 window): every F_j lives in one preallocated
-inf buffer with one fixed strided view over it, so a step is a slice, one add into a scratch
buffer and one max written straight into F_j (no as_strided, np.full or temporaries per step);
with Nmin 1 the levels 0..kmax are a single window. allocate() reports the objective as the
sum of the chosen levels' values in Trainer order, which is objective_of's number (the same
arithmetic), instead of recomputing it.
"""

from __future__ import annotations

import threading
import time

import numpy as np
from numpy.lib.stride_tricks import as_strided

from planner.allocators.base import (
    AllocOptions,
    AllocResult,
    AllocState,
    check_memory,
    held,
    level_tables,
    level_value,
    make_result,
)

NAME = "dp"

_BUFFERS = threading.local()  # per thread: the table and scratch arrays of the last call, reused; the memo
_VIEWS = threading.local()  # per thread: views of its table buffer per table shape (_table_views)
_MAX = np.maximum.reduce
KEEP_MAX = 1 << 20  # values (8 MiB): a larger array is used once and freed, not kept for the thread's life


def _buffer(name: str, size: int) -> np.ndarray:
    """A float64 array of at least `size` values kept for the next call in this thread: a replay
    asks dp ~1,500 times for tables of the same size, and a fresh 0.2-0.5 MB array each time costs
    the allocator's mmap and page faults (more than the fill). The caller overwrites what it reads.
    Arrays over KEEP_MAX values are not kept (one very large call leaves no memory behind; at that
    size the fill costs far more than the allocation)."""
    if size > KEEP_MAX:
        return np.empty(size)
    buf = getattr(_BUFFERS, name, None)
    if buf is None or len(buf) < size:
        buf = np.empty(max(size, 1024))
        setattr(_BUFFERS, name, buf)
    return buf[:size]


def solve_levels(cap: int, levels: list[np.ndarray], values: list[np.ndarray]) -> tuple[list[int], float]:
    """Optimal level index per item of a multiple-choice knapsack with capacity `cap`.

    levels[j] ascending int arrays starting with 0; values[j] float arrays of the same length.
    Returns (chosen level index per item, optimum).
    """
    if not levels:
        return [], 0.0
    key = _memo_key(cap, levels, values)
    memo = None
    if key is not None:
        memo = getattr(_BUFFERS, "memo", None)
        if memo is None:
            memo = _BUFFERS.memo = {}
        hit = memo.get(key)
        if hit is not None:
            return list(hit[1]), hit[2]
    if all(len(lv) == int(lv[-1]) + 1 for lv in levels):  # every item's levels 0..kmax (Nmin <= 1)
        chosen, opt = _solve_contiguous(cap, levels, values)
    else:
        chosen, opt = _solve_general(cap, levels, values)
    if memo is not None:
        if len(memo) >= MEMO_SIZE:
            del memo[next(iter(memo))]  # the oldest
        memo[key] = ((levels, values), tuple(chosen), opt)  # the arrays kept alive: their ids stay theirs
    return chosen, opt


MEMO_SIZE = 256  # answers kept per thread: a day of Summit asks ~20 % of its 1,565 problems again
MEMO_LEVELS = 2048  # only problems of at most this many levels in all (the memo holds <= ~8 MiB of tables)


def _memo_key(cap: int, levels, values) -> tuple | None:
    """The memo's key of a small problem whose arrays cannot change: read-only and owning their
    data, as base.level_tables' cached tables are (then the same objects are the same problem; the
    memo keeps them alive, so no other array can take their ids). None for any other problem."""
    if sum(map(len, values)) > MEMO_LEVELS:
        return None
    for a in levels:
        if not isinstance(a, np.ndarray) or a.flags.writeable or a.base is not None:
            return None
    for a in values:
        if not isinstance(a, np.ndarray) or a.flags.writeable or a.base is not None:
            return None
    return (cap, *map(id, levels), *map(id, values))


def _table_views(J: int, n: int, cap: int):
    """(flat, H, S) over this thread's table buffer: `flat` its first (J + 1) * n + cap + 1 values,
    H = flat as J + 1 rows of n, S[j, x, c] = H[j, x + c] (read-only). Kept per shape while the
    buffer is (a replay asks ~1,500 times for a few dozen shapes; building the strided view cost
    more than a small table's arithmetic)."""
    size = (J + 1) * n + cap + 1
    flat = _buffer("table", size)
    base = flat.base
    cache = getattr(_VIEWS, "cache", None)
    if base is None or cache is None or cache[0] is not base:
        cache = (base, {})
        if base is not None:
            _VIEWS.cache = cache
    views = cache[1].get((J, n, cap))
    if views is None:
        if len(cache[1]) >= 256:
            cache[1].clear()
        H = flat[:(J + 1) * n].reshape(J + 1, n)
        S = as_strided(flat, shape=(J + 1, n, cap + 1), strides=(n * flat.itemsize, flat.itemsize, flat.itemsize),
                       writeable=False)
        views = (flat, H, S)
        if base is not None:
            cache[1][(J, n, cap)] = views
    return views


def _solve_contiguous(cap: int, levels: list[np.ndarray], values: list[np.ndarray]) -> tuple[list[int], float]:
    """_solve_general for items whose levels are 0..kmax: the same recursion, windows, sums and
    tie rule (so the same choices and optimum, float for float), in fewer NumPy calls per item: a
    decision's tables are small (a day of Summit: median 19 idle nodes, 10 Trainers), so NumPy's
    cost per call, not the arithmetic, was most of the time."""
    J = len(levels)
    tops, vals = [], []
    for v in values:
        k = len(v) - 1
        if k > cap:
            k = cap
            v = v[:k + 1]
        tops.append(k)
        vals.append(np.asarray(v, dtype=float))
    cap = min(cap, sum(tops))
    after = [0] * J
    for j in range(J - 2, -1, -1):
        after[j] = after[j + 1] + tops[j + 1]
    P = max(tops)
    n = P + cap + 1
    check_memory("dp", f"a table of {J + 1:,} x {n:,} values", 8.0 * ((J + 1) * n + cap + 1 + (P + 1) * (cap + 1)))
    flat, H, S = _table_views(J, n, cap)
    flat.fill(-np.inf)
    H[0, P:] = 0.0  # F_0
    scratch = _buffer("scratch", (P + 1) * (cap + 1))
    before = 0
    for j in range(J):
        kmax = tops[j]
        before += kmax
        hi = min(cap, before)
        lo = min(max(0, cap - after[j]), hi)
        if j == J - 1:
            lo = hi
        best = H[j + 1, P + lo:P + hi + 1]  # F_j+1 on its window, written in place
        if kmax == 0:
            np.add(H[j, P + lo:P + hi + 1], vals[j][0], out=best)
        else:  # row p of the window: F_j(c - (kmax - p)) + v(kmax - p); the max runs down the rows
            W = hi - lo + 1
            base = P + lo - kmax
            buf = scratch[:(kmax + 1) * W].reshape(kmax + 1, W)
            np.add(S[j, base:base + kmax + 1, :W], vals[j][::-1, None], out=buf)
            _MAX(buf, axis=0, out=best)
        if hi < cap:
            H[j + 1, P + hi + 1:] = best[-1]  # more nodes than these items can use change nothing
    opt = float(H[J, P + cap])
    chosen = [0] * J
    c = cap
    for j in range(J - 1, -1, -1):
        kmax = tops[j]
        if kmax:  # the first maximum of F_j(c - k) + v(k) over k = 0..kmax: the smallest level
            i = int((H[j, P + c - kmax:P + c + 1][::-1] + vals[j]).argmax())
            chosen[j] = i
            c -= i
    return chosen, opt


def _solve_general(cap: int, levels: list[np.ndarray], values: list[np.ndarray]) -> tuple[list[int], float]:
    """solve_levels for any ascending levels starting with 0 (Nmin > 1, pow2)."""
    J = len(levels)
    levels = [np.asarray(lv, dtype=np.int64) for lv in levels]
    values = [np.asarray(v, dtype=float) for v in values]
    for j, lv in enumerate(levels):
        if lv[-1] > cap:
            keep = lv <= cap
            levels[j], values[j] = lv[keep], values[j][keep]
    tops = [int(lv[-1]) for lv in levels]
    # capacity beyond every item's top level at once is never used: the table needs no more
    # columns than that (a pool of 1,000,000 nodes with 10 Trainers of Nmax 64: 640, not 10^6;
    # the same choices, as F is flat past it)
    cap = min(cap, sum(tops))
    after = [0] * J  # sum of tops of later items (Python ints: cheaper than numpy at this size)
    for j in range(J - 2, -1, -1):
        after[j] = after[j + 1] + tops[j + 1]
    firsts = [int(lv[1]) if len(lv) > 1 else 0 for lv in levels]
    P = max(tops)  # every F array is stored as [-inf] * P + F(0..cap): F(c - k) = Fp[P + c - k]
    n = P + cap + 1
    # all F_j in one -inf-filled buffer (row j = F_j), plus a fixed strided view of it:
    # S[j, x, c] = H[j, x + c], so a (levels x capacities) window of F_j is a plain slice
    # (fresh arrays and as_strided at every step cost more than the arithmetic here)
    check_memory("dp", f"a table of {J + 1:,} x {n:,} values", 8.0 * ((J + 1) * n + cap + 1 + (P + 1) * (cap + 1)))
    flat = _buffer("table", (J + 1) * n + cap + 1)
    flat.fill(-np.inf)
    H = flat[:(J + 1) * n].reshape(J + 1, n)
    S = as_strided(flat, shape=(J + 1, n, cap + 1), strides=(n * flat.itemsize, flat.itemsize, flat.itemsize),
                   writeable=False)
    H[0, P:] = 0.0  # F_0
    scratch = _buffer("scratch", (P + 1) * (cap + 1))
    before = 0
    for j in range(J):
        lv, v = levels[j], values[j]
        Fp, new = H[j], H[j + 1]
        kmax = tops[j]
        before += kmax
        hi = min(cap, before)
        lo = min(max(0, cap - after[j]), hi)  # lo > hi only when all items fit at once
        if j == J - 1:
            lo = hi
        W = hi - lo + 1
        inplace = False
        if kmax == 0:
            best = Fp[P + lo:P + hi + 1] + v[0]
        elif len(lv) == kmax + 1:
            # levels 0..kmax (Nmin 1): row p of the window is F(c - (kmax - p)) for c in lo..hi,
            # so rows 0..kmax hold levels kmax..0 and the max runs down the rows, into F_j
            base = P + lo - kmax
            buf = scratch[: (kmax + 1) * W].reshape(kmax + 1, W)
            np.add(S[j, base:base + kmax + 1, :W], v[::-1, None], out=buf)
            best = new[P + lo:P + hi + 1]
            buf.max(axis=0, out=best)
            inplace = True
        elif len(lv) == kmax - firsts[j] + 2:
            # levels 0, a..kmax. Row p of the window is F(c - (kmax - p)) for c in lo..hi:
            # rows 0..kmax-a hold levels kmax..a and the max runs down the rows, in one
            # preallocated scratch buffer
            rows = kmax - firsts[j] + 1
            base = P + lo - kmax
            win = S[j, base:base + rows, :W]
            buf = scratch[: rows * W].reshape(rows, W)
            np.add(win, v[:0:-1, None], out=buf)
            best = new[P + lo:P + hi + 1]  # written in place
            inplace = True
            buf.max(axis=0, out=best)
            zero = scratch[rows * W:(rows + 1) * W]  # level 0: F(c) + v(0), no temporary
            np.add(Fp[P + lo:P + hi + 1], v[0], out=zero)
            np.maximum(best, zero, out=best)
        else:
            idx = np.arange(P + lo, P + hi + 1)[None, :] - lv[:, None]
            best = (Fp[idx] + v[:, None]).max(axis=0)
        if not inplace:
            new[P + lo:P + hi + 1] = best
        if hi < cap:
            new[P + hi + 1:] = best[-1]  # more nodes than these items can use change nothing
    Fp = H[J]
    hist = H
    opt = float(Fp[P + cap])
    chosen = [0] * J
    c = cap
    for j in range(J - 1, -1, -1):
        lv = levels[j]
        kmax = tops[j]
        if kmax and len(lv) == kmax + 1:  # levels 0..kmax: one reversed slice
            cand = hist[j][P + c - kmax:P + c + 1][::-1] + values[j]
        elif kmax and len(lv) == kmax - firsts[j] + 2:  # levels 0, a..kmax: a reversed slice
            # argmax of [F(c) + v(0), F(c - a) + v(a), ...]: the first maximum, level 0 on ties
            # (Python float addition is numpy's float64 addition: the same numbers)
            rest = hist[j][P + c - kmax:P + c - firsts[j] + 1][::-1] + values[j][1:]
            i = int(rest.argmax())
            i = 0 if float(hist[j][P + c]) + float(values[j][0]) >= rest[i] else i + 1
            chosen[j] = i
            c -= int(lv[i])
            continue
        else:
            cand = hist[j][P + c - lv] + values[j]  # -inf where c - k < 0
        i = int(cand.argmax())  # first maximum: the smallest level
        chosen[j] = i
        c -= int(lv[i])
    return chosen, opt


def allocate(state: AllocState, opts: AllocOptions, *, name: str = NAME, solver=None) -> AllocResult:
    """The optimum by solve_levels, or by `solver` (same arguments, returns (chosen, optimum,
    message)) on the same level tables, reported under `name`."""
    t0 = time.perf_counter()
    cap, items = level_tables(state, opts)
    t1 = time.perf_counter()
    levels, values = [it[1] for it in items], [it[2] for it in items]
    message = ""
    if solver is None:
        chosen, _ = solve_levels(cap, levels, values)
    else:
        chosen, _, message = solver(cap, levels, values)
    t2 = time.perf_counter()
    counts = {t.id: 0 for t in state.trainers}
    value = {}
    for (t, lv, v), i in zip(items, chosen):
        counts[t.id] = int(lv[i])
        value[t.id] = float(v[i])
    # objective_of's number without recomputing it: the same per-Trainer values (level_tables
    # and level_value use the same arithmetic) summed in the same Trainer order
    pool = None
    total = 0.0
    for t in state.trainers:
        if t.id in value:
            total += value[t.id]
        else:  # over Pj_max: 0 nodes
            if pool is None:
                pool = state.pool_set
            total += level_value(t, 0, opts, held(t, pool))
    return make_result(name, state, counts, opts, "optimal", build_s=t1 - t0, solve_s=t2 - t1,
                       objective=total, message=message)
