"""The idle split (planner.idle.split) on two hand-made logs, every figure counted by hand.

1. A node-state log with states (time,node,state), 5 nodes over 4 h (T = 1.7e9 s):
     a: idle 0-1 h, allocated 1-4 h            -> idle 1, allocated 3
     b: allocated 0-2 h, DRAIN 2-4 h           -> allocated 2, drained 2
     c: down 0-1 h, idle 1-4 h                 -> down 1, idle 3
     d: RESV 0-3 h, idle 3-4 h                 -> reserved 3, idle 1
     e: MAINT 0-2 h, IDLE+DRAIN 2-4 h          -> planned down 2, drained 2
   total 20 node-h: allocated 5, idle 5, down 1, planned down 2, reserved 3, drained 4.

2. An SWF job log, machine 10 nodes, 20 h:
     J1 2 nodes 0-8 h; J2 7 nodes 2-8 h; J3 9 nodes submitted at 7 h, started at 11 h, ends 20 h.
   busy: 0-2 h 2, 2-8 h 9, 8-11 h 0 (no job running while J3 waits: an outage), 11-20 h 9.
   idle node-h: 0-2 h 16 (the warm-up: 80 % idle against 10 % after), 2-8 h 6, 8-11 h 30
   (outage), 11-20 h 9: 61 in all; allocated 139; total 200; harvestable 6 + 9 = 15.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from planner import logs
from planner.idle import fragments, split
from planner.idle.states import STATES, state_of
from planner.idle.window import Window
from tests.helpers import OUTAGE_SWF as JOB_LOG
from tests.helpers import OUTAGE_T0 as T

H = 3600

STATE_LOG = "\n".join([
    "time,node,state",
    f"{T},a,idle", f"{T},b,allocated", f"{T},c,down", f"{T},d,RESV", f"{T},e,MAINT",
    f"{T + H},a,allocated", f"{T + H},c,idle",
    f"{T + 2 * H},b,drain", f"{T + 2 * H},e,IDLE+DRAIN",
    f"{T + 3 * H},d,idle",
    f"{T + 4 * H},a,allocated",  # the last row closes the log at 4 h (a repeat: no change)
]) + "\n"

@pytest.fixture
def state_con(mem_con, write_file):
    logs.ingest(mem_con, write_file("states.csv", STATE_LOG), name="states")
    return mem_con


@pytest.fixture
def job_con(mem_con, write_file):
    logs.ingest(mem_con, write_file("jobs.swf", JOB_LOG), name="jobs")
    return mem_con


def test_state_words():
    assert state_of("MIXED") == "allocated" and state_of("idle*") == "down" and state_of("drng") == "allocated"
    assert state_of("IDLE+DRAIN") == "drained" and state_of("MIXED+DRAIN") == "allocated"
    assert state_of("maint") == "planned_down" and state_of("resv") == "reserved" and state_of("down~") == "down"
    assert state_of("sleeping") is None
    assert STATES == ("allocated", "idle", "down", "planned_down", "reserved", "drained")


def test_node_state_log_split_by_hand(state_con):
    s = split.split(state_con, Window("states"))
    nh = s["node_hours"]
    assert s["source"] == "states" and s["span_h"] == pytest.approx(4.0) and s["nodes"] == 5
    assert nh["allocated"] == pytest.approx(5.0)
    assert nh["idle"] == pytest.approx(5.0)
    assert nh["down"] == pytest.approx(1.0)
    assert nh["planned_down"] == pytest.approx(2.0)
    assert nh["reserved"] == pytest.approx(3.0)
    assert nh["drained"] == pytest.approx(4.0)
    assert nh["warmup"] == 0.0
    assert s["total_node_hours"] == pytest.approx(20.0) == pytest.approx(sum(nh.values()))
    assert s["harvestable_node_hours"] == pytest.approx(5.0) and s["outages"] == []
    # every view counts only `idle` as idle: the fragments summary agrees
    assert fragments.summary(state_con, Window("states"))["idle_node_hours"] == pytest.approx(5.0)
    # a window 1-3 h and the first 3 nodes (a, b, c): a allocated 2, b allocated 1 + drained 1, c idle 2
    w = split.split(state_con, Window("states", start=T + H, hours=2, pool_size=3))["node_hours"]
    assert (w["allocated"], w["drained"], w["idle"], w["down"]) == pytest.approx((3.0, 1.0, 2.0, 0.0))


def test_unknown_state_names_its_line(mem_con, write_file):
    from planner.errors import InputError

    bad = write_file("bad.csv", f"time,node,state\n{T},a,idle\n{T + 5},a,sleeping\n")
    with pytest.raises(InputError, match=r"line 3.*sleeping"):
        logs.ingest(mem_con, bad)


def test_job_log_outage_and_warmup_by_hand(job_con):
    s = split.split(job_con, Window("jobs"))
    nh = s["node_hours"]
    assert s["source"] == "detected" and s["span_h"] == pytest.approx(20.0)
    assert s["idle_node_hours"] == pytest.approx(61.0)
    assert nh["allocated"] == pytest.approx(139.0)
    assert s["outage_node_hours"] == pytest.approx(30.0) == pytest.approx(nh["planned_down"])
    assert s["warmup_node_hours"] == pytest.approx(16.0) == pytest.approx(nh["warmup"])
    assert nh["idle"] == pytest.approx(15.0) == pytest.approx(s["harvestable_node_hours"])
    assert sum(nh.values()) == pytest.approx(200.0)
    (o,) = s["outages"]
    assert (o["start_s"], o["end_s"], o["reason"], o["waiting_jobs"]) == (T + 8 * H, T + 11 * H, "jobs waiting", 1)
    assert s["outage_hours"] == pytest.approx(3.0)
    wu = s["warmup"]
    assert wu["detected"] and wu["end_s"] == T + 2 * H and wu["idle_share_during"] == pytest.approx(0.8)
    # the operator puts them back
    assert split.split(job_con, Window("jobs"), include_outages=True)["harvestable_node_hours"] == pytest.approx(45.0)
    both = split.split(job_con, Window("jobs"), include_outages=True, include_warmup=True)
    assert both["harvestable_node_hours"] == pytest.approx(61.0)


def test_views_and_replays_use_harvestable_capacity(job_con):
    # the characterization (Idle page, `planner fragments`) and the pool a replay consumes
    assert fragments.summary(job_con, Window("jobs"))["idle_node_hours"] == pytest.approx(15.0)
    assert fragments.summary(job_con, Window("jobs"), include_outages=True)["idle_node_hours"] == pytest.approx(45.0)
    assert fragments.summary(job_con, Window("jobs"), harvest=False)["idle_node_hours"] == pytest.approx(61.0)
    tr = fragments.pool_trace(job_con, Window("jobs"))
    assert len(tr.initial_idle) == 0  # the warm-up gives nothing
    wd = fragments.window_data(job_con, Window("jobs"))
    assert list(zip(wd.st - T, wd.sn)) == [(0, 0), (2 * H, 1), (8 * H, 0), (11 * H, 1)]
    # a pool of 5 nodes: N_K = floor(N * 5 / 10 + 0.5): 1 -> 1 outside; 0 in warm-up and outage
    wd5 = fragments.window_data(job_con, Window("jobs", pool_size=5))
    assert list(zip(wd5.st - T, wd5.sn)) == [(0, 0), (2 * H, 1), (8 * H, 0), (11 * H, 1)]
    assert fragments.window_data(job_con, Window("jobs", pool_size=5), harvest=False).sn.tolist() == [4, 1, 5, 1]


def test_a_window_with_no_start_begins_after_the_warmup(job_con):
    # `planner simulate --log jobs --hours 4` (no start): the app's default, after the 2-h warm-up,
    # not the log's first hours, whose idle nodes are not harvestable (an empty pool)
    wd = fragments.window_data(job_con, Window("jobs", hours=4))
    assert (wd.t0 - T, wd.t1 - T) == (2 * H, 6 * H)
    assert list(zip(wd.st - T, wd.sn)) == [(2 * H, 1)]
    # counting the warm-up as harvestable, or every idle node, starts at the log's start again
    assert fragments.window_data(job_con, Window("jobs", hours=4), include_warmup=True).t0 == T
    assert fragments.window_data(job_con, Window("jobs", hours=4), harvest=False).t0 == T
    # a start given is kept; the whole log (no length) still starts at the log's start
    assert fragments.window_data(job_con, Window("jobs", start=T + H, hours=4)).t0 == T + H
    assert fragments.window_data(job_con, Window("jobs")).t0 == T


def test_exact_job_log_masks_nodes(mem_con, write_file):
    # the same schedule with node lists (Slurm sacct): 10 nodes n[0-9]; the outage and the warm-up
    # take every idle node out of the pool and give them back after
    rows = ["JobID|Submit|Start|End|NNodes|NodeList"]
    iso = lambda s: np.datetime_as_string(np.datetime64(int(T + s), "s"))  # noqa: E731
    rows.append(f"1|{iso(0)}|{iso(0)}|{iso(8 * H)}|2|n[0-1]")
    rows.append(f"2|{iso(2 * H)}|{iso(2 * H)}|{iso(8 * H)}|7|n[2-8]")
    rows.append(f"3|{iso(7 * H)}|{iso(11 * H)}|{iso(20 * H)}|9|n[0-8]")
    rows.append(f"4|{iso(0)}|{iso(0)}|{iso(60)}|1|n9")  # names the 10th node (busy a minute)
    logs.ingest(mem_con, write_file("jobs.sacct", "\n".join(rows) + "\n"), name="exact", machine_nodes=10)
    raw = split.split(mem_con, Window("exact"))
    assert raw["outage_node_hours"] == pytest.approx(30.0)
    tr = fragments.pool_trace(mem_con, Window("exact"))
    s = fragments.summary(mem_con, Window("exact"))
    assert s["idle_node_hours"] == pytest.approx(raw["harvestable_node_hours"]) == pytest.approx(15.0)
    assert tr.nodes == 10


def test_cli_fragments_json_has_the_split(job_con, tmp_path, write_file, capsys):
    from planner import cli
    from planner.store import db

    path = tmp_path / "p.duckdb"
    con = db.connect(path)
    logs.ingest(con, write_file("jobs2.swf", JOB_LOG), name="jobs")
    con.close()
    assert cli.main(["fragments", "--db", str(path), "--log", "jobs", "--json"]) in (0, None)
    d = json.loads(capsys.readouterr().out)
    assert d["harvestable_node_hours"] == pytest.approx(15.0) and d["outage_node_hours"] == pytest.approx(30.0)
    assert d["warmup"]["detected"] and d["warmup"]["hours"] == pytest.approx(2.0)
    assert d["split"]["node_hours"]["planned_down"] == pytest.approx(30.0)


def test_by_period_days_by_hand(job_con):
    # the log starts at T = 2023-11-14 22:13:20 UTC: day 1 holds its first 1 h 46 m 40 s (all
    # warm-up: 8 idle nodes, none harvestable), day 2 the other 18 h 13 m 20 s
    d = split.by_period(job_con, Window("jobs"), "day")
    first_h = (24 * H - (T % (24 * H))) / H
    assert d["hours"].tolist() == pytest.approx([first_h, 20 - first_h])
    assert d["idle_node_hours"].tolist() == pytest.approx([8 * first_h, 61 - 8 * first_h])
    assert d["harvestable_node_hours"].tolist() == pytest.approx([0.0, 15.0])
    assert str(d["period"].iloc[1]) == "2023-11-15 00:00:00+00:00"
    w = split.by_period(job_con, Window("jobs"), "week", tz="Asia/Tokyo")  # 2023-11-15 07:13 in Tokyo: a Wednesday
    assert len(w) == 1 and str(w["period"].iloc[0]) == "2023-11-13 00:00:00+09:00"
    assert w["harvestable_node_hours"].iloc[0] == pytest.approx(15.0)
    m = split.by_period(job_con, Window("jobs"), "month")  # both days in November 2023: one month, from its 1st
    assert len(m) == 1 and str(m["period"].iloc[0]) == "2023-11-01 00:00:00+00:00"
    assert m["hours"].iloc[0] == pytest.approx(20.0) and m["harvestable_node_hours"].iloc[0] == pytest.approx(15.0)


def test_operator_views_count_harvestable_capacity(job_con):
    # the hour x weekday and calendar views read N(t) through q_steps: outage and warm-up are 0
    from planner.idle import views

    sp = views.span(job_con, Window("jobs"))
    assert views.q_idle_node_hours(job_con, sp) == pytest.approx(15.0)
    hw = views.q_hourly(job_con, sp)
    assert hw["node_s"].sum() / H == pytest.approx(15.0) and hw["covered_s"].sum() / H == pytest.approx(20.0)


@pytest.mark.slow  # loads the shipped Theta 2022 log (~24,000 jobs)
def test_theta_2022_split_printed_by_the_cli(tmp_path, capsys):
    """Issue 25's "Must show": the shipped Theta 2022 SWF's split by `planner fragments --json`: the
    harvestable and outage node-hours and the warm-up as fields of its JSON (the README's figures)."""
    from planner import cli
    from planner.store import db

    path = tmp_path / "p.duckdb"
    db.connect(path).close()  # an empty database: the shipped log is loaded from the package on first use
    assert cli.main(["fragments", "--db", str(path), "--log", "theta-2022", "--json"]) in (0, None)
    d = json.loads(capsys.readouterr().out)
    sp = d["split"]
    assert sp["idle_node_hours"] == pytest.approx(9.12e6, rel=0.01)
    assert d["outage_node_hours"] == pytest.approx(1.87e6, rel=0.01) and len(sp["outages"]) == 38
    assert d["outage_hours"] == pytest.approx(428.8, abs=0.1)
    assert d["harvestable_node_hours"] == pytest.approx(
        sp["idle_node_hours"] - d["outage_node_hours"] - sp["warmup_node_hours"], rel=1e-6)
    assert d["warmup"]["detected"] and d["warmup"]["hours"] == pytest.approx(31, abs=1)
