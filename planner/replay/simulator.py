"""Event-driven replay of a pool with a stream of elastic Trainers under any allocator.

`simulate(pool, specs, allocator="dp", opts=None, config=ReplayConfig(...), hooks=ReplayHooks(...))`
runs one replay and returns a SimResult: DataFrames `timeline`, `trainers`, `decisions`,
`preemptions` and the JSON-ready `summary` (computed by planner.replay.metrics from those records).

All times inside a SimResult are seconds since the window start (`pool.start_s`); Trainer
submit times (planner.workload.generators) are on the same clock.

Semantics (docs/simulator.md has the long form):

- Events are the pool's events inside the window (the idle set changes), Trainer arrivals,
  Trainer completions and, with cadence `interval`, the decision ticks every `step_min`
  minutes. Things at the same instant are one event. At each event, in this order:
  1. every running Trainer is credited the samples of the interval since the last event at
     its current size's throughput O_j(n), minus pending costs (below);
  2. Trainers whose work is done leave (a completion time is computed exactly from the
     current rates and scheduled as an event, so completions land on their own instant);
  3. the pool changes: joining nodes become idle; nodes that leave preempt exactly the
     Trainers holding them: each such Trainer pays Rdw seconds of its pre-change
     throughput and shrinks; if it falls below Nmin it drops to 0 nodes (its other nodes go
     back to the free pool); with `migrate_s` set, a Trainer whose lost nodes can all be
     replaced by free idle nodes moves onto them instead (cost migrate_s seconds of O(c), size
     kept; recorded as a preemption row with nodes_migrated > 0);
  4. arrived Trainers queue; queued Trainers are admitted FCFS while fewer than Pj_max are
     admitted (an admitted Trainer keeps its slot until it completes, even at 0 nodes); with
     admission `min-fits`, also only while the admitted Trainers' Nmin sum fits the pool; in
     drop mode (IBM's), Trainers still queued after admission are rejected (outcome "dropped");
  5. cadence `events`: if any Trainer is admitted, the allocator decides (AllocState: pool =
     all idle node ids, Trainers = the admitted ones with the nodes they hold);
     cadence `interval`: at a tick the allocator decides; between ticks admitted Trainers
     without nodes are started at once, FCFS, each with as many free nodes as possible
     within Nmin..Nmax (stopping at the first that does not fit), and completions simply
     free their nodes; pool leaves still preempt at once.
- Costs: a decision that changes a Trainer's node count from c to k costs Rup (k > c) or
  Rdw (k < c) seconds of its pre-change throughput O(c) (so starting from 0 is free);
  preemption costs Rdw seconds of O(c). A cost is pending until paid: it is taken from the
  samples the Trainer produces in the following interval(s), never more than an interval
  produces, the remainder carried over (preemption costs first, then rescale costs, then
  solve-idle costs). Costs still pending at the window end were never paid and are reported
  as incurred but not as charged.
- `idle_during_solve`: nodes a decision moves stay idle for the decision's wall time: a
  Trainer that grows pays (O(k) - O(c)) * wall seconds as a solve-idle cost.
- The allocator's wall time (around the allocate call) is recorded per decision, with the
  build/solve seconds it reports itself.
- Hooks (planner.replay.hooks): `node_mapper` turns counts into node ids (default LowestId:
  no migration, lowest ids first), `tfwd_rule` gives the T_fwd of each decision (default
  the constant opts.tfwd_s), `admission` and `cadence` replace steps 4 and 5 (default: the
  rules config.admission and config.cadence name).

The engine is planner.replay (the Replay class, one method per phase); this module is its
public face: simulate() and SimResult (planner.replay.result).
"""

from __future__ import annotations

from collections.abc import Callable

from planner.allocators.base import AllocOptions
from planner.replay.config import ReplayConfig, ReplayHooks
from planner.replay.engine import CADENCES, Replay  # noqa: F401  (CADENCES re-exported)
from planner.replay.pool import PoolTrace
from planner.replay.result import SimResult
from planner.workload.trainers import TrainerSpec


def simulate(pool: PoolTrace, specs: list[TrainerSpec], allocator: str | Callable = "dp",
             opts: AllocOptions | None = None, config: ReplayConfig | None = None, *,
             hooks: ReplayHooks | None = None, progress: Callable[[float], None] | None = None,
             scenario: dict | None = None, **options) -> SimResult:
    """Replay `pool` with Trainers `specs` (submit_s relative to the window start).

    allocator: a registered allocator name or a function (AllocState, AllocOptions) -> AllocResult.
    opts: what the allocator is given (T_fwd, objective, solver limits); its pj_max and step_min
    are the replay's (config).
    config: the replay's settings (planner.replay.config.ReplayConfig: pj_max, cadence, step_min,
    admission, idle_during_solve, scaling_delay_s, migrate_s, drop, check); defaults: the scenario
    schema's. drop: IBM's drop mode: a Trainer that cannot be admitted when it arrives is rejected
    (outcome "dropped"; summary trainers_dropped and drop_ratio = dropped / arrived) instead of queued.
    hooks: the replaceable steps (ReplayHooks: node_mapper, tfwd_rule, admission, cadence, learner).
    progress: called with the fraction of simulated time, at least every 1 %.
    scenario: the scenario dict recorded on the result (SimResult.scenario).
    options: any ReplayConfig or ReplayHooks field by name (`pj_max=4, node_mapper=m`), folded
    into config and hooks.
    """
    res = Replay(pool, specs, allocator=allocator, opts=opts, config=config, hooks=hooks, **options).run(progress)
    res.scenario = dict(scenario or {})
    return res
