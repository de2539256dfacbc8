"""`auto`: the exact allocator that is fastest for the instance's size, `dp` or `hull`.

Both are exact over the same count-level problem (docs/allocators.md). `dp`'s work is about
(levels of all Trainers) x (capacities it must track, at most min(pool, total levels));
`hull`'s is about Trainers x ~20 candidate levels plus a repair that is usually small, with a
fixed numpy overhead of ~0.5 ms. `auto` estimates dp's cells as
levels x min(pool, levels), levels = sum_j min(Nmax_j, pool) (scaled by Pj_max / J when only
Pj_max may run), and runs `dp` up to DP_MAX_CELLS, `hull` above. Measured CPU medians (8
instances each, Fig. 5 and mixed families, load ~5): J=10/pool 4,734 dp 0.24 vs hull 0.41 ms;
30/800 dp 0.5-0.8 vs 1.1-2.4 ms; 30/2,000 0.41 vs 0.5 ms; 50/1,000 1.3-1.8 vs 1.3-2.7 ms (the
crossover, ~3 million cells); 100/1,000 2.3-3.4 vs 1.0-2.3 ms; 1,000/10,000 160-250 ms wall vs
10-21 ms. If `hull` cannot prove optimality (status not "optimal") and dp is still affordable
(cells <= DP_FALLBACK_CELLS), `auto` runs `dp`. The result's `allocator` field says which one
answered ("auto:dp" / "auto:hull").
"""

from __future__ import annotations

from dataclasses import replace

from planner.allocators import dp, hull
from planner.allocators.base import AllocOptions, AllocResult, AllocState

NAME = "auto"
DP_MAX_CELLS = 3_000_000         # estimated dp cells up to which dp runs
DP_FALLBACK_CELLS = 500_000_000  # dp ~0.5 s there


def dp_cells(state: AllocState, opts: AllocOptions) -> float:
    """Estimated dp work: levels x min(pool, levels), levels = sum_j min(Nmax_j, pool)."""
    N = len(state.pool)
    J = len(state.trainers)
    levels = float(sum(min(t.nmax, N) for t in state.trainers))
    if opts.pj_max is not None and J > opts.pj_max:
        levels *= opts.pj_max / J
    return levels * min(N, levels)


def choose(state: AllocState, opts: AllocOptions) -> str:
    """'dp' or 'hull' by the estimated size of dp's table (dp for batch-size choices)."""
    if any(t.batches for t in state.trainers):
        return "dp"
    return "dp" if dp_cells(state, opts) <= DP_MAX_CELLS else "hull"


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    name = choose(state, opts)
    res = (dp if name == "dp" else hull).allocate(state, opts)
    if name == "hull" and res.status != "optimal" and dp_cells(state, opts) <= DP_FALLBACK_CELLS:
        name, res = "dp", dp.allocate(state, opts)
    return replace(res, allocator=f"{NAME}:{name}")
