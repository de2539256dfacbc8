"""`equal-share`: BFTrainer's heuristic baseline.

Every Trainer allowed to run (Pj_max, FCFS by submit time) gets N // J nodes, clipped to
[Nmin, Nmax] (and to a power of two with pow2). If the clipped shares do not fit (shares
raised to Nmin), Trainers are admitted first come first served while they fit; the others get
0. Leftover nodes then go first come first served: each Trainer in submit order is raised as
far as its Nmax (or started at Nmin, if it got 0) allows. The node map releases surplus
first, then adds (base.counts_to_map), so no Trainer migrates.
"""

from __future__ import annotations

from planner.allocators.base import (
    AllocOptions,
    AllocResult,
    AllocState,
    fcfs_eligible,
    floor_level,
    give_leftover,
    run_heuristic,
    smallest_level,
)

NAME = "equal-share"


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
        want = floor_level(max(share, t.nmin), t, opts.pow2)
        if want == 0 and opts.pow2:
            # no power of two at or below the share fits the bounds: smallest one >= Nmin
            want = smallest_level(t, pow2=True) or 0
        if 0 < want <= free:
            counts[t.id] = want
            free -= want
    give_leftover(counts, order, free, opts.pow2)  # leftover nodes, first come first served
    return counts


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    return run_heuristic(NAME, equal_share_counts, state, opts)
