"""The BFTrainer study's Fig. 10 / Fig. 14 / AlexNet experiments (planner.studies.bftrainer), hand-computed on
a made-up stored result: what each experiment compares and the gap it closes (nothing replayed)."""

from __future__ import annotations

import pytest

from planner.studies import bftrainer as b


def pj_row(pj, alloc_nh, pool_nh, samples_g, run_h, idle, alex=0.4, dense=5.0, completed=600):
    return {"objective": "throughput", "pj_max": pj, "completed": completed, "samples": samples_g * 1e9,
            "allocated_node_hours": alloc_nh, "resource_node_hours": pool_nh,
            "node_hours_per_g_samples": alloc_nh / samples_g, "unoccupied_share": idle, "mean_run_h": run_h,
            "per_model_run_h": {"AlexNet": alex, "DenseNet": dense}}


def result():
    return {"setting": {"pj_maxes": [5, 35]},
            # the same pool (1500 node-hours) at both: Eqn 17 per G 150 -> 120 (-20 %); allocated per G
            # 127.5 -> 120 (-5.9 %, ours); runtime 1 -> 4 h (+300 %)
            "pjmax": [pj_row(5, 1275.0, 1500.0, 10.0, 1.0, 0.15), pj_row(35, 1500.0, 1500.0, 12.5, 4.0, 0.0),
                      # the scaling-efficiency objective: Eqn 17 per G 150 -> 125 (-16.7 %), runtime 1 -> 5 h
                      {**pj_row(5, 1275.0, 1500.0, 10.0, 1.0, 0.15), "objective": "scaling-efficiency"},
                      {**pj_row(35, 1500.0, 1500.0, 12.0, 5.0, 0.0), "objective": "scaling-efficiency"}],
            "periods": {"dp": [{"U": 0.9}, {"U": 1.0}]},  # mean 0.95
            "experiment_runs": [
                {"experiment": "pj_max 5", "allocator": "dp", "periods_U": [0.8, 0.9, None],
                 "trainers_completed": 700},  # mean 0.85
                {"experiment": "complete 5", "pj_max": 5, "trainers": 10, "completed": 10, "hours": 338.0,
                 "last_end_h": 250.0, "allocated_node_hours_to_last_end": 2600.0,
                 "pool_node_hours_to_last_end": 3000.0, "mean_run_h": 1.0,
                 "per_model_run_h": {"AlexNet": 0.45, "DenseNet": 4.5}},
                {"experiment": "complete 35", "pj_max": 35, "trainers": 10, "completed": 10, "hours": 338.0,
                 "last_end_h": 200.0, "allocated_node_hours_to_last_end": 2550.0,
                 "pool_node_hours_to_last_end": 2550.0, "mean_run_h": 6.0,
                 "per_model_run_h": {"AlexNet": 0.5, "DenseNet": 40.0}},
                # rescaling costs doubled at both ends: Eqn 17 per G 160 -> 120 (-25 %), runtime 1.2 -> 6 h
                {**pj_row(5, 1260.0, 1500.0, 9.375, 1.2, 0.16, alex=0.3, completed=500), "experiment": "costs x2"},
                {**pj_row(35, 1500.0, 1500.0, 12.5, 6.0, 0.0, completed=550), "experiment": "costs x2, Pj_max 35"},
            ]}


def test_fig10_compares_the_mean_u_per_period_with_the_papers_80_percent():
    (e,) = b.periods_experiments(result())
    assert (e["before"], e["after"], e["paper"]) == (0.95, 0.85, 0.8)
    assert e["closes"] == pytest.approx(0.1 / 0.15, abs=1e-3)  # 0.95 -> 0.85 of 0.95 -> 0.80


def test_fig14_row_reports_the_papers_integral_eqn17_and_keeps_ours_as_a_secondary_figure():
    r = b.fig14_row(result(), "our setting")
    # Eqn 17 (the pool's node-hours) per G samples: 150 -> 120 = -20 %; runtime +300 %: both at least half
    # the paper's -28 / +442 (tolerance -14 / +221)
    assert r["value"] == "-20.0 / +300" and r["reproduced"] == "yes"
    assert "Eqn 17" in r["metric"]
    assert "Ours, not the paper's metric: the node-hours allocated to Trainers per G samples, 127.5 and 120.0, " \
           "-5.9 %" in r["why"]
    # the paper's held node-hours: 0.72 / 0.876 - 1 = -17.8 %
    assert "its held node-hours per sample fall 18 % (0.72 / 0.876), ours 5.9 %" in r["why"]
    # doubled costs close 62.5 % of the rest (explains), the window moves away; the window explains the runtime
    assert "What closes the rest: explained by experiment (one change each from our setting): rescaling costs " \
           "doubled" in r["why"]
    assert "The other changes closed less than half of the gap: a 338 h window" in r["why"]
    assert "Average runtime (paper +442 %; ours the Trainers completed in the week, 600 and 600): Explained" in r["why"]
    # the window's own unoccupied share at Pj_max 5: 1 - 2600 / 3000; allocated 2600 -> 2550
    assert "13.3% of the pool is unoccupied at Pj_max 5 up to the last end" in r["why"]
    assert "the node-hours allocated fall 1.9 %" in r["why"]


def test_fig14_experiments_are_one_change_each_from_the_eqn17_setting():
    ints, runs = b.integral_experiments(result())
    by = {e["key"]: e for e in ints + runs}
    assert set(by) == {"all complete, integral", "all complete, runtime", "costs x2, integral", "costs x2, runtime",
                       "objective scaling-efficiency, integral", "objective scaling-efficiency, runtime"}
    o = by["objective scaling-efficiency, integral"]  # the stored sweep's other objective: 150 -> 125
    assert (o["before"], o["after"]) == (-20.0, pytest.approx(-16.7)) and o["closes"] < 0
    assert by["objective scaling-efficiency, runtime"]["after"] == 400.0  # 1 -> 5 h
    w = by["all complete, integral"]  # Eqn 17 up to the last end, the same total work: 3000 -> 2550
    assert (w["before"], w["after"], w["paper"]) == (-20.0, -15.0, -28.0)
    assert w["closes"] == pytest.approx(5 / -8, abs=1e-3)  # moves away from the paper's
    c = by["costs x2, integral"]  # the change at both ends: 160 -> 120
    assert (c["before"], c["after"]) == (-20.0, -25.0) and c["closes"] == pytest.approx(5 / 8, abs=1e-3)
    assert "at Pj_max 5 and 35" in c["change"]
    r = by["all complete, runtime"]  # mean runtime over all: 1 -> 6 h (+500 %), ours +300 %
    assert (r["before"], r["after"], r["paper"]) == (300.0, 500.0, 442.0)
    assert r["closes"] == pytest.approx(200 / 142, abs=1e-3)
    assert "every Trainer completes" in r["change"]
    cr = by["costs x2, runtime"]  # 1.2 -> 6 h: +400 %
    assert cr["after"] == 400.0 and cr["closes"] == pytest.approx(100 / 142, abs=1e-3)


def test_alexnet_runtime_experiment_uses_tab3_at_pj_max_5():
    ex = {e["key"]: e for e in b.alexnet_experiments(result())}
    # the Pj_max 5 runs are Fig. 12 experiments; the Pj_max 35 end of Fig. 14's change is not
    assert set(ex) == {"AlexNet, complete 5", "AlexNet, costs x2"}
    e = ex["AlexNet, complete 5"]
    assert (e["before"], e["after"], e["paper"]) == (0.4, 0.45, 0.5) and e["unit"] == "h"
    assert e["closes"] == pytest.approx(0.5)
    assert ex["AlexNet, costs x2"]["after"] == 0.3


def test_tab2_order_cycles_the_models_as_the_paper_lists_them_each_with_its_own_curve():
    base = b.diverse_specs(dict(count=9, epochs=1.0))
    tab2 = b.diverse_specs(dict(count=9, epochs=1.0, order="tab2"))
    assert [s.model for s in tab2] == ["AlexNet", "resnet18", "mnasnet1", "mobilenet", "shufflenet", "vgg16",
                                       "DenseNet", "AlexNet", "resnet18"]
    assert [s.model for s in base][:3] == ["AlexNet", "DenseNet", "mnasnet1"]  # by name
    # each Trainer keeps its arrival and work; its curve is its model's (Tab. 2: ResNet18 5.2k/s on one node,
    # DenseNet 57.8k/s on 64; the shipped curves are within 1 % of the table)
    assert [(s.submit_s, s.work_samples) for s in tab2] == [(s.submit_s, s.work_samples) for s in base]
    assert tab2[1].curve(1) == pytest.approx(5200.0, rel=0.01) and tab2[6].curve(64) == pytest.approx(57800.0, rel=0.01)
    with pytest.raises(ValueError, match="order"):
        b.diverse_specs(dict(count=2, order="paper"))


def test_alexnet_hpo_reading_places_the_papers_70_hours_between_two_pj_max():
    def run(pj, end_h, done=1000):
        return {"experiment": f"alexnet hpo {pj}", "pj_max": pj, "allocator": "dp", "trainers": 1000,
                "trainers_completed": done, "last_end_h": end_h, "periods_U": [0.5]}

    r = {"experiment_runs": [run(35, 80.4), run(5, 136.0), run(100, 63.6), run(20, 90.0, done=990)]}
    text = b.alexnet_hpo_reading(r)
    # sorted by Pj_max; a run in which not every trial completed is left out (no last end to compare)
    assert "all end by 136 / 80 / 64 h at Pj_max 5 / 35 / 100 (the paper's 70 h lies between Pj_max 35 and 100" \
           in text
    assert b.alexnet_hpo_reading({"experiment_runs": []}) == ""
    # not a Fig. 10 experiment, even with a U per period
    assert b.periods_experiments({"periods": {"dp": [{"U": 0.9}]}, "experiment_runs": r["experiment_runs"]}) == []


def test_pool_decisions_experiment_reaches_the_replay_and_runs_at_both_pj_max():
    from planner.replay.pool import fixed_pool

    # a fixed pool has no pool event: under decide_on "pool" nothing after the window's start is decided, so
    # the first Trainer (arrived at 0) reaches its work but never leaves and the others never start
    pool = fixed_pool(8, 0.0, 3600.0)
    knobs = {"count": 3, "epochs": 0.01}
    base = b._diverse_run((pool, "throughput", 2, knobs))
    exp = b._diverse_run((pool, "throughput", 2, {**knobs, "decide_on": "pool"}, "pool decisions"))
    assert base["completed"] == 3 and exp["completed"] == 0 and exp["experiment"] == "pool decisions"
    assert exp["unoccupied_share"] == pytest.approx(0.0)  # the finished Trainer holds all 8 nodes to the end
    keys = [t[1][-1] for t in b.experiment_tasks(pool, knobs) if t[0] == "diverse"]
    assert "pool decisions" in keys and "pool decisions, Pj_max 35" in keys


@pytest.mark.slow
def test_load_pool_reads_while_another_process_holds_the_store(summit_db, tmp_path):
    """`planner study bftrainer` beside a running app: the app's process holds the store open (to
    read), and the study's writable connection failed ('Conflicting lock'; seen with the app up); it
    now opens it read-only, as the app does, when the shipped log is in it."""
    import shutil
    import subprocess
    import sys

    path = tmp_path / "planner.duckdb"
    shutil.copy(summit_db, path)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from planner.store import db; "
                               f"con = db.connect({str(path)!r}, read_only=True); print('open', flush=True); "
                               "time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        pool = b.load_pool(1.0, db=path)
        assert pool.end_s - pool.start_s == pytest.approx(3600.0)
    finally:
        holder.kill()
        holder.wait()
