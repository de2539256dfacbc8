"""`equal-share`: BFTrainer's heuristic baseline.

Every Trainer allowed to run (Pj_max, FCFS by submit time) gets N // J nodes, clipped to
[Nmin, Nmax] (and to a power of two with pow2). If the clipped shares do not fit (shares
raised to Nmin), Trainers are admitted first come first served while they fit; the others get
0. Leftover nodes then go first come first served: each Trainer in submit order is raised as
far as its Nmax (or started at Nmin, if it got 0) allows. The node map releases surplus
first, then adds (base.counts_to_map), so no Trainer migrates.
"""

from __future__ import annotations

import time

from planner.allocators.base import AllocOptions, AllocResult, AllocState, fcfs_eligible, make_result

NAME = "equal-share"


def _floor_level(k: int, nmin: int, nmax: int, pow2: bool) -> int:
    """Largest allowed level <= k (0 if none)."""
    k = min(k, nmax)
    if pow2 and k > 0:
        k = 1 << (k.bit_length() - 1)
    return k if k >= max(nmin, 1) else 0


def equal_share_counts(state: AllocState, opts: AllocOptions) -> dict[str, int]:
    cap = len(state.pool)
    elig, _ = fcfs_eligible(state, opts.pj_max)
    order = sorted(elig, key=lambda t: (t.submit_s, t.id))
    counts = {t.id: 0 for t in state.trainers}
    if not order or cap == 0:
        return counts
    share = cap // len(order)
    free = cap
    for t in order:
        want = _floor_level(max(share, t.nmin), t.nmin, t.nmax, opts.pow2)
        if want == 0 and opts.pow2 and t.nmin <= t.nmax:
            # no power of two at or below the share fits the bounds: smallest one >= Nmin
            p = 1 << max(t.nmin - 1, 0).bit_length()
            want = p if p <= t.nmax else 0
        if 0 < want <= free:
            counts[t.id] = want
            free -= want
    for t in order:  # leftover nodes, first come first served
        if free <= 0:
            break
        k = counts[t.id]
        new = _floor_level(k + free, t.nmin, t.nmax, opts.pow2)
        if new > k:
            counts[t.id] = new
            free -= new - k
    return counts


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    t0 = time.perf_counter()
    counts = equal_share_counts(state, opts)
    t1 = time.perf_counter()
    return make_result(NAME, state, counts, opts, "heuristic", build_s=0.0, solve_s=t1 - t0)
