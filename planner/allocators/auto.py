"""`auto`: the exact allocator that is fastest for the instance's size, `dp` or `hull`.

Both are exact over the same count-level problem (docs/allocators.md). `dp` costs about
Trainers x pool x levels; `hull` costs about Trainers (times ~20 candidate levels), plus a
repair that is usually small. Below DP_MAX_CELLS (eligible Trainers x pool nodes) `dp` is as
fast or faster (measured medians, load ~9: J=30/pool 800 dp 0.8 ms vs hull 3.7 ms; 100/1,000
10.5 vs 19.8 ms; 100/2,000 14.5 vs 13.3 ms; 100/4,000 17.0 vs 13.4 ms; 1,000/10,000 377 vs 27 ms)
and it is exact by construction, so `auto` runs it; above it runs `hull`. If `hull` cannot
prove optimality (its repair exceeded its budget, status not "optimal") and dp is still
affordable (cells <= DP_FALLBACK_CELLS), `auto` runs `dp`.
The result's `allocator` field says which one answered ("auto:dp" / "auto:hull").
"""

from __future__ import annotations

from dataclasses import replace

from planner.allocators import dp, hull
from planner.allocators.base import AllocOptions, AllocResult, AllocState

NAME = "auto"
DP_MAX_CELLS = 200_000         # e.g. 100 Trainers x 2,000 nodes -> dp; 100 x 4,000 -> hull
DP_FALLBACK_CELLS = 20_000_000  # dp ~0.5 s there


def choose(state: AllocState, opts: AllocOptions) -> str:
    """'dp' or 'hull' by the size of the decision (Trainers allowed to run x pool nodes)."""
    J = len(state.trainers) if opts.pj_max is None else min(opts.pj_max, len(state.trainers))
    return "dp" if J * len(state.pool) <= DP_MAX_CELLS else "hull"


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    name = choose(state, opts)
    res = (dp if name == "dp" else hull).allocate(state, opts)
    if name == "hull" and res.status != "optimal":
        J = len(state.trainers) if opts.pj_max is None else min(opts.pj_max, len(state.trainers))
        if J * len(state.pool) <= DP_FALLBACK_CELLS:
            name, res = "dp", dp.allocate(state, opts)
    return replace(res, allocator=f"{NAME}:{name}")
