"""Slurm `sacct -P` dumps."""

from __future__ import annotations

import pytest

from planner import fragments as F
from planner import logs
from planner.logs import slurm

SACCT = """JobID|JobName|Submit|Start|End|NNodes|NodeList|State
100|a|2021-01-01T00:00:00|2021-01-01T00:00:00|2021-01-01T01:00:00|2|nid[0001-0002]|COMPLETED
100.batch|batch|2021-01-01T00:00:00|2021-01-01T00:00:00|2021-01-01T01:00:00|1|nid0001|COMPLETED
100.extern|extern|2021-01-01T00:00:00|2021-01-01T00:00:00|2021-01-01T01:00:00|2|nid[0001-0002]|COMPLETED
100.0|step|2021-01-01T00:00:00|2021-01-01T00:00:00|2021-01-01T01:00:00|2|nid[0001-0002]|COMPLETED
101|b|2021-01-01T00:00:00|2021-01-01T00:30:00|Unknown|1|nid0003|RUNNING
102|c|2021-01-01T00:00:00|Unknown|Unknown|1|None assigned|PENDING
103_4|d|2021-01-01T00:00:00|2021-01-01T00:15:00|2021-01-01T00:45:00|1|nid0001|COMPLETED
"""


def test_steps_skipped_and_unknown_times(write_file):
    p = write_file("s.txt", SACCT)
    assert logs.detect_format(p) == "slurm"
    j = slurm.read(p)
    assert list(j.job_id) == ["100", "101", "103_4"]
    assert j.skipped == 4 and j.skipped_why == {"job steps": 3, "never started": 1}
    assert j.end_s[1] == j.end_s[0]  # still running: clipped to the log end (01:00)
    assert j.node_list[0] == ["nid0001", "nid0002"]


def test_exact_identity(mem_con, write_file):
    r = logs.ingest(mem_con, write_file("s.txt", SACCT))
    assert (r["rows"], r["skipped"], r["nodes"], r["node_identity"]) == (3, 4, 3, "exact")
    s = F.summary(mem_con, "s.txt")
    # nid0001, nid0002 busy the whole hour (0001 twice, overlapping); nid0003 idle [0, 1800)
    assert s["idle_node_hours"] == pytest.approx(0.5) and s["events"] == 1 and s["leave_events"] == 1
    assert s["fragments"]["derived"] is False and s["fragments"]["count"] == 1
    tr = F.pool_trace(mem_con, "s.txt")
    assert list(tr.initial_idle) == [2] and [list(v) for v in tr.leaves] == [[2]]


def test_machine_nodes_flag_adds_idle_nodes(mem_con, write_file):
    logs.ingest(mem_con, write_file("s.txt", SACCT), machine_nodes=5)
    s = F.summary(mem_con, "s.txt")
    assert s["nodes"] == 5 and s["idle_node_hours"] == pytest.approx(2.5)


def test_host_named_twice_in_one_job_is_not_shared(mem_con, write_file):
    text = ("JobID|Start|End|NNodes|NodeList\n1|2021-01-01T00:00:00|2021-01-01T01:00:00|1|a,a\n"
            "2|2021-01-01T00:00:00|2021-01-01T02:00:00|2|b,n[1-1],n1\n")
    r = logs.ingest(mem_con, write_file("dup.sacct", text))
    assert r["nodes"] == 3 and not any("two or more jobs" in n for n in r["notes"]), r["notes"]
