"""`marginal-gain`: a greedy on the chosen objective, one node at a time to the largest gain per node.

It is not Optimus' rule (that is `optimus`: every job at its minimum first, then the largest drop
in estimated completion time, rem/O(k) - rem/O(k+1), which favours long jobs). Here the gain is
the rise of the chosen objective (BFTrainer's, base.level_tables); with the `progress` objective
it is T_fwd * dO / remaining work per node, which favours short jobs.

From scratch (every Trainer at 0), repeatedly give nodes to the Trainer whose objective rises
most per node by moving to its next allowed level: one node (k -> k+1), or the whole Nmin
block to start it (0 -> Nmin), or the next power of two with pow2. The objective is BFTrainer's
(base.level_tables, rescaling costs included), so a Trainer that holds C nodes gets back to C
readily (the step onto C removes its Rdw cost) and grows past C only when the first extra node
pays for its Rup cost. Stops when no step has a positive gain or no step fits the free nodes.
Ties go to the Trainer submitted first (then the order given). A heap keeps it O(|N| log J).
"""

from __future__ import annotations

import heapq

from planner.allocators.base import AllocOptions, AllocResult, AllocState, level_tables, run_heuristic

NAME = "marginal-gain"


def marginal_gain_counts(state: AllocState, opts: AllocOptions) -> dict[str, int]:
    cap, items = level_tables(state, opts)
    pos = [0] * len(items)
    free = cap
    rank = {id(t): r for r, t in enumerate(sorted((it[0] for it in items), key=lambda t: t.submit_s))}

    def entry(j):
        t, lv, v = items[j]
        i = pos[j]
        if i + 1 >= len(lv):
            return None
        dk = int(lv[i + 1] - lv[i])
        return (-(float(v[i + 1]) - float(v[i])) / dk, rank[id(t)], j, dk)

    heap = [e for e in (entry(j) for j in range(len(items))) if e is not None]
    heapq.heapify(heap)
    while heap and free > 0:
        skipped = []
        chosen = None
        while heap:
            e = heapq.heappop(heap)
            if -e[0] <= 0:
                heap = []  # best remaining gain is not positive: done
                break
            if e[3] <= free:
                chosen = e
                break
            skipped.append(e)  # does not fit now; never will (free only shrinks)
        if chosen is None:
            break
        j = chosen[2]
        pos[j] += 1
        free -= chosen[3]
        nxt = entry(j)
        if nxt is not None:
            heapq.heappush(heap, nxt)
    return {t.id: int(lv[pos[j]]) for j, (t, lv, _) in enumerate(items)}


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    return run_heuristic(NAME, marginal_gain_counts, state, opts)
