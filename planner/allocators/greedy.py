"""`greedy`: ModelArts' four greedy rules, adapted to node counts.

Trainers allowed to run (Pj_max, base.fcfs_eligible) start from what they still hold (a
Trainer left below Nmin by preemption goes back to the queue). The queue is the Trainers
holding nothing, in submit order. Then, until nothing changes:

1. Start the queue head with as many nodes as possible (up to Nmax, all free nodes) if at
   least its smallest level (Nmin, or the smallest power of two >= Nmin) is free.
2. If the queue is empty (or its head is blocked, see 3) and nodes are free, scale up the
   shortest-running Trainer (smallest `running_s`; a Trainer started in this decision counts
   as 0) as far as Nmax and the free nodes allow, then the next shortest, and so on.
3. If the head cannot start, halve the longest-running Trainers (largest `running_s`, each at
   most once per decision, never below its Nmin) until enough nodes are free for the head,
   then start it by rule 1. If halving every candidate would not free enough, nobody is halved
   and the head stays blocked (first come first served: no Trainer behind it jumps the queue).
4. Otherwise keep the allocation.

With pow2 every size is rounded down to a power of two. Ties: earlier submit, then given order.
"""

from __future__ import annotations

from planner.allocators.base import (
    AllocOptions,
    AllocResult,
    AllocState,
    fcfs_eligible,
    floor_level,
    give_leftover,
    held,
    run_heuristic,
    smallest_level,
)

NAME = "greedy"


def greedy_counts(state: AllocState, opts: AllocOptions) -> dict[str, int]:
    pool = state.pool_set
    cap = len(pool)
    elig, _ = fcfs_eligible(state, opts.pj_max)
    order = {t.id: i for i, t in enumerate(state.trainers)}
    counts = {t.id: 0 for t in state.trainers}
    running_s = {}
    for t in elig:
        counts[t.id] = floor_level(held(t, pool), t, opts.pow2)
        if counts[t.id]:
            running_s[t.id] = t.running_s
    free = cap - sum(counts.values())
    queue = sorted((t for t in elig if counts[t.id] == 0), key=lambda t: (t.submit_s, order[t.id]))
    by_id = {t.id: t for t in elig}
    halved: set[str] = set()
    blocked = False
    while queue and not blocked:
        head = queue[0]
        need = smallest_level(head, opts.pow2)
        if need is None or need > cap:
            queue.pop(0)  # can never run here
            continue
        if need <= free:  # rule 1
            k = floor_level(free, head, opts.pow2)
            counts[head.id] = k
            free -= k
            running_s[head.id] = 0.0
            queue.pop(0)
            continue
        # rule 3: halve the longest-running Trainers for the head
        cands = sorted((tid for tid in running_s if tid not in halved),
                       key=lambda tid: (-running_s[tid], by_id[tid].submit_s, order[tid]))
        plan, gain = [], 0
        for tid in cands:
            t = by_id[tid]
            new = floor_level(counts[tid] // 2, t, opts.pow2)
            if new == 0 or new >= counts[tid]:
                continue
            plan.append((tid, new))
            gain += counts[tid] - new
            if free + gain >= need:
                break
        if free + gain < need:
            blocked = True
            break
        for tid, new in plan:
            free += counts[tid] - new
            counts[tid] = new
            halved.add(tid)
    # rule 2: scale up the shortest-running Trainers (not those just halved) with what is left
    grow = sorted((tid for tid in running_s if tid not in halved),
                  key=lambda tid: (running_s[tid], by_id[tid].submit_s, order[tid]))
    give_leftover(counts, [by_id[tid] for tid in grow], free, opts.pow2)
    return counts


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    return run_heuristic(NAME, greedy_counts, state, opts)
