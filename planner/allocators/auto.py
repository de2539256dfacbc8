"""`auto`: the exact allocator that is fastest for the instance's size: `dp`, `dp-reduced` or `hull`.

All three are exact over the same count-level problem (docs/allocators.md). `dp`'s work is about
(levels of all Trainers) x (capacities it must track, at most min(pool, total levels));
`dp-reduced` (dp_reduced.py) adds a fixed ~0.1 ms for a Lagrangian price that drops the levels no
optimum can use, then runs dp on the few that survive; `hull` works on Trainers x ~20 candidate
levels with no Trainers x nodes table, at a fixed numpy cost of ~0.5 ms. `auto` estimates dp's
cells as levels x min(pool, levels), levels = sum_j min(Nmax_j, pool) (scaled by Pj_max / J
when only Pj_max may run), and runs `dp` up to DP_SMALL_CELLS, `dp-reduced` up to DP_MAX_CELLS,
`hull` above. Medians of 8 instances per cell (benchmarks/bench_large.py's mixed and Fig. 5
families), dp / dp-reduced / hull in ms: 5x100 (2-3e4 cells) 0.075 / 0.10-0.15 / 0.56-0.87;
10x4,734 (2-4e5) 0.20-0.28 / 0.13-0.21 / 0.38-0.54; 30x800 (0.9-1.5e6) 0.52-0.78 / 0.29-0.37 /
1.1-1.9; 100x2,000 (0.8-1.3e7) 2.9-5.2 / 0.54-1.8 / 0.89-4.0; 300x3,000 (3.6-5.8e7) - / 1.5-6.3 /
2.6-6.9; 600x6,000 (1.5-2.3e8) - / 3.6-16 / 4.0-12. Above DP_MAX_CELLS `hull` also keeps memory
linear (dp-reduced may fall back to a whole dp table). If `hull` cannot prove optimality (status
not "optimal") and dp is still affordable (cells <= DP_FALLBACK_CELLS), `auto` runs `dp`. The
result's `allocator` field says which one answered ("auto:dp", "auto:dp-reduced", "auto:hull").
"""

from __future__ import annotations

from dataclasses import replace

from planner.allocators import dp, dp_reduced, hull
from planner.allocators.base import AllocOptions, AllocResult, AllocState, MemoryBudget

NAME = "auto"
DP_SMALL_CELLS = 150_000         # estimated dp cells up to which plain dp runs
DP_MAX_CELLS = 30_000_000        # ... up to which dp-reduced runs; hull above
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
    """'dp', 'dp-reduced' or 'hull' by the estimated size of dp's table (dp-reduced for
    batch-size choices above DP_SMALL_CELLS: hull has no batch levels)."""
    cells = dp_cells(state, opts)
    if cells <= DP_SMALL_CELLS:
        return dp.NAME
    if cells <= DP_MAX_CELLS or any(t.batches for t in state.trainers):
        return dp_reduced.NAME
    return hull.NAME


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    name = choose(state, opts)
    if name == dp.NAME:
        return dp.allocate(state, opts, name=f"{NAME}:{dp.NAME}")
    if name == dp_reduced.NAME:
        try:
            return dp_reduced.allocate(state, opts, name=f"{NAME}:{dp_reduced.NAME}")
        except MemoryBudget:  # its table would not fit: hull's memory is linear (no batch levels there)
            if any(t.batches for t in state.trainers):
                raise
            name = hull.NAME
    res = hull.allocate(state, opts)
    if res.status != "optimal" and dp_cells(state, opts) <= DP_FALLBACK_CELLS:
        try:
            return dp.allocate(state, opts, name=f"{NAME}:{dp.NAME}")
        except MemoryBudget:
            pass
    return replace(res, allocator=f"{NAME}:{name}")
