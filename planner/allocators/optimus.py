"""`optimus`: Optimus' allocation rule (Peng et al., EuroSys'18), as the paper states it.

The paper (../shared/papers/optimus-summary.txt): "Initially each job is allocated one worker and
one parameter server. Then we iterate, greedily adding a worker (parameter server) to the job
with the largest marginal gain in each iteration. Iteration stops when cluster resource is
exhausted, or the marginal gains are all negative." The marginal gain "is the estimated
reduction in job completion time when one worker (or parameter server) is added to a job,
divided by the amount of the dominant resource that a worker (parameter server) occupies".

Here a worker is a node and the node is the one (so the dominant) resource:

1. every Trainer allowed to run (Pj_max, FCFS: base.fcfs_eligible), in submit order (those
   holding pool nodes first), starts at its minimum (Nmin, with pow2 the smallest power of two
   >= Nmin) while that fits the free nodes; one that does not fit gets 0 in this decision;
2. then one node at a time (with pow2: one power-of-two step, the gain divided by the nodes it
   adds) to the Trainer whose estimated completion time drops most:
       gain_j(k) = rem_j / O_j(k) - rem_j / O_j(k')      (k' the next allowed level, <= Nmax)
   rem_j = remaining samples (1 when unknown or infinite: the gain is then per sample of work);
   O_j = the curve the allocator is shown (for a Trainer with batch choices, the fastest batch
   size at each count);
3. stop when no node is free, every Trainer is at Nmax, or no gain is positive.

Rescaling costs do not enter the rule (Optimus' gain has none); the replay still charges them.
Ties: the Trainer submitted first. Unlike `marginal-gain` (a greedy on the chosen objective,
BFTrainer's, which favours short jobs: gain per node / remaining work), this gain grows with
the remaining work, so the longer of two otherwise identical jobs gets the extra node.
"""

from __future__ import annotations

import heapq
import math

from planner.allocators.base import (
    AllocOptions,
    AllocResult,
    AllocState,
    TrainerState,
    fcfs_eligible,
    held,
    run_heuristic,
    smallest_level,
)

NAME = "optimus"


def speed(t: TrainerState, k: int) -> float:
    """O_j(k) as the allocator sees it (the fastest batch size for Trainers with choices)."""
    if k <= 0:
        return 0.0
    if t.batches:
        return max(float(c(k)) for _, c in t.batches)
    return float(t.curve(k))


def remaining(t: TrainerState) -> float:
    rem = float(t.remaining_samples)
    return rem if math.isfinite(rem) and rem > 0 else 1.0


def next_level(t: TrainerState, k: int, pow2: bool) -> int | None:
    """The next allowed node count above k (k >= Nmin), or None at Nmax."""
    nk = 2 * k if pow2 else k + 1
    return nk if nk <= t.nmax else None


def completion_gain(t: TrainerState, k: int, nk: int) -> float:
    """Optimus' marginal gain of going from k to nk nodes, per added node (-inf if nk is slower
    than useless: O(nk) <= 0)."""
    o_k, o_n = speed(t, k), speed(t, nk)
    if o_n <= 0:
        return -math.inf
    rem = remaining(t)
    before = rem / o_k if o_k > 0 else math.inf
    if math.isinf(before):
        return math.inf
    return (before - rem / o_n) / (nk - k)


def fifo_order(state: AllocState, trainers) -> list[TrainerState]:
    """Trainers holding pool nodes first, then the others; each group in submit order."""
    pool = state.pool_set
    idx = {t.id: i for i, t in enumerate(state.trainers)}
    return sorted(trainers, key=lambda t: (0 if held(t, pool) > 0 else 1, t.submit_s, idx[t.id]))


def fill_by_completion_gain(counts: dict[str, int], admitted: list[TrainerState], free: int,
                            pow2: bool) -> int:
    """Step 2 and 3 above on `admitted` (each already at its minimum in counts); updates counts,
    returns the nodes left. A heap keeps it O(|N| log J)."""
    rank = {t.id: r for r, t in enumerate(sorted(admitted, key=lambda t: t.submit_s))}
    by_id = {t.id: t for t in admitted}

    def entry(t):
        k = counts[t.id]
        nk = next_level(t, k, pow2)
        if nk is None:
            return None
        g = completion_gain(t, k, nk)
        return (-g, rank[t.id], t.id, nk - k) if g > 0 else None

    heap = [e for e in (entry(t) for t in admitted) if e is not None]
    heapq.heapify(heap)
    while heap and free > 0:
        e = heapq.heappop(heap)
        if e[3] > free:
            continue  # this step does not fit (pow2); it never will (free only shrinks)
        t = by_id[e[2]]
        counts[t.id] += e[3]
        free -= e[3]
        nxt = entry(t)
        if nxt is not None:
            heapq.heappush(heap, nxt)
    return free


def optimus_counts(state: AllocState, opts: AllocOptions) -> dict[str, int]:
    counts = {t.id: 0 for t in state.trainers}
    elig, _ = fcfs_eligible(state, opts.pj_max)
    free = len(state.pool_set)
    admitted = []
    for t in fifo_order(state, elig):
        lo = smallest_level(t, opts.pow2)
        if lo is not None and lo <= free:
            counts[t.id] = lo
            free -= lo
            admitted.append(t)
    fill_by_completion_gain(counts, admitted, free, opts.pow2)
    return counts


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    return run_heuristic(NAME, optimus_counts, state, opts)
