"""The replay's two hook points (planner.replay.hooks): the node mapper and the T_fwd rule."""

from __future__ import annotations

import numpy as np
import pytest

from planner.allocators import get
from planner.allocators.base import AllocResult, AllocState
from planner.replay.engine import Replay
from planner.replay.hooks import CountsToMap, LowestId
from planner.replay.pool import PoolTrace, fixed_pool
from planner.replay.simulator import simulate
from planner.workload.generators import make_workload
from planner.workload.trainers import Curve, TrainerSpec

LIN = Curve((0, 1, 4), (0.0, 100.0, 400.0))


def spec(i, submit, work, nmin=1, nmax=4):
    return TrainerSpec(id=f"t{i}", model="lin", curve=LIN, nmin=nmin, nmax=nmax, rup_s=10.0,
                       rdw_s=5.0, work_samples=work, submit_s=submit)


def hand_pool(nodes, initial, events, T):
    return PoolTrace(log="hand", start_s=0.0, end_s=T, nodes=nodes, initial_idle=np.asarray(initial),
                     times=np.asarray([e[0] for e in events], float),
                     joins=[np.asarray(e[1], dtype=np.int64) for e in events],
                     leaves=[np.asarray(e[2], dtype=np.int64) for e in events])


class HighestId(CountsToMap):
    """Opposite of today's rule: Trainers take (and keep) the highest free ids."""

    def decision_map(self, state, result):
        pool = sorted(state.pool, reverse=True)
        out, used = {}, set()
        for t in state.trainers:
            k = result.counts.get(t.id, 0)
            keep = sorted((x for x in t.current if x in set(pool)), reverse=True)[:k]
            used.update(keep)
            out[t.id] = keep
        for t in state.trainers:
            want = result.counts.get(t.id, 0) - len(out[t.id])
            free = [x for x in pool if x not in used][:max(want, 0)]
            used.update(free)
            out[t.id] = tuple(sorted(out[t.id] + free))
        return out

    def pick_free(self, free, k, now_s):
        return free[::-1][:k]


def summary_wo_wall(res):
    return {k: v for k, v in res.summary.items() if k not in ("wall_s", "solve_s")}


@pytest.mark.parametrize("allocator,cadence", [("dp", "events"), ("equal-share", "interval"),
                                               ("greedy", "events"), ("horizon-milp", "events")])
def test_counts_to_map_reproduces_the_allocators_maps(allocator, cadence):
    # Every count-level allocator returns base.counts_to_map of its counts, so recomputing the
    # map from the counts alone changes nothing (the default mapper uses the allocator's map).
    pool = hand_pool(24, range(16), [(300, [16, 17, 18, 19], [0, 1, 2]), (900, [0, 1], [5, 17, 20])], 2400)
    specs = make_workload("diverse", seed=2, count=8, interarrival_s=120)
    specs = [s.__class__(**{**s.__dict__, "work_samples": 2e6, "nmax": 8}) for s in specs]
    a = simulate(pool, specs, allocator, cadence=cadence, step_min=5)
    b = simulate(pool, specs, allocator, cadence=cadence, step_min=5, node_mapper=CountsToMap())
    assert summary_wo_wall(a) == summary_wo_wall(b)
    assert a.summary["decisions"] > 0


def test_node_mapper_decides_who_is_preempted():
    # One Trainer on 2 of 4 nodes; node 3 leaves at 100. Lowest-id holds {0,1}: untouched.
    # Highest-id holds {2,3}: preempted, pays Rdw * O(2) = 5 * 200 = 1000 samples, then regrows
    # 1 -> 2 on node 1 at the decision of t=100: Rup * O(1) = 10 * 100 = 1000 more.
    pool = hand_pool(4, [0, 1, 2, 3], [(100, [], [3])], 200)
    low = simulate(pool, [spec(0, 0, 1e9, nmax=2)], "dp")
    high = simulate(pool, [spec(0, 0, 1e9, nmax=2)], "dp", node_mapper=HighestId())
    assert low.summary["preemptions"] == 0
    assert high.summary["preemptions"] == 1
    assert high.summary["preemption_cost_samples"] == pytest.approx(1000.0)
    assert high.summary["rescale_cost_samples"] == pytest.approx(1000.0)
    assert low.summary["samples"] - high.summary["samples"] == pytest.approx(2000.0)


def test_node_mapper_picks_nodes_for_quick_starts():
    pool = hand_pool(4, [0, 1, 2, 3], [(100, [], [3])], 300)
    specs = [spec(0, 30, 1e9, nmax=2)]  # arrives between ticks (step 5 min): quick start
    low = Replay(pool, specs, "dp", cadence="interval", step_min=5)
    high = Replay(pool, specs, "dp", cadence="interval", step_min=5, node_mapper=HighestId())
    low.run(), high.run()
    assert low.counters.quick_starts == high.counters.quick_starts == 1
    assert len(low.preemptions) == 0 and [p.nodes_lost for p in high.preemptions] == [1]


def test_a_mapper_giving_nodes_outside_the_pool_is_refused():
    class Bad(LowestId):
        def decision_map(self, state, result):
            return {t.id: (99,) for t in state.trainers}

    with pytest.raises(RuntimeError, match="not in the pool"):
        simulate(fixed_pool(4, 0, 100), [spec(0, 0, 1e9, nmax=2)], "dp", node_mapper=Bad())


def test_tfwd_rule_reaches_the_allocator_and_the_metric():
    seen = []
    dp = get("dp")

    def spy(state: AllocState, opts) -> AllocResult:
        seen.append((state.now_s, opts.tfwd_s))
        return dp(state, opts)

    # decisions at 0, 100, 200, 250 with T_fwd 40 except 500 at t=100; preemptions at 100 and 250 (node 3
    # leaves, rejoins at 200, leaves again at 250). A preemption within T_fwd after: 0 -> 100 > 40 no;
    # 100 -> 250 <= 500 yes; 200 -> 250 > 40 no; 250 -> none. So 1 of 4 (with 120 everywhere: 0 and 200 yes, 2 of 4).
    pool = hand_pool(4, [0, 1, 2, 3], [(100, [], [3]), (200, [3], []), (250, [], [3])], 400)
    rule = lambda state: 500.0 if state.now_s == 100 else 40.0  # noqa: E731
    res = simulate(pool, [spec(0, 0, 1e9)], spy, tfwd_rule=rule)
    assert [t for _, t in seen] == [40.0, 500.0, 40.0, 40.0]
    assert list(res.decisions["tfwd_s"]) == [40.0, 500.0, 40.0, 40.0]
    assert res.summary["preemption_within_tfwd_share"] == pytest.approx(1 / 4)
    const = simulate(pool, [spec(0, 0, 1e9)], "dp")
    assert list(const.decisions["tfwd_s"]) == [120.0] * 4  # default: AllocOptions.tfwd_s
    assert const.summary["preemption_within_tfwd_share"] == pytest.approx(2 / 4)
