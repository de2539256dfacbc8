"""Partition-wide outages (planner.idle.outages.partition_outages), counted by hand.

An SWF log (machine 10 nodes, T = 1.7e9 s, field 16 = partition):
  J1 partition 1, 2 nodes, 0-10 h (the rest of the machine runs throughout)
  J2 partition 2, 4 nodes, 0-2 h
  J3 partition 2, 4 nodes, submitted 3 h, started 6 h, ends 9 h
  J4 partition 1, 1 node, submitted 0 h, started 0 h, ends 10 h
Partition 2 runs nothing from 2 h to 6 h (4 h >= 2 h) while J1 and J4 run, and J3 waits through
it: one partition-wide outage [2 h, 6 h), reason "jobs waiting", 1 waiting job. Partition 1 runs
throughout: none. Idle N(t): 0-2 h 3, 2-6 h 7, 6-9 h 3, 9-10 h 7 = 6 + 28 + 9 + 7 = 50 node-h;
no machine-wide outage. By partition (count level: each moment's idle goes to the waiting jobs'
partitions): J3 waits 3-6 h, so partition 2 gets 7 * 3 = 21 node-h, all inside its outage
(outage 21, harvestable 0); "(no job waiting)" the other 29.
"""

from __future__ import annotations

import numpy as np
import pytest

from planner import logs
from planner.idle import job_views, split
from planner.idle.window import Window

T = 1_700_000_000
H = 3600


def _job(i, sub, wait, run, n, part):
    return f"{i} {sub} {wait} {run} {n} -1 -1 {n} -1 -1 1 1 1 1 -1 {part} -1 -1"


SWF = "\n".join(["; MaxNodes: 10", "; MaxProcs: 10", f"; UnixStartTime: {T}",
                 _job(1, 0, 0, 10 * H, 2, 1), _job(2, 0, 0, 2 * H, 4, 2),
                 _job(3, 3 * H, 3 * H, 3 * H, 4, 2), _job(4, 0, 0, 10 * H, 1, 1)]) + "\n"


def test_partition_outages_pure():
    p = np.array(["a", "b", "b", "a", "b"], dtype=object)
    st = np.array([0.0, 0.0, 5 * H, 0.0, 9 * H])
    en = np.array([4 * H, H, 6 * H, 4 * H, 10 * H])
    sub = st.copy()
    out = split.partition_outages(p, sub, st, en, min_hours=2.0)
    # b idles [1 h, 5 h) and [6 h, 9 h); "a" runs only until 4 h: b's outage is [1 h, 4 h) (3 h);
    # [6 h, 9 h) has no other job running (machine-wide, not a partition's)
    assert [(o.partition, o.start_s, o.end_s, o.reason) for o in out] == [("b", H, 4 * H, "nothing submitted")]
    assert split.partition_outages(p, sub, st, en, min_hours=3.5) == []


def test_partition_outage_by_hand(mem_con, write_file):
    logs.ingest(mem_con, write_file("parts.swf", SWF), name="parts")
    s = split.split(mem_con, Window("parts"))
    assert s["idle_node_hours"] == pytest.approx(50.0) and s["outages"] == []
    (o,) = s["partition_outages"]
    assert (o["partition"], o["start_s"], o["end_s"], o["reason"], o["waiting_jobs"]) == \
        ("2", T + 2 * H, T + 6 * H, "jobs waiting", 1)
    assert o["hours"] == pytest.approx(4.0)
    df = job_views.by_partition(mem_con, Window("parts")).set_index("partition")
    assert df.loc["2", "idle_node_hours"] == pytest.approx(21.0)
    assert df.loc["2", "outage_node_hours"] == pytest.approx(21.0)
    assert df.loc["2", "harvestable_node_hours"] == pytest.approx(0.0)
    assert df.loc[job_views.NO_WAIT, "idle_node_hours"] == pytest.approx(29.0)
    assert df["outage_node_hours"].sum() == pytest.approx(21.0)


def test_partition_outage_exact_identity(mem_con, write_file):
    # the same schedule with node lists: partition 2's home nodes n3-n6 idle 2-6 h: 16 node-h
    iso = lambda s: np.datetime_as_string(np.datetime64(int(T + s), "s"))  # noqa: E731
    rows = ["JobID|Submit|Start|End|NNodes|NodeList|Partition",
            f"1|{iso(0)}|{iso(0)}|{iso(10 * H)}|2|n[1-2]|p1",
            f"2|{iso(0)}|{iso(0)}|{iso(2 * H)}|4|n[3-6]|p2",
            f"3|{iso(3 * H)}|{iso(6 * H)}|{iso(9 * H)}|4|n[3-6]|p2",
            f"4|{iso(0)}|{iso(0)}|{iso(10 * H)}|1|n7|p1"]
    logs.ingest(mem_con, write_file("parts.sacct", "\n".join(rows) + "\n"), name="px", machine_nodes=7)
    df = job_views.by_partition(mem_con, Window("px")).set_index("partition")
    # n3-n6 idle 2-6 h and 9-10 h: 20 node-h, 16 of them in p2's outage
    assert df.loc["p2", "idle_node_hours"] == pytest.approx(20.0)
    assert df.loc["p2", "outage_node_hours"] == pytest.approx(16.0)
    assert df.loc["p2", "harvestable_node_hours"] == pytest.approx(4.0)
    assert "p1" not in df.index  # its home nodes n1, n2, n7 never idle
