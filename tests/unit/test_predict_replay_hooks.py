"""The survival model inside replays (planner.predict.replay_hooks hooks), scenarios, CLI alias, figures, page."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from planner.errors import InputError
from planner.idle.window import Window
from planner.predict import replay_hooks
from planner.predict import survival as S
from planner.replay.pool import PoolTrace, fixed_pool
from planner.replay.simulator import simulate
from planner.scenario.record import Scenario, run_scenario
from planner.workload.generators import make_workload
from tests.helpers import synthetic_fragments


def trace_of(fr: S.Fragments, t_from: float) -> PoolTrace:
    """The pool trace of the fragments from t_from on (the window after a history)."""
    init = np.unique(fr.node[(fr.start <= t_from) & (fr.end > t_from)])
    ev = sorted([(s, k, 1) for k, s in zip(fr.node, fr.start) if s > t_from] +
                [(e, k, 0) for k, e, c in zip(fr.node, fr.end, fr.closed) if c and e > t_from])
    times, joins, leaves = [], [], []
    for t, k, j in ev:
        if not times or times[-1] != t:
            times.append(t), joins.append([]), leaves.append([])
        (joins if j else leaves)[-1].append(k)
    return PoolTrace(log="syn", start_s=t_from, end_s=fr.t1, nodes=fr.nodes, initial_idle=init,
                     times=np.array(times), joins=[np.array(x, np.int64) for x in joins],
                     leaves=[np.array(x, np.int64) for x in leaves], derived=False)


class Watch:
    """NodeMapper around PredictedNodes: every map keeps the allocator's counts, no migration."""

    def __init__(self, inner):
        self.inner, self.maps, self.moves = inner, 0, 0

    def decision_map(self, state, result):
        out = self.inner.decision_map(state, result)
        pool = set(state.pool)
        for t in state.trainers:
            new, cur = set(out.get(t.id, ())), pool & set(t.current)
            assert len(new) == result.counts.get(t.id, 0)
            assert new <= cur or cur <= new  # only shrinks (a subset) or only grows (a superset)
            self.moves += bool(cur) and new != cur  # a Trainer holding nodes changed: the branch that matters
        self.maps += 1
        return out

    def pick_free(self, free, k, now_s):
        return self.inner.pick_free(free, k, now_s)


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
@pytest.mark.parametrize("cadence", ["events", "interval"])
def test_predicted_choice_in_a_replay_keeps_counts_and_never_migrates(cadence):
    fr = synthetic_fragments(seed=5, n_nodes=40, hours=30)
    cut = fr.t0 + 20 * 3600
    model = S.fit(fr, cut_s=cut, step_s=300)
    pool = trace_of(fr, cut)
    specs = make_workload("hpo", seed=0, count=60, interarrival_s=120)
    pred = replay_hooks.IdlePredictor(model, pool)
    w = Watch(replay_hooks.PredictedNodes(pred))
    res = simulate(pool, specs, allocator="dp", pj_max=6, cadence=cadence, node_mapper=w,
                   tfwd_rule=replay_hooks.AdaptiveTfwd(copy.deepcopy(pred)), check=True)
    assert w.maps == len(res.decisions) > 10
    assert w.moves > 0  # the no-migration check ran on Trainers that held nodes and changed
    assert res.decisions["tfwd_s"].between(replay_hooks.TFWD_MIN_S, replay_hooks.TFWD_MAX_S).all()
    assert res.decisions["tfwd_s"].nunique() > 1  # it adapts


@pytest.mark.slow  # 4.4 s in the default run (two replays): the slow tier keeps the README's command under a minute
def test_same_counts_as_lowest_id_at_the_first_decisions():
    """Both rules see the same states until the first node leaves a Trainer: same counts."""
    fr = synthetic_fragments(seed=6, n_nodes=30, hours=26)
    cut = fr.t0 + 24 * 3600
    model = S.fit(fr, cut_s=cut, step_s=300)
    pool = trace_of(fr, cut)
    specs = make_workload("hpo", seed=0, count=20, interarrival_s=60)
    a = simulate(pool, specs, allocator="dp", pj_max=4)
    b = simulate(pool, specs, allocator="dp", pj_max=4,
                 node_mapper=replay_hooks.PredictedNodes(replay_hooks.IdlePredictor(model, pool)))
    n = min(len(a.decisions), len(b.decisions), 5)
    assert n == 5  # the check below must compare decisions, not pass on none
    assert (a.decisions["allocated_nodes"][:n].to_numpy() == b.decisions["allocated_nodes"][:n].to_numpy()).all()


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_replays_with_the_predictor_are_identical_with_a_seed(summit_con):
    kw = dict(log="summit-2021", start="2021-02-21 00:00:00", hours=2.0, pool_size=256, count=40,
              tfwd_rule="adaptive", node_choice="predicted", seed=3)
    a = run_scenario(Scenario.from_dict(kw), con=summit_con)
    b = run_scenario(Scenario.from_dict(kw), con=summit_con)
    assert a.summary["tfwd_rule"] == "adaptive" and a.summary["node_choice"] == "predicted"
    a.summary.pop("wall_s"), b.summary.pop("wall_s")
    for k in ("solve_s",):
        a.summary.pop(k), b.summary.pop(k)
    assert a.summary == b.summary
    assert a.decisions["tfwd_s"].to_list() == b.decisions["tfwd_s"].to_list()


def test_tfwd_adaptive_alias_and_refusals(summit_con):
    sc = Scenario.from_dict({"tfwd": "adaptive"})
    assert sc.tfwd_rule == "adaptive" and sc.tfwd == 120.0
    with pytest.raises(InputError, match="node_choice"):
        Scenario.from_dict({"node_choice": "random"})
    with pytest.raises(InputError, match="log pool"):
        replay_hooks.hooks(summit_con, Window("summit-2021"), fixed_pool(8, 0.0, 3600.0), "adaptive")
    from planner.idle import fragments as F

    pool = F.pool_trace(summit_con, Window("summit-2021", hours=1.0, pool_size=64))  # starts at the log's start
    with pytest.raises(InputError, match="before the window") as e:
        replay_hooks.hooks(summit_con, Window("summit-2021", pool_size=64), pool, "fixed", "predicted")
    assert "\n" not in str(e.value)


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_figures_of_the_idle_page_section():
    from appkit import survival_view as V
    from planner.predict import evaluate as E

    fr = synthetic_fragments(seed=1)
    figs, cal = E.evaluate(fr, step_s=300, max_rows=3000, test_rows=2000)
    m = S.fit(fr, cut_s=figs["cut_s"], step_s=300, max_rows=3000)
    cur = S.curves(m)
    assert set(cur.model) == {"km", "cox"}
    assert (cur.groupby(["model", "age_s"]).survival.apply(lambda s: (np.diff(s.to_numpy()) <= 1e-12).all())).all()
    f1 = V.curves_figure({"syn": cur})
    f2 = V.calibration_figure({"syn": cal})
    assert len(f1.data) == 6 and len(f2.data) == 4  # 3 ages x 2 models; 3 predictors + diagonal
    assert list(V.figures_table(figs).predictor) == [V.MODEL_NAMES[k] for k in E.MODELS]


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_cli_tfwd_adaptive_and_a_one_line_refusal(summit_db, capsys):
    import json

    from planner import cli

    base = ["simulate", "--db", str(summit_db), "--start", "2021-02-22 00:00:00", "--hours", "1",
            "--pool-size", "128", "--count", "20", "--json"]
    assert cli.main([*base, "--tfwd", "adaptive", "--node-choice", "predicted"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tfwd_rule"] == "adaptive" and out["node_choice"] == "predicted"
    assert cli.main([*base[:-1], "--pool", "fixed", "--node-choice", "predicted", "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert "log pool" in err and "\n" not in err


@pytest.mark.slow  # 12 s under load (the Cox fit): the slow tier
def test_node_survival_tfwd_is_the_median_of_each_nodes_own_prediction():
    # a fitted model on synthetic fragments; T_fwd of tfwd_rule node-survival, recomputed by hand
    fr = synthetic_fragments(seed=3, n_nodes=12, hours=12)
    model = S.fit(fr, seed=0, max_rows=2000)
    t = fr.t0 + 0.6 * (fr.t1 - fr.t0)
    pred = replay_hooks.IdlePredictor(model, trace_of(fr, t))
    now = t + 300.0
    got = pred.node_tfwd_s(now)
    ids = np.flatnonzero(pred.idle)
    per = np.minimum(model.quantile_s(pred.scores(ids, now), 0.5), replay_hooks.TFWD_MAX_S)
    assert got == pytest.approx(min(max(float(np.median(per)), replay_hooks.TFWD_MIN_S), replay_hooks.TFWD_MAX_S))
    assert Scenario.from_dict({"tfwd_rule": "node-survival"}).tfwd_rule == "node-survival"
    with pytest.raises(InputError, match="tfwd_rule"):
        Scenario.from_dict({"tfwd_rule": "psychic"})
