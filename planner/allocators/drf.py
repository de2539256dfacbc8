"""`drf`: the fairness baseline of Optimus' evaluation, Dominant Resource Fairness.

Optimus (../shared/papers/optimus-summary.txt) "is compared against a fairness-based scheduler
using Dominant Resource Fairness as used in many existing systems [...] Optimus reduces the
average completion time and makespan by 2.39x and 1.63x respectively as compared to the DRF
based scheduler." DRF (Ghodsi et al., NSDI'11) equalises each job's dominant share; with one
resource type (nodes) the dominant share is the node share, and DRF is max-min fairness on
nodes: progressive filling.

Here: Trainers allowed to run (Pj_max, FCFS) are admitted in submit order (those holding pool
nodes first) while their minimum (Nmin, with pow2 the smallest power of two >= Nmin) fits the
free nodes; the first that does not fit blocks those behind it. Then progressive filling: one
node at a time (pow2: one power-of-two step, if it fits) to the admitted Trainer holding the
fewest nodes that is below Nmax (ties: submitted first), until no node is free or every
Trainer is at Nmax. The result is max-min fair subject to each Trainer's Nmin and Nmax; no
speed curve, remaining work or rescaling cost enters it.
"""

from __future__ import annotations

import heapq

from planner.allocators.base import AllocOptions, AllocResult, AllocState, fcfs_eligible, run_heuristic, smallest_level
from planner.allocators.optimus import fifo_order, next_level

NAME = "drf"


def drf_counts(state: AllocState, opts: AllocOptions) -> dict[str, int]:
    counts = {t.id: 0 for t in state.trainers}
    elig, _ = fcfs_eligible(state, opts.pj_max)
    free = len(state.pool_set)
    admitted = []
    for t in fifo_order(state, elig):
        lo = smallest_level(t, opts.pow2)
        if lo is None or lo > free:
            break
        counts[t.id] = lo
        free -= lo
        admitted.append(t)
    rank = {t.id: r for r, t in enumerate(sorted(admitted, key=lambda t: t.submit_s))}
    heap = [(counts[t.id], rank[t.id], t) for t in admitted]
    heapq.heapify(heap)
    while heap and free > 0:
        k, r, t = heapq.heappop(heap)
        nk = next_level(t, k, opts.pow2)
        if nk is None or nk - k > free:
            continue  # at Nmax, or its next step does not fit (free only shrinks)
        counts[t.id] = nk
        free -= nk - k
        heapq.heappush(heap, (nk, r, t))
    return counts


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    return run_heuristic(NAME, drf_counts, state, opts)
