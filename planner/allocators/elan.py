"""`elan` and `elan-backfill`: Elan's elastic scheduling policy (Xie et al., ICDCS'20, Sec. VI-C).

The paper (../shared/papers/elan.txt): "(1) an admission rule: a submitted job can start if the
`min_res` of the job is less than the current free GPUs or adding the job will not increase the
average job completion time; (2) an allocation rule: [...] First, we allocate `min_res` workers
to each job. Then, we calculate for each job the marginal gain of adding one worker to it, and
then add one worker to the job with the maximum marginal gain. We repeat this step until all
resources are allocated, or the number of workers of each job exceeds its `max_res`, or the
marginal gain of each job is not positive. Readers can refer to [6] [Optimus] for the definition
of the marginal gain." Applied to FIFO and Backfill: Elastic-FIFO (E-FIFO) and E-BF.

Here (one node = one GPU = one worker):

- admission: the Trainers already running (holding pool nodes) stay admitted, in submit order,
  while their minima fit the pool (a pool that shrank below their sum stops the latest ones).
  "Free" nodes are those not needed by the admitted Trainers' minima (every admitted Trainer
  can be shrunk to its minimum): free = |pool| - sum of admitted minima. A waiting Trainer, in
  submit order, is admitted when its minimum is strictly less than free, as the paper writes
  ("less than the current free GPUs"). `elan` (E-FIFO): the first waiting Trainer that is not
  admitted blocks those behind it; `elan-backfill` (E-BF): later ones that pass are admitted
  (backfill without reservations, as `static-backfill`). The paper's second admission clause
  (admit when it does not raise the mean JCT) needs a JCT model of the whole queue: not
  modelled.
- allocation: every admitted Trainer at its minimum, then Optimus' gain (planner.allocators.
  optimus: the drop in estimated completion time per added node) one node at a time, until no
  node is free, all are at Nmax, or no gain is positive.

No admitted Trainer is ever below its minimum (the issue's measurement: the project's previous
elastic policy left admitted jobs at 0 nodes). Pj_max still caps who is considered (base.
fcfs_eligible); for Elan's own setting, pass a Pj_max above the queue length and the replay's
admission `fcfs`, so that this rule alone decides who starts.
"""

from __future__ import annotations

from planner.allocators.base import (
    AllocOptions,
    AllocResult,
    AllocState,
    fcfs_eligible,
    held,
    run_heuristic,
    smallest_level,
)
from planner.allocators.optimus import fill_by_completion_gain


def elan_counts(state: AllocState, opts: AllocOptions, backfill: bool = False) -> dict[str, int]:
    pool = state.pool_set
    counts = {t.id: 0 for t in state.trainers}
    elig, _ = fcfs_eligible(state, opts.pj_max)
    idx = {t.id: i for i, t in enumerate(state.trainers)}
    order = sorted(elig, key=lambda t: (t.submit_s, idx[t.id]))
    running = [t for t in order if held(t, pool) > 0]
    waiting = [t for t in order if held(t, pool) == 0]
    free = len(pool)
    admitted = []
    for t in running:
        lo = smallest_level(t, opts.pow2)
        if lo is not None and lo <= free:
            counts[t.id] = lo
            free -= lo
            admitted.append(t)
    for t in waiting:
        lo = smallest_level(t, opts.pow2)
        if lo is not None and lo < free:  # Elan: "min_res [...] less than the current free GPUs"
            counts[t.id] = lo
            free -= lo
            admitted.append(t)
        elif not backfill:
            break
    fill_by_completion_gain(counts, admitted, free, opts.pow2)
    return counts


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    return run_heuristic("elan", elan_counts, state, opts)


def allocate_backfill(state: AllocState, opts: AllocOptions) -> AllocResult:
    return run_heuristic("elan-backfill", lambda s, o: elan_counts(s, o, backfill=True), state, opts)
