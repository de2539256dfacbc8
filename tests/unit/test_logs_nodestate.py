"""Node-state event logs (`time,node,idle`)."""

from __future__ import annotations

import pytest

from planner import logs
from planner.idle import fragments as F
from planner.idle.window import Window
from tests.helpers import TINY_NODE_LOG


def test_detect(tiny_log, write_file):
    assert logs.detect_format(tiny_log) == "nodestate"
    assert logs.detect_format(write_file("t.csv.gz", TINY_NODE_LOG, gz=True)) == "nodestate"


def test_report(mem_con, tiny_log):
    r = logs.ingest(mem_con, tiny_log)
    assert (r["log"], r["kind"], r["format"], r["rows"], r["nodes"]) == ("tiny.csv", "node", "nodestate", 11, 3)
    assert (r["start"], r["end"], r["skipped"]) == ("2021-01-01T00:00:00Z", "2021-01-01T01:00:00Z", 0)
    assert r["repeated_state_rows"] == 1 and r["node_identity"] == "exact"


def test_epoch_times_and_late_node(mem_con, write_file):
    text = "time,node,idle\n0,x,1\n0,y,0\n100,z,1\n200,x,0\n300,z,0\n"
    logs.ingest(mem_con, write_file("e.csv", text))
    tr = F.pool_trace(mem_con, Window("e.csv"))
    assert tr.start_s == 0 and tr.end_s == 300 and tr.nodes == 3
    assert list(tr.initial_idle) == [0]  # z (id 2) busy until first named
    assert [list(j) for j in tr.joins] == [[2], []] and [list(v) for v in tr.leaves] == [[], [0]]


def test_timezone_aware_times_are_converted(mem_con, write_file):
    text = "time,node,idle\n2021-01-01T01:00:00+01:00,a,1\n2021-01-01T00:30:00Z,a,0\n"
    r = logs.ingest(mem_con, write_file("tz.csv", text))
    assert r["start"] == "2021-01-01T00:00:00Z" and r["end"] == "2021-01-01T00:30:00Z"


def test_summit_report(summit_con):
    r = logs.list_logs(summit_con).set_index("name").loc["summit-2021"]
    assert (r["nodes"], r["rows"], r["kind"]) == (4734, 851_590, "node")
    assert r["start"] == "2021-02-10T00:08:52Z" and r["end"] == "2021-02-24T22:19:29Z"
    first = summit_con.execute("SELECT n.name FROM nodes n JOIN logs l USING (log_id) "
                               "WHERE l.name='summit-2021' AND node_idx < 3 ORDER BY node_idx").fetchall()
    assert [f[0] for f in first] == ["c05n06", "a02n02", "b07n02"]  # the snapshot's row order


@pytest.mark.parametrize("k", [1, 1024, 4734])
def test_summit_pool_trace_matches_stored_events(summit_con, k):
    tr = F.pool_trace(summit_con, Window("summit-2021", start="2021-02-12", hours=6, pool_size=k))
    s = F.summary(summit_con, Window("summit-2021", start="2021-02-12", hours=6, pool_size=k))
    assert tr.events == s["events"] and tr.node_hours() == pytest.approx(s["idle_node_hours"])
    assert all(len(j) + len(v) > 0 for j, v in zip(tr.joins, tr.leaves))
    assert tr.initial_idle.max(initial=-1) < k


def test_bom_and_crlf(mem_con, write_file):
    text = "\ufeff" + TINY_NODE_LOG.replace("\n", "\r\n")
    p = write_file("bom.csv", text)
    assert logs.detect_format(p) == "nodestate"
    assert F.summary(mem_con, Window(logs.ingest(mem_con, p)["log"]))["events"] == 4


def test_summit_trace_replays_to_the_raw_states(summit_con):
    """Replaying the pool trace gives, at sample times, exactly the idle set read from the raw
    CSV rows (last row per node at or before the time), for the first 1024 nodes."""
    import numpy as np
    import pandas as pd

    from planner.paths import SUMMIT_LOG

    raw = pd.read_csv(SUMMIT_LOG)
    t = pd.to_datetime(raw["time"], utc=True)
    raw["t_s"] = (t - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    order = list(dict.fromkeys(raw["node"][: 4734]))[:1024]  # snapshot order, first 1024
    sub = raw[raw["node"].isin(set(order))]
    idx = {n: i for i, n in enumerate(order)}
    start = pd.Timestamp("2021-02-15 06:00", tz="UTC")
    t0 = (start - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    tr = F.pool_trace(summit_con, Window("summit-2021", start=t0, hours=3, pool_size=1024))
    samples = sorted({t0 + 1, t0 + 3600, t0 + 7200.5, float(tr.times[len(tr.times) // 2]), tr.end_s - 1})
    idle = set(tr.initial_idle.tolist())
    k = 0
    for s in samples:
        while k < len(tr.times) and tr.times[k] <= s:
            idle |= set(tr.joins[k].tolist())
            idle -= set(tr.leaves[k].tolist())
            k += 1
        state = sub[sub["t_s"] <= s].groupby("node")["idle"].last()
        want = {idx[n] for n, v in state.items() if v == 1}
        assert idle == want, s
    assert np.all(np.diff(tr.times) > 0)


@pytest.mark.parametrize("chunk_rows", [1, 2, 3, 7])
def test_streamed_chunks_give_the_same_events(tmp_path, chunk_rows):
    """Chunk boundaries anywhere (inside the snapshot, between two rows of one node at one
    time) give the events of the whole-file reduction (planner.logs.store.changes_only)."""
    import numpy as np

    from planner.logs import nodestate
    from planner.logs.store import changes_only

    rng = np.random.default_rng(chunk_rows)
    rows = ["time,node,idle"] + [f"0,n{i},{rng.integers(2)}" for i in range(5)]
    for t in range(1, 40):
        for _ in range(rng.integers(0, 4)):
            rows.append(f"{t * 10},n{rng.integers(7)},{rng.integers(2)}")
    f = tmp_path / "r.csv"
    f.write_text("\n".join(rows) + "\n")
    whole = nodestate.read(f, chunk_rows=10**6)
    part = nodestate.read(f, chunk_rows=chunk_rows)
    import pandas as pd
    raw = pd.read_csv(f)
    codes = raw["node"].map({n: i for i, n in enumerate(whole.names)}).to_numpy()
    ref = changes_only(raw["time"].to_numpy(float), codes, raw["idle"].to_numpy().astype(bool), 0.0,
                       len(whole.names))
    for got in (whole, part):
        assert got.names == whole.names and got.rows == len(raw) and got.end_s == raw["time"].iloc[-1]
        for a, b in zip((got.t_s, got.node, got.idle), ref):
            assert np.array_equal(np.asarray(a), np.asarray(b))


def test_quoted_header_is_a_node_state_log(mem_con, write_file):
    """`"time","node","idle"` (as spreadsheets write it) is a node-state log, not a job CSV."""
    text = TINY_NODE_LOG.replace("time,node,idle", '"time","node","idle"', 1)
    p = write_file("q.csv", text)
    assert logs.detect_format(p) == "nodestate"
    assert logs.ingest(mem_con, p)["kind"] == "node"
