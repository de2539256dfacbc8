"""`static` and `static-backfill`: rigid baselines (Elan's scheduling study).

A rigid job runs only at its requested size r (TrainerState.request_nodes, else Nmax; clipped to
Nmin..Nmax, with pow2 rounded down to a power of two) or not at all: it never grows or shrinks.
Trainers allowed to run (Pj_max, FCFS by submit time) that hold r pool nodes keep them; a
Trainer the pool took nodes from stops (it cannot run below r) and waits again. Waiting
Trainers start in submit order while r nodes are free:
- `static` (FIFO): the first one that does not fit blocks those behind it;
- `static-backfill`: later ones that fit start anyway (Slurm's backfill without reservations,
  Elan's BF policy as far as a count-level model can express it).
Elan compares exactly these with their elastic variants (JPT -43 %, JCT -25 %, makespan -21 %).
"""

from __future__ import annotations

from planner.allocators.base import (
    AllocOptions,
    AllocResult,
    AllocState,
    TrainerState,
    fcfs_eligible,
    floor_level,
    held,
    run_heuristic,
)


def request(t: TrainerState, pow2: bool = False) -> int:
    """The node count Trainer t runs at when rigid (0 when no allowed size exists)."""
    r = t.nmax if t.request_nodes is None else int(t.request_nodes)
    return floor_level(max(r, t.nmin), t, pow2)


def static_counts(state: AllocState, opts: AllocOptions, backfill: bool = False) -> dict[str, int]:
    pool = state.pool_set
    counts = {t.id: 0 for t in state.trainers}
    elig, _ = fcfs_eligible(state, opts.pj_max)
    order = sorted(elig, key=lambda t: (t.submit_s, t.id))
    free = len(pool)
    waiting = []
    for t in order:
        r = request(t, opts.pow2)
        if r and held(t, pool) >= r:
            counts[t.id] = r
            free -= r
        else:
            waiting.append((t, r))
    for t, r in waiting:
        if 0 < r <= free:
            counts[t.id] = r
            free -= r
        elif not backfill:
            break
    return counts


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    return run_heuristic("static", static_counts, state, opts)


def allocate_backfill(state: AllocState, opts: AllocOptions) -> AllocResult:
    return run_heuristic("static-backfill", lambda s, o: static_counts(s, o, backfill=True), state, opts)
