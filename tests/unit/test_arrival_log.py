"""Arrival "log": Trainers arrive when a job log's jobs were submitted (planner.workload.generators.
rearrive, planner.scenario.record.log_arrivals), counted by hand.

The SWF log (machine 10 nodes, T = 1.7e9 s) has jobs submitted at 0, 2 h, 7 h and 7.5 h. A window
from T + 1 h of 10 h holds the submissions at 2 h, 7 h and 7.5 h: 1 h, 6 h and 6.5 h after its
start. Five hpo Trainers: the first three arrive then, the other two are not submitted.
"""

from __future__ import annotations

import pytest

from planner import logs
from planner.errors import InputError
from planner.scenario.record import Scenario, build_pool, build_workload, run_scenario
from planner.workload.generators import rearrive

T = 1_700_000_000
H = 3600

JOB_LOG = "\n".join([
    "; MaxNodes: 10", "; MaxProcs: 10", f"; UnixStartTime: {T}",
    f"1 0 0 {8 * H} 2 -1 -1 2 -1 -1 1 1 1 1 1 1 -1 -1",
    f"2 {2 * H} 0 {6 * H} 7 -1 -1 7 -1 -1 1 1 1 1 1 1 -1 -1",
    f"3 {7 * H} {4 * H} {9 * H} 9 -1 -1 9 -1 -1 1 1 1 1 1 1 -1 -1",
    f"4 {int(7.5 * H)} 0 {H} 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1",
]) + "\n"


@pytest.fixture
def job_con(mem_con, write_file):
    logs.ingest(mem_con, write_file("jobs.swf", JOB_LOG), name="jobs")
    return mem_con


def test_rearrive_log_takes_the_submissions_in_order():
    from planner.workload.generators import make_workload

    specs = make_workload("hpo", count=3)
    out = rearrive(specs, "log", log_times=[50.0, 10.0])
    assert [s.submit_s for s in out] == [10.0, 50.0] and [s.id for s in out] == [specs[0].id, specs[1].id]
    with pytest.raises(InputError, match="job log") as e:
        rearrive(specs, "log")
    assert e.value.field == "arrival"


def test_log_arrivals_in_the_window_by_hand(job_con):
    sc = Scenario.from_dict({"log": "jobs", "start": str(T + H), "hours": 10, "workload": "hpo", "count": 5,
                             "arrival": "log", "include_outages": True})
    pool = build_pool(sc, job_con)
    assert pool.start_s == T + H
    specs = build_workload(sc, pool, job_con)
    assert [s.submit_s for s in specs] == [1 * H, 6 * H, 6.5 * H]
    res = run_scenario(sc, con=job_con)
    assert len(res.trainers) == 3
    assert sorted(res.trainers["submit_s"].tolist()) == [1 * H, 6 * H, 6.5 * H]


def test_log_arrivals_refuse_a_node_log(tiny_con):
    sc = Scenario.from_dict({"log": "tiny", "hours": 1, "arrival": "log", "count": 2})
    with pytest.raises(InputError, match="node log") as e:
        run_scenario(sc, con=tiny_con)
    assert e.value.field == "arrival"


def test_cli_simulate_arrival_log(tmp_path, write_file, capsys):
    import json

    from planner import cli
    from planner.store import db

    path = tmp_path / "a.duckdb"
    con = db.connect(path)
    logs.ingest(con, write_file("jobs2.swf", JOB_LOG), name="jobs")
    con.close()
    assert cli.main(["simulate", "--db", str(path), "--log", "jobs", "--start", str(T + H), "--hours", "10",
                     "--count", "5", "--arrival", "log", "--include-outages", "--bound", "none", "--json"]) in (0, None)
    d = json.loads(capsys.readouterr().out)
    d = d.get("summary", d)
    assert d["trainers_arrived"] == 3
