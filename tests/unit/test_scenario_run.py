"""Scenario validation, run_scenario on the shipped Summit log, and the `planner simulate` CLI."""

from __future__ import annotations

import json
import shutil

import pytest

from planner.cli import main
from planner.errors import InputError
from planner.scenario.record import Scenario, run_scenario

KEYS = ("events", "decisions", "trainers_completed", "samples", "resource_node_hours",
        "utilization_efficiency", "mean_queue_s", "p95_queue_s", "mean_jct_s", "rescale_cost_samples",
        "preemption_cost_samples", "solve_s", "wall_s")


@pytest.fixture(scope="module")
def db(tmp_path_factory, summit_db):
    # a copy of the session's database (the shipped logs loaded once per test process)
    path = tmp_path_factory.mktemp("db") / "p.duckdb"
    shutil.copyfile(summit_db, path)
    return str(path)


@pytest.mark.parametrize("d,field", [
    ({"bogus": 1}, "bogus"),
    ({"pj_max": "x"}, "pj_max"),
    ({"pj_max": 0}, "pj_max"),
    ({"hours": -1}, "hours"),
    ({"pool": "cloud"}, "pool"),
    ({"pool": "fixed"}, "pool_size"),
    ({"allocator": "magic"}, "allocator"),
    ({"objective": "speed"}, "objective"),
    ({"cadence": "sometimes"}, "cadence"),
    ({"start": "yesterday"}, "start"),
    ({"bug_share": 1.5}, "bug_share"),
    ({"idle_during_solve": "maybe"}, "idle_during_solve"),
])
def test_from_dict_names_the_field(d, field):
    with pytest.raises(InputError) as e:
        Scenario.from_dict(d)
    assert f"field '{field}'" in str(e.value)


def test_from_dict_coerces_strings():
    sc = Scenario.from_dict({"pj_max": "12", "tfwd": "30", "pool_size": "", "idle_during_solve": "yes"})
    assert (sc.pj_max, sc.tfwd, sc.pool_size, sc.idle_during_solve) == (12, 30.0, None, True)
    assert Scenario.from_dict(sc.to_dict()) == sc


def test_fixed_pool_runs_without_a_database(tmp_path):
    seen = []
    res = run_scenario({"pool": "fixed", "pool_size": 100, "hours": 4, "workload": "diverse",
                        "count": 50, "db": str(tmp_path / "never.duckdb")}, progress=seen.append)
    assert not (tmp_path / "never.duckdb").exists()
    assert seen[-1] == 1.0 and all(k in res.summary for k in KEYS)
    assert res.summary["resource_node_hours"] == pytest.approx(400.0)


def test_log_window_on_the_summit_log(db):
    res = run_scenario({"db": db, "start": "2021-02-10 20:21:15", "hours": 1, "pool_size": 1024,
                        "allocator": "dp", "count": 50})
    s = res.summary
    assert s["log"] == "summit-2021" and s["pool_size"] == 1024
    assert s["window_start"] == "2021-02-10 20:21:15" and s["window_hours"] == pytest.approx(1.0)
    assert s["pool_events"] > 10 and s["decisions"] > 0 and s["samples"] > 0
    tl = res.timeline
    assert (tl["allocated_nodes"] <= tl["pool_nodes"]).all() and tl["pool_nodes"].max() <= 1024
    assert 0 < s["utilization_efficiency"] <= 1.2


def test_window_outside_the_log_is_an_input_error(db):
    with pytest.raises(InputError, match="start"):
        run_scenario({"db": db, "start": "2022-01-01", "hours": 1})


def test_cli_json_and_exit_codes(db, capsys, tmp_path):
    rc = main(["simulate", "--db", db, "--start", "2021-02-10T20:21:15", "--hours", "0.5",
               "--pool-size", "256", "--allocator", "equal-share", "--tfwd", "60", "--pj-max", "5",
               "--count", "20", "--json", "--out", str(tmp_path / "o")])
    assert rc == 0
    s = json.loads(capsys.readouterr().out)
    assert all(k in s for k in KEYS) and s["pj_max"] == 5 and s["tfwd_s"] == 60.0
    assert set(s["solve_s"]) == {"mean", "median", "p95", "max"}
    assert (tmp_path / "o" / "timeline.csv").exists()
    assert main(["simulate", "--db", db, "--pool", "fixed", "--json"]) == 2
    assert "pool_size" in capsys.readouterr().err
    assert main(["simulate", "--db", db, "--workload", str(tmp_path / "none.csv"), "--json"]) == 2
