"""The live log (planner.live.store): snapshots appended poll by poll give the tables a loaded node log
would have, a restart resumes without duplicating or losing a change, and the advisor's sizes are the
allocator's on the same snapshot."""

from __future__ import annotations

import json

import numpy as np
import pytest

from planner.allocators import AllocOptions, allocate
from planner.idle.window import Window
from planner.live.advisor import Advisor, load_jobs
from planner.live.store import LiveLog, view
from planner.logs.slurm_json import JobRow, NodeRow
from planner.logs.store import idle_series_from_events, node_fragments
from planner.store import db


def _snap(states: dict[str, str]):
    return [view(NodeRow(name=n, words=frozenset(w.split("+")), partitions=("batch",), cpus=2,
                         alloc_cpus=0 if w.startswith("IDLE") else 2)) for n, w in states.items()]


SEQ = [  # (t, node states): node c drains at 20, b is allocated 30..50, d appears at 40
    (10.0, {"a": "IDLE", "b": "IDLE", "c": "IDLE"}),
    (20.0, {"a": "IDLE", "b": "IDLE", "c": "IDLE+DRAIN"}),
    (30.0, {"a": "IDLE", "b": "ALLOCATED", "c": "IDLE+DRAIN"}),
    (40.0, {"a": "IDLE", "b": "ALLOCATED", "c": "IDLE+DRAIN", "d": "IDLE"}),
    (50.0, {"a": "IDLE", "b": "IDLE", "c": "IDLE+DRAIN", "d": "IDLE"}),
    (60.0, {"a": "ALLOCATED", "b": "IDLE", "c": "IDLE", "d": "IDLE"}),
]


def _run(path, seq, restart_at=None):
    con = db.connect(path)
    lg = LiveLog.open(con, "l")
    for k, (t, st) in enumerate(seq):
        if restart_at is not None and k == restart_at:
            if path != ":memory:":
                con.close()
                con = db.connect(path)
            lg = LiveLog.open(con, "l")  # a new process: state from the database only
            lg.append(con, seq[k - 1][0], _snap(seq[k - 1][1]))  # a repeated poll writes nothing
        lg.append(con, t, _snap(st))
    return con


def _tables(con):
    return {t: con.execute(f"SELECT * EXCLUDE (log_id) FROM {t} ORDER BY ALL").fetchall()
            for t in ("nodes", "node_events", "idle_series", "fragments", "live_node_states")}


@pytest.mark.slow  # 1.4 s CPU measured in the default run: the slow tier
def test_appended_log_equals_the_loaders_tables_and_survives_restarts(tmp_path):
    con = _run(":memory:", SEQ)
    ev = con.execute("SELECT t_s, node_idx, idle FROM node_events ORDER BY t_s, node_idx").fetchnumpy()
    t, node, idle = ev["t_s"], ev["node_idx"], ev["idle"]
    assert list(zip(t.tolist(), node.tolist(), idle.tolist())) == [
        (10, 0, True), (10, 1, True), (10, 2, True), (20, 2, False), (30, 1, False), (40, 3, True), (50, 1, True),
        (60, 0, False), (60, 2, True)]
    st, sn = idle_series_from_events(t, idle)
    assert con.execute("SELECT t_s, idle_nodes FROM idle_series ORDER BY t_s").fetchall() == list(
        zip(st.tolist(), sn.tolist()))
    fn, fs, fe = node_fragments(t, node, idle, 60.0)
    assert con.execute("SELECT node_idx, start_s, end_s FROM fragments ORDER BY ALL").fetchall() == sorted(
        zip(fn.tolist(), fs.tolist(), fe.tolist()))
    assert con.execute("SELECT start_s, end_s, machine_nodes, rows FROM logs").fetchone() == (10, 60, 4, 6)
    states = con.execute("SELECT t_s, node_idx, state FROM live_node_states ORDER BY ALL").fetchall()
    assert (20.0, 2, "drained") in states and (60.0, 2, "idle") in states
    for k in range(1, len(SEQ)):  # a restart before any poll gives the same tables
        other = _run(tmp_path / "r.duckdb" if k == 3 else ":memory:", SEQ, restart_at=k)
        assert _tables(other) == _tables(con), k
    # the replay's reader sees a node log
    from planner.idle import fragments
    s = fragments.summary(con, Window("l"))
    assert s["nodes"] == 4 and s["fragments"]["count"] == len(fn)


def test_job_events_start_resize_end(tmp_path):
    con = db.connect(tmp_path / "j.duckdb")
    lg = LiveLog.open(con, "l")
    nodes = _snap({"a": "IDLE"})
    for t, jobs in ((1.0, [JobRow("7", "PENDING", 0.5, None, None, "", 3)]),
                    (2.0, [JobRow("7", "RUNNING", 0.5, 2.0, None, "n[1-3]", 3)]),
                    (3.0, [JobRow("7", "RUNNING", 0.5, 2.0, None, "n[1-3]", 3)]),
                    (4.0, [JobRow("7", "RUNNING", 0.5, 2.0, None, "n1", 1)]),
                    (5.0, [])):
        lg.append(con, t, nodes, jobs)
    ev = con.execute("SELECT t_s, event, node_count FROM live_job_events ORDER BY t_s").fetchall()
    assert ev == [(1.0, "submitted", 3), (2.0, "started", 3), (4.0, "resized", 1), (5.0, "ended", 1)]


def test_advisor_sizes_are_the_allocators(tmp_path):
    f = tmp_path / "jobs.json"
    f.write_text(json.dumps({"tfwd_s": 300, "trainers": [
        {"id": "a", "slurm_job": "11", "model": "resnet18", "nmin": 1, "nmax": 6},
        {"id": "b", "model": "vgg16", "nmin": 2, "nmax": 4, "rup_s": 30}]}))
    jobs, opts = load_jobs(f)
    adv = Advisor(jobs, "auto", opts)
    names = [f"n{i}" for i in range(10)]
    for harv, held in ((names[2:7], {"a": ["n0", "n1"], "b": []}), (names[3:], {"a": ["n0"], "b": ["n1", "n2"]})):
        p = {n: 1.0 - i / 10 for i, n in enumerate(names)}
        recs, res = adv.decide(100.0, names, harv, held, p)
        st = adv.state(names, harv, held, 100.0)
        want = allocate("auto", st, AllocOptions(**opts)).counts
        assert res.counts == want
        for r in recs:
            assert r["to_nodes"] == want[r["job"]] and r["from_nodes"] == len(held[r["job"]])
            assert set(r["nodes_to_add"]) <= set(harv)
            if r["nodes_to_add"]:  # most likely to stay first
                free = [n for n in harv if n not in r["nodes_to_add"]]
                assert not free or min(p[n] for n in r["nodes_to_add"]) >= max(
                    (p[n] for n in free), default=0) - 1e-12 or len(recs) > 1
    assert adv.decide(100.0, names, harv, held, p) == ([], None)  # nothing changed: no decision
    assert np.isfinite(recs[0]["expected_gain_samples"]) if recs else True
