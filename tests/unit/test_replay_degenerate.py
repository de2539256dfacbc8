"""Degenerate replays: no idle node at all, one node, the whole machine idle, many events at one
timestamp, no Trainers, a window outside the log. Each gives sensible numbers or a one-line
InputError (CLI exit 2), for every allocator where it matters."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from planner import allocators, cli, logs
from planner.errors import InputError
from planner.idle import fragments as F
from planner.idle.window import Window
from planner.scenario.record import Scenario, run_scenario
from planner.store import db

T0 = "2021-01-01 00:00:00"
ALL = allocators.names()


def node_log(rows: list[tuple[float, str, int]]) -> str:
    """rows of (seconds after 2021-01-01T00:00:00Z, node, idle) -> time,node,idle text."""
    out = ["time,node,idle"]
    for t, n, i in rows:
        out.append(f"{int(1609459200 + t)},{n},{i}")
    return "\n".join(out) + "\n"


@pytest.fixture
def load(mem_con, write_file):
    def _load(name: str, rows) -> str:
        logs.ingest(mem_con, write_file(f"{name}.csv", node_log(rows)), name=name)
        return name
    return _load


def replay(con, log, allocator="dp", hours=6.0, **kw):
    sc = Scenario(log=log, hours=hours, allocator=allocator, workload="hpo", count=kw.pop("count", 6),
                  interarrival_s=kw.pop("interarrival_s", 120.0), pj_max=kw.pop("pj_max", 4),
                  time_limit=5.0, **kw)
    res = run_scenario(sc, con=con)
    json.dumps(cli._clean(res.summary))  # the CLI's JSON: no NaN/inf, serializable
    return res


def check_invariants(res, pool_max: int):
    tl = res.timeline
    assert (tl["allocated_nodes"] <= tl["pool_nodes"]).all()
    assert tl["pool_nodes"].between(0, pool_max).all()
    assert set(res.decisions["status"]) <= set(allocators.base.STATUSES) if len(res.decisions) else True
    s = res.summary
    for key in ("utilization_efficiency", "allocated_share"):
        v = s.get(key)
        assert v is None or (math.isfinite(v) and v >= 0), (key, v)


# ---------------------------------------------------------------- no idle node at all

@pytest.mark.parametrize("allocator", ALL)
def test_no_idle_node_at_all(mem_con, load, allocator):
    log = load("busy", [(0, "a", 0), (0, "b", 0), (0, "c", 0), (6 * 3600, "a", 0)])
    tr = F.pool_trace(mem_con, Window(log))
    assert len(tr.initial_idle) == 0 and tr.events == 0
    res = replay(mem_con, log, allocator, cadence="interval" if allocator == "horizon-milp" else "events")
    check_invariants(res, 3)
    s = res.summary
    assert (res.timeline["allocated_nodes"] == 0).all()
    assert s["trainers_completed"] == 0 and s["samples"] == 0
    assert s["resource_node_hours"] == 0
    assert s["utilization_efficiency"] in (None, 0.0)  # nothing to use: no ratio, not a crash
    assert s["fallback_decisions"] == 0  # an empty pool is an easy decision, not a solver failure


# ---------------------------------------------------------------- one node

@pytest.mark.parametrize("allocator", ["dp", "milp", "milp-node", "equal-share", "greedy"])
def test_one_node(mem_con, load, allocator):
    # idle 0-1 h, busy 1-2 h (preempting whoever runs), idle 2-6 h
    log = load("one", [(0, "a", 1), (3600, "a", 0), (7200, "a", 1), (6 * 3600, "a", 1)])
    res = replay(mem_con, log, allocator, count=3)
    check_invariants(res, 1)
    assert res.timeline["allocated_nodes"].max() == 1
    assert len(res.preemptions) == 1 and res.preemptions["nodes_lost"].iloc[0] == 1
    assert res.summary["resource_node_hours"] == pytest.approx(5.0)
    assert 0 < res.summary["allocated_share"] <= 1.0 + 1e-9
    assert res.summary["samples"] > 0


# ---------------------------------------------------------------- the whole machine idle

def test_whole_machine_idle(mem_con, load):
    rows = [(0, f"n{i:02d}", 1) for i in range(16)] + [(6 * 3600, "n00", 1)]
    log = load("allidle", rows)
    tr = F.pool_trace(mem_con, Window(log))
    assert len(tr.initial_idle) == 16 and tr.events == 0
    s = F.summary(mem_con, Window(log))
    assert s["idle_ratio"] == pytest.approx(1.0) and s["events"] == 0 and s["tfwd_suggestion_s"] is None
    res = replay(mem_con, log, "dp", count=40, interarrival_s=1.0, pj_max=4)
    check_invariants(res, 16)
    assert res.summary["pool_events"] == 0
    assert res.summary["resource_node_hours"] == pytest.approx(16 * 6.0)
    assert res.summary["allocated_share"] > 0.95  # saturated demand uses the idle machine
    assert len(res.preemptions) == 0


# ---------------------------------------------------------------- many events at one timestamp

def test_many_transitions_at_one_timestamp(mem_con, load):
    n = 400
    rows = [(0, f"n{i:03d}", 0) for i in range(n)]
    rows += [(600, f"n{i:03d}", 1) for i in range(n)]  # 400 rows at one time: one join event
    rows += [(1200, f"n{i:03d}", 0) for i in range(0, n, 2)]  # 200 leave at once
    rows += [(1200, f"n{i:03d}", 1) for i in range(1, n, 2)]  # repeats of 'idle': not changes
    rows += [(3 * 3600, "n000", 0)]
    log = load("burst", rows)
    tr = F.pool_trace(mem_con, Window(log))
    assert tr.events == 2 and len(tr.joins[0]) == n and len(tr.leaves[1]) == n // 2
    s = F.summary(mem_con, Window(log))
    assert (s["events"], s["join_events"], s["leave_events"]) == (2, 1, 1)
    res = replay(mem_con, log, "dp", hours=3.0, count=20, interarrival_s=1.0, pj_max=8)
    check_invariants(res, n)
    assert res.summary["pool_events"] == 2
    tl = res.timeline
    assert (tl.loc[tl["t_s"] == 600.0, "pool_nodes"] == n).all()
    assert res.timeline["pool_nodes"].iloc[-1] == n // 2
    # nodes that left preempted their Trainers in that one event
    assert (res.preemptions["t_s"] == 1200.0).all() and len(res.preemptions) >= 1


# ---------------------------------------------------------------- no Trainers

def test_no_trainers(mem_con, load):
    log = load("quiet", [(0, "a", 1), (0, "b", 1), (3600, "a", 0), (7200, "b", 0)])
    res = replay(mem_con, log, "dp", count=0)
    assert len(res.decisions) == 0 and len(res.trainers) == 0
    assert res.summary["resource_node_hours"] == pytest.approx(3.0)
    assert res.summary["allocated_share"] == 0


# ---------------------------------------------------------------- windows outside the log

@pytest.mark.parametrize("start", ["2020-12-31T23:00:00", "2021-01-01T06:00:00", "2030-01-01", "1e20", "-1e20",
                                   "1000000000000000000000000", "not a time"])
def test_window_outside_the_log_is_a_clear_error(mem_con, load, start):
    log = load("w", [(0, "a", 1), (0, "b", 0), (6 * 3600, "a", 0)])
    with pytest.raises(InputError) as e:
        replay(mem_con, log, "dp", start=start)
    msg = str(e.value)
    assert "field 'start'" in msg and "\n" not in msg and len(msg) < 300


@pytest.mark.parametrize("hours", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_window_length(mem_con, load, hours):
    log = load("w", [(0, "a", 1), (6 * 3600, "a", 0)])
    with pytest.raises(InputError, match="field 'hours'"):
        replay(mem_con, log, "dp", hours=hours)


def test_window_longer_than_the_log_is_clipped(mem_con, load):
    log = load("w", [(0, "a", 1), (0, "b", 1), (2 * 3600, "a", 0)])
    res = replay(mem_con, log, "dp", hours=1e6)
    assert res.timeline["t_s"].iloc[-1] == pytest.approx(2 * 3600.0)
    assert res.summary["resource_node_hours"] == pytest.approx(4.0)


def test_cli_window_outside_exit_2(tmp_path, write_file, capsys):
    dbf = tmp_path / "d.duckdb"
    con = db.connect(dbf)
    logs.ingest(con, write_file("w.csv", node_log([(0, "a", 1), (6 * 3600, "a", 0)])), name="w")
    con.close()
    for start in ("2030-01-01T00:00:00", "1e20"):
        rc = cli.main(["simulate", "--db", str(dbf), "--log", "w", "--start", start, "--hours", "1", "--json"])
        assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("field 'start'" in line for line in err)
    rc = cli.main(["fragments", "--db", str(dbf), "--log", "w", "--start", "1e20", "--json"])
    assert rc == 2


def test_pool_size_beyond_the_machine(mem_con, load):
    log = load("w", [(0, "a", 1), (0, "b", 1), (3600, "a", 0)])
    with pytest.raises(InputError, match="pool.size"):
        replay(mem_con, log, "dp", pool_size=3)
    res = replay(mem_con, log, "dp", pool_size=1)
    assert res.timeline["pool_nodes"].max() == 1
    assert np.isfinite(res.summary["resource_node_hours"])
