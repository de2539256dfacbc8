"""Idle and wait per user / group (planner.idle.job_views.by_label, `planner profile --by`), by hand.

SWF, machine 10 nodes, T = 1.7e9 s (fields 12 user, 13 group):
  J1 user 7 group 70, 6 nodes, submitted 0, runs 0-4 h
  J2 user 8 group 80, 8 nodes, submitted 1 h, runs 4-6 h (waits 3 h)
  J3 user 7 group 70, 2 nodes, submitted 2 h, runs 3-5 h (waits 1 h)
Busy 0-3 h 6, 3-4 h 8, 4-5 h 10, 5-6 h 8: idle 12 + 2 + 0 + 2 = 16 node-h. Each moment's idle goes
to the waiting jobs' users by requested nodes: 0-1 h nobody waits (4); 1-2 h J2 (4 -> user 8);
2-3 h J2 and J3, 8:2 (4 -> 3.2 user 8, 0.8 user 7); 3-4 h J2 (2 -> user 8); 4-6 h nobody (2).
user 8: 9.2, user 7: 0.8, no job waiting: 6. Used: user 7 6*4 + 2*2 = 28, user 8 8*2 = 16.
Waits: user 7 0 and 1 h (median 0.5 h), user 8 3 h.
"""

from __future__ import annotations

import json

import pytest

from planner import logs
from planner.idle import job_views
from planner.idle.window import Window

T = 1_700_000_000
H = 3600
SWF = "\n".join(["; MaxNodes: 10", "; MaxProcs: 10", f"; UnixStartTime: {T}",
                 f"1 0 0 {4 * H} 6 -1 -1 6 -1 -1 1 7 70 -1 -1 -1 -1 -1",
                 f"2 {H} {3 * H} {2 * H} 8 -1 -1 8 -1 -1 1 8 80 -1 -1 -1 -1 -1",
                 f"3 {2 * H} {H} {2 * H} 2 -1 -1 2 -1 -1 1 7 70 -1 -1 -1 -1 -1"]) + "\n"


@pytest.fixture
def con(mem_con, write_file):
    logs.ingest(mem_con, write_file("users.swf", SWF), name="users")
    return mem_con


def test_by_user_and_group_by_hand(con):
    assert job_views.labels_of(con, "users") == ["user", "group"]
    for by, a, b in (("user", "7", "8"), ("group", "70", "80")):
        df = job_views.by_label(con, Window("users"), by)
        d = df.set_index("name")
        assert d.loc[b, "idle_node_hours"] == pytest.approx(9.2)
        assert d.loc[a, "idle_node_hours"] == pytest.approx(0.8)
        assert d.loc[job_views.NO_WAIT, "idle_node_hours"] == pytest.approx(6.0)
        assert df["idle_node_hours"].sum() == pytest.approx(16.0)
        assert (d.loc[a, "used_node_hours"], d.loc[b, "used_node_hours"]) == pytest.approx((28.0, 16.0))
        assert (d.loc[a, "jobs_started"], d.loc[b, "jobs_started"]) == (2, 1)
        assert (d.loc[a, "wait_median_h"], d.loc[b, "wait_median_h"]) == pytest.approx((0.5, 3.0))
        assert list(df["name"][:1]) == [b]  # most idle first
    assert job_views.by_label(con, Window("users"), "partition") is None  # the log names no partitions


def test_profile_by_user_cli(tmp_path, write_file, capsys):
    from planner import cli
    from planner.store import db

    path = tmp_path / "u.duckdb"
    c = db.connect(path)
    logs.ingest(c, write_file("u.swf", SWF), name="users")
    c.close()
    assert cli.main(["profile", "--db", str(path), "--log", "users", "--by", "user", "--json"]) in (0, None)
    d = json.loads(capsys.readouterr().out)
    rows = {r["name"]: r for r in d["by_label"]}
    assert d["by"] == "user" and rows["8"]["idle_node_hours"] == pytest.approx(9.2)
    assert rows[job_views.NO_WAIT]["wait_median_h"] is None
