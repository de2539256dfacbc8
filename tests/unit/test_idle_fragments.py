"""Idle-capacity figures on logs small enough to count by hand (see conftest.TINY_NODE_LOG)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner import logs
from planner.errors import InputError
from planner.idle import fragments as F
from planner.idle.window import Window
from tests.helpers import TINY_T0, examples

SUMMARY_KEYS = {"events", "join_events", "leave_events", "span_h", "nodes", "idle_node_hours",
                "eq_nodes", "idle_ratio", "inc_per_h", "dec_per_h", "fragments", "tfwd_suggestion_s"}
# the idle split's headline figures (issue 25; planner.idle.split, tests/unit/test_idle_split.py)
SPLIT_KEYS = {"harvestable_only", "harvestable_node_hours", "outage_node_hours", "outage_hours", "warmup", "split"}
FRAGMENT_KEYS = {"count", "median_s", "mean_s", "frac_lt_600s", "nodetime_share_lt_600s", "derived"}


def test_tiny_whole_log_counted_by_hand(tiny_con):
    s = F.summary(tiny_con, Window("tiny"))
    assert set(s) == SUMMARY_KEYS | SPLIT_KEYS and set(s["fragments"]) == FRAGMENT_KEYS
    # events inside (0, 3600): 600 join, 1200 leave, 1800 join+leave, 2400 join
    assert (s["events"], s["join_events"], s["leave_events"]) == (4, 3, 2)
    assert s["span_h"] == 1.0 and s["nodes"] == 3
    # N: 2 on [0,600), 3 on [600,1200), 1 on [1200,2400), 2 on [2400,3600) -> 6600 node-s
    assert s["idle_node_hours"] == pytest.approx(6600 / 3600)
    assert s["eq_nodes"] == pytest.approx(6600 / 3600)
    assert s["idle_ratio"] == pytest.approx(6600 / 3600 / 3)
    assert (s["inc_per_h"], s["dec_per_h"]) == (3.0, 2.0)
    # fragments a:1200,1800  b:1200  c:1200,1200
    fr = s["fragments"]
    assert fr["count"] == 5 and fr["median_s"] == 1200 and fr["mean_s"] == pytest.approx(1320)
    assert fr["frac_lt_600s"] == 0 and fr["nodetime_share_lt_600s"] == 0 and fr["derived"] is False
    # next leave after 600 is 1200 (600 s), after 1200 is 1800 (600 s); 1800 and 2400 censored
    assert s["tfwd_suggestion_s"] == 600
    td = F.tfwd_distribution(tiny_con, Window("tiny"))
    assert list(td["tfwd_s"]) == [600, 600]


def test_tiny_pool_size_two(tiny_con):
    s = F.summary(tiny_con, Window("tiny", pool_size=2))  # nodes a, b (snapshot order)
    assert (s["events"], s["join_events"], s["leave_events"]) == (3, 2, 2)
    assert s["idle_node_hours"] == pytest.approx(4200 / 3600)
    assert s["fragments"]["count"] == 3


def test_tiny_window_clips_fragments(tiny_con):
    s = F.summary(tiny_con, Window("tiny", start="2021-01-01 00:15:00", hours=0.5))  # [900, 2700)
    assert (s["events"], s["join_events"], s["leave_events"]) == (3, 2, 2)
    fr = s["fragments"]  # a:300,900  b:900  c:300,300
    assert fr["count"] == 5 and fr["median_s"] == 300 and fr["mean_s"] == pytest.approx(540)
    assert fr["frac_lt_600s"] == pytest.approx(3 / 5)
    assert fr["nodetime_share_lt_600s"] == pytest.approx(900 / 2700)
    assert s["idle_node_hours"] == pytest.approx(2700 / 3600)


def test_tiny_pool_trace(tiny_con):
    tr = F.pool_trace(tiny_con, Window("tiny"))
    assert tr.nodes == 3 and tr.start_s == TINY_T0 and tr.end_s == TINY_T0 + 3600 and not tr.derived
    assert list(tr.initial_idle) == [0, 2]
    assert list(tr.times - TINY_T0) == [600, 1200, 1800, 2400]
    assert [list(j) for j in tr.joins] == [[1], [], [0], [2]]
    assert [list(v) for v in tr.leaves] == [[], [0, 2], [1], []]
    assert tr.node_hours() == pytest.approx(6600 / 3600)
    w = F.pool_trace(tiny_con, Window("tiny", start=TINY_T0 + 900, hours=0.5, pool_size=2))
    assert list(w.initial_idle) == [0, 1] and list(w.times - TINY_T0) == [1200, 1800]


def test_random_subset_of_all_nodes_equals_first(tiny_con):
    a = F.summary(tiny_con, Window("tiny"))
    b = F.summary(tiny_con, Window("tiny", subset="random", seed=3))
    assert a == b
    r = F.pool_trace(tiny_con, Window("tiny", pool_size=2, subset="random", seed=1))
    assert r.nodes == 2 and all(set(j) <= {0, 1} for j in r.joins)


def test_dataframes(tiny_con):
    ser = F.idle_series(tiny_con, Window("tiny"))
    assert list(ser["idle_nodes"]) == [2, 3, 1, 2, 2]
    assert list(ser["t_s"] - TINY_T0) == [0, 600, 1200, 2400, 3600]
    binned = F.idle_series(tiny_con, Window("tiny"), max_points=2)  # [0,1800): (1200+1800+600)/1800
    assert list(binned["idle_nodes"]) == pytest.approx([2.0, (600 + 2400) / 1800])
    assert list(binned["min_nodes"]) == [1, 1] and list(binned["max_nodes"]) == [3, 2]
    # the Planner's caption: mean (2*600 + 3*600 + 1*1200 + 2*1200) / 3600 = 6600 / 3600; min 1, max 3,
    # the same from the binned series (whose bin means alone would say min 1.67, max 2)
    for sr in (ser, binned):
        st = F.series_stats(sr, TINY_T0 + 3600)
        assert st == pytest.approx({"mean": 6600 / 3600, "min": 1.0, "max": 3.0})
    assert F.series_stats(ser.iloc[:0], TINY_T0) is None
    fl = F.fragment_lengths(tiny_con, Window("tiny"))
    assert sorted(fl["length_s"]) == [1200, 1200, 1200, 1200, 1800]
    assert fl["cdf_count"].iloc[-1] == 1.0 and fl["cdf_nodetime"].iloc[-1] == pytest.approx(1.0)
    ev = F.events_per_window(tiny_con, Window("tiny"), window_h=0.5)
    assert list(ev["events"]) == [2, 2] and list(ev["join_events"]) == [1, 2]
    assert list(ev["leave_events"]) == [1, 1]


SWF = """; MaxNodes: 4
; UnixStartTime: 1000
1 0 0 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1
2 10 40 100 3 -1 -1 3 100 -1 1 1 1 -1 -1 -1 -1 -1
3 20 -1 30 -1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1
4 30 0 0 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1
5 30 0 -1 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1
"""


def test_count_level_swf_by_hand(mem_con, write_file):
    rep = logs.ingest(mem_con, write_file("hand.swf", SWF))
    assert (rep["rows"], rep["skipped"], rep["nodes"], rep["node_identity"]) == (3, 2, 4, "derived")
    # busy 2 [1000,1020), 3 [1020,1050), 5 -> clipped 4 [1050,1100), 3 [1100,1150)
    ov = rep["oversubscription"]
    assert (ov["oversub_intervals"], ov["oversub_s"], ov["oversub_max_nodes"]) == (1, 50.0, 1)
    s = F.summary(mem_con, Window("hand.swf"))
    assert (s["events"], s["join_events"], s["leave_events"]) == (3, 1, 2)
    assert s["idle_node_hours"] * 3600 == pytest.approx(120)
    fr = s["fragments"]  # stack rule: id1 [1000,1020), id0 [1000,1050), id0 [1100,1150)
    assert fr["derived"] is True and fr["count"] == 3 and fr["median_s"] == 50
    tr = F.pool_trace(mem_con, Window("hand.swf"))
    assert tr.derived and list(tr.initial_idle) == [0, 1]
    assert [list(v) for v in tr.leaves] == [[1], [0], []] and [list(j) for j in tr.joins] == [[], [], [0]]
    # pool size 2 of 4: N_K = floor(N*2/4 + 0.5): 2,1,0,1 -> 1,1,0,1
    s2 = F.summary(mem_con, Window("hand.swf", pool_size=2))
    assert s2["idle_node_hours"] * 3600 == pytest.approx(100) and s2["events"] == 2
    with pytest.raises(InputError, match="subset must be"):  # checked for count-level logs too
        F.summary(mem_con, Window("hand.swf", subset="last"))


def test_oversubscribed_most_of_the_time_is_refused(mem_con, write_file):
    with pytest.raises(InputError, match="hand.swf.*machine size 2"):
        logs.ingest(mem_con, write_file("hand.swf", SWF), machine_nodes=2)


def test_bad_window_and_pool(tiny_con):
    with pytest.raises(InputError, match="outside the log"):
        F.summary(tiny_con, Window("tiny", start="2020-01-01"))
    with pytest.raises(InputError, match="pool size"):
        F.summary(tiny_con, Window("tiny", pool_size=4))
    with pytest.raises(InputError, match="hours"):
        F.summary(tiny_con, Window("tiny", hours=-1))
    with pytest.raises(InputError, match="no log named"):
        F.summary(tiny_con, Window("nope"))
    with pytest.raises(InputError, match="subset must be"):
        F.summary(tiny_con, Window("tiny", subset="last"))


@pytest.mark.slow  # 1.9 s CPU measured in the default run: the slow tier
def test_summit_first_1024_bftrainer_window(summit_con):
    """The BFTrainer replay window (2021-02-10 20:21:15, first 1024 nodes)."""
    tr = F.pool_trace(summit_con, Window("summit-2021", start="2021-02-10 20:21:15", hours=24, pool_size=1024))
    s = F.summary(summit_con, Window("summit-2021", start="2021-02-10 20:21:15", hours=24, pool_size=1024))
    assert tr.nodes == 1024 and tr.events == s["events"] > 0
    assert tr.node_hours() == pytest.approx(s["idle_node_hours"])
    full = F.summary(summit_con, Window("summit-2021"))
    assert full["nodes"] == 4734 and full["span_h"] == pytest.approx(358.1769, abs=1e-3)
    assert 0 < full["idle_ratio"] < 1 and full["fragments"]["count"] > 100_000
    # stored whole-log fragments agree with the window computation
    stored = summit_con.execute("SELECT count(*), sum(f.end_s - f.start_s) FROM fragments f JOIN logs l "
                                "USING (log_id) WHERE l.name = 'summit-2021'").fetchone()
    assert stored[0] == full["fragments"]["count"]
    assert stored[1] / 3600 == pytest.approx(full["idle_node_hours"])


# ---------------------------------------------------------------- property: node-time == integral of N

import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from planner.store import db  # noqa: E402


def _brute_node_log(rows, n_nodes, k, t0, t1):
    """Idle node-seconds of nodes 0..k-1 over integer seconds [t0, t1) (state = last row <= s)."""
    total = 0
    for s in range(int(t0), int(t1)):
        state = {}
        for t, node, idle in rows:
            if t <= s:
                state[node] = idle
        total += sum(1 for n in range(k) if state.get(n, 0) == 1)
    return total


@st.composite
def node_logs(draw):
    n = draw(st.integers(1, 5))
    snap = [(0, i, draw(st.integers(0, 1))) for i in range(n)]
    rows, t = [], 0
    for _ in range(draw(st.integers(1, 25))):
        t += draw(st.integers(0, 4))
        rows.append((t, draw(st.integers(0, n - 1)), draw(st.integers(0, 1))))
    if rows[-1][0] == 0:
        rows.append((1, 0, snap[0][2]))
    return n, snap + rows


@pytest.mark.slow  # 1.4 s CPU measured in the default run: the slow tier
@pytest.mark.parametrize("budget", examples(40, 4))
def test_property_node_time_equals_integral_node_log(budget):
    @settings(max_examples=budget, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(node_logs(), st.data())
    def example(log, data):
        n, rows = log
        end = rows[-1][0]
        start = data.draw(st.integers(0, end - 1))
        hours = data.draw(st.integers(1, end - start)) / 3600.0
        k = data.draw(st.integers(1, n))
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "p.csv"
            p.write_text("time,node,idle\n" + "".join(f"{t},n{i},{s}\n" for t, i, s in rows))
            con = db.connect(":memory:")
            from planner import logs
            logs.ingest(con, p)
            c = F.characterize(con, Window("p.csv", start=start, hours=hours, pool_size=k))
            tr = F.pool_trace(con, Window("p.csv", start=start, hours=hours, pool_size=k))
            cr = F.characterize(con, Window("p.csv", start=start, hours=hours, pool_size=k, subset="random", seed=5))
            trr = F.pool_trace(con, Window("p.csv", start=start, hours=hours, pool_size=k, subset="random", seed=5))
            con.close()
        # node ids follow first appearance: the snapshot rows name n0..n{n-1} in order
        want = _brute_node_log(rows, n, k, start, start + round(hours * 3600))
        frag = float(((c.frag_end - c.frag_start) * c.frag_width).sum())
        assert frag == pytest.approx(want) and c.idle_node_s() == pytest.approx(want)
        assert tr.node_hours() * 3600 == pytest.approx(want)
        assert float(((cr.frag_end - cr.frag_start) * cr.frag_width).sum()) == pytest.approx(trr.node_hours() * 3600)
        assert tr.events == len(c.event_t)

    example()


@st.composite
def job_logs(draw):
    jobs = []
    for _ in range(draw(st.integers(1, 12))):
        s = draw(st.integers(0, 40))
        jobs.append((s, s + draw(st.integers(1, 20)), draw(st.integers(1, 6))))
    return jobs


@pytest.mark.slow  # 0.8 s CPU measured in the default run: the slow tier
@pytest.mark.parametrize("budget", examples(40, 4))
def test_property_node_time_equals_integral_count_log(budget):
    @settings(max_examples=budget, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(job_logs(), st.integers(1, 12), st.data())
    def example(jobs, machine, data):
        t0, t1 = min(j[0] for j in jobs), max(j[1] for j in jobs)
        busy = {s: sum(n for a, b, n in jobs if a <= s < b) for s in range(t0, t1)}
        over = sum(1 for s in busy if busy[s] > machine)
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "j.csv"
            p.write_text("start,end,nodes\n" + "".join(f"{a},{b},{n}\n" for a, b, n in jobs))
            con = db.connect(":memory:")
            from planner import logs
            if over / (t1 - t0) > 0.5:
                with pytest.raises(InputError):
                    logs.ingest(con, p, machine_nodes=machine)
                return
            logs.ingest(con, p, machine_nodes=machine)
            start = data.draw(st.integers(t0, t1 - 1))
            hours = data.draw(st.integers(1, t1 - start)) / 3600.0
            k = data.draw(st.integers(1, machine))
            c = F.characterize(con, Window("j.csv", start=start, hours=hours, pool_size=k))
            tr = F.pool_trace(con, Window("j.csv", start=start, hours=hours, pool_size=k))
            con.close()
        want = sum(int(np.floor((machine - min(busy[s], machine)) * k / machine + 0.5))
                   for s in range(start, start + round(hours * 3600)))
        frag = float(((c.frag_end - c.frag_start) * c.frag_width).sum())
        assert frag == pytest.approx(want) and tr.node_hours() * 3600 == pytest.approx(want)
        assert c.wd.derived and tr.derived

    example()


def test_cli_json_keys(tmp_path, tiny_log, capsys):
    import json

    from planner import cli
    dbp = str(tmp_path / "k.duckdb")
    assert cli.main(["ingest", str(tiny_log), "--db", dbp, "--name", "tiny", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert {"log", "kind", "rows", "nodes", "start", "end", "skipped"} <= set(rep) and rep["log"] == "tiny"
    assert cli.main(["fragments", "--db", dbp, "--log", "tiny", "--pool-size", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == SUMMARY_KEYS | SPLIT_KEYS and set(out["fragments"]) == FRAGMENT_KEYS and out["nodes"] == 2
    assert cli.main(["logs", "--db", dbp, "--json"]) == 0
    lst = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in lst] == ["tiny"]


def test_summit_page_frames(summit_con):
    s = F.summary(summit_con, Window("summit-2021", pool_size=1024))
    ev = F.events_per_window(summit_con, Window("summit-2021", pool_size=1024), window_h=12)
    assert len(ev) == 30 and ev["events"].sum() == s["events"]  # 358.2 h -> 30 windows of 12 h
    assert ev["join_events"].sum() == s["join_events"] and ev["leave_events"].sum() == s["leave_events"]
    ser = F.idle_series(summit_con, Window("summit-2021", pool_size=1024), max_points=500)
    assert len(ser) == 500
    assert (ser["idle_nodes"] * 358.1769444 / 500).sum() == pytest.approx(s["idle_node_hours"], rel=1e-6)
    assert (ser["min_nodes"] <= ser["idle_nodes"] + 1e-9).all() and (ser["idle_nodes"] <= ser["max_nodes"] + 1e-9).all()
    fl = F.fragment_lengths(summit_con, Window("summit-2021", pool_size=1024))
    assert fl["n_nodes"].sum() == s["fragments"]["count"]
    assert fl["node_s"].sum() / 3600 == pytest.approx(s["idle_node_hours"])
    td = F.tfwd_distribution(summit_con, Window("summit-2021", pool_size=1024))
    assert td["tfwd_s"].median() == s["tfwd_suggestion_s"] and (td["tfwd_s"] > 0).all()


@pytest.mark.slow  # 2.0 s CPU measured in the default run: the slow tier
@pytest.mark.parametrize("kw", [{}, {"pool_size": 1024}, {"start": "2021-02-12T00:00:00", "hours": 30.0}])
def test_views_are_the_separate_queries_from_one_characterization(summit_con, kw, monkeypatch):
    """The Idle page's one call equals its five separate queries, and characterizes the window once."""
    calls = []
    real = F.characterize_window
    monkeypatch.setattr(F, "characterize_window", lambda wd: calls.append(1) or real(wd))
    win = Window("summit-2021", **kw)
    v = F.views(summit_con, win, max_points=300)
    assert len(calls) == 1
    assert v["summary"] == F.summary(summit_con, win)
    pd_eq = pd.testing.assert_frame_equal
    pd_eq(v["idle_series"], F.idle_series(summit_con, win, max_points=300))
    pd_eq(v["fragment_lengths"], F.fragment_lengths(summit_con, win))
    assert v["window_h"] == 12.0  # 358 h of log: 12 h bins (a week beyond two months)
    pd_eq(v["events_per_window"], F.events_per_window(summit_con, win, window_h=12.0))
    pd_eq(v["tfwd_distribution"], F.tfwd_distribution(summit_con, win))
    assert F.event_window_h(60 * 24) == 12.0 and F.event_window_h(60 * 24 + 1) == 168.0
