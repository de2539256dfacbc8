"""Generic job CSV with a column mapping."""

from __future__ import annotations

import pytest

from planner import logs
from planner.errors import InputError
from planner.idle import fragments as F
from planner.idle.window import Window
from planner.paths import PHILLY_LOG

JOBS = """id,begin,finish,n,hosts,queued
j1,2021-01-01 00:00:00,2021-01-01 01:00:00,2,"h[1-2]",2020-12-31 23:00:00
j2,2021-01-01 00:30:00,2021-01-01 00:45:00,1,h3,
"""
MAP = {"start": "begin", "end": "finish", "nodes": "n", "submit": "queued", "job_id": "id"}


def test_counts_only(mem_con, write_file):
    r = logs.ingest(mem_con, write_file("j.csv", JOBS), mapping=MAP, machine_nodes=4)
    assert (r["format"], r["rows"], r["nodes"], r["node_identity"]) == ("csv", 2, 4, "derived")
    s = F.summary(mem_con, Window("j.csv"))
    assert s["idle_node_hours"] == pytest.approx(2 - 0.25)  # 4 nodes - 2 busy, minus 1 node 15 min
    jobs = mem_con.execute("SELECT job_id, submit_s IS NULL FROM jobs ORDER BY job_id").fetchall()
    assert jobs == [("j1", False), ("j2", True)]


def test_node_list_gives_exact_identity(mem_con, write_file):
    r = logs.ingest(mem_con, write_file("j.csv", JOBS), mapping={**MAP, "node_list": "hosts"})
    assert (r["nodes"], r["node_identity"]) == (3, "exact")
    s = F.summary(mem_con, Window("j.csv"))
    assert s["idle_node_hours"] == pytest.approx(0.75) and s["fragments"]["count"] == 2


def test_epoch_and_duration(mem_con, write_file):
    text = "t,d,g\n1000,60,2\n1030,60,1\n"
    r = logs.ingest(mem_con, write_file("e.csv", text), mapping={"start": "t", "duration": "d", "nodes": "g"})
    assert (r["nodes"], r["machine_nodes_from"], r["start"]) == (3, "max concurrent", "1970-01-01T00:16:40Z")


def test_default_column_names_and_missing_mapping(mem_con, write_file):
    r = logs.ingest(mem_con, write_file("d.csv", "start,end,nodes\n0,10,1\n5,20,2\n"))
    assert r["rows"] == 2 and r["format"] == "csv"
    with pytest.raises(InputError, match=r"p\.csv.*missing column 'start'"):
        logs.ingest(mem_con, write_file("p.csv", "a,b,c\n1,2,3\n"))
    with pytest.raises(InputError, match="mapping key"):
        logs.ingest(mem_con, write_file("q.csv", "a,b,c\n1,2,3\n"), mapping={"begin": "a"})


@pytest.mark.slow  # 0.8 s CPU measured in the default run: the slow tier
def test_philly(mem_con):
    r = logs.ingest(mem_con, PHILLY_LOG, mapping={"start": "timestamp", "duration": "duration",
                                                   "nodes": "num_gpus"})
    assert r["rows"] > 80_000 and r["kind"] == "jobs" and r["node_identity"] == "derived"


def test_cli_map_flags(tmp_path, write_file, capsys):
    import json

    from planner import cli
    from planner.commands import ingest as ingest_cmd
    from planner.logs import csvjobs

    assert ingest_cmd.MAP_KEYS == csvjobs.KEYS
    args = ["ingest", str(write_file("j.csv", JOBS)), "--db", str(tmp_path / "m.duckdb"), "--json",
            "--map-start", "begin", "--map-end", "finish", "--map-nodes", "n", "--map-node-list", "hosts",
            "--map-submit", "queued", "--map-job-id", "id"]
    assert cli.main(args) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["format"], r["rows"], r["nodes"], r["node_identity"]) == ("csv", 2, 3, "exact")
