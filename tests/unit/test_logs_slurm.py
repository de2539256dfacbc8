"""Slurm `sacct -P` dumps."""

from __future__ import annotations

import pytest

from planner import logs
from planner.idle import fragments as F
from planner.idle.window import Window
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
    s = F.summary(mem_con, Window("s.txt"))
    # nid0001, nid0002 busy the whole hour (0001 twice, overlapping); nid0003 idle [0, 1800)
    assert s["idle_node_hours"] == pytest.approx(0.5) and s["events"] == 1 and s["leave_events"] == 1
    assert s["fragments"]["derived"] is False and s["fragments"]["count"] == 1
    tr = F.pool_trace(mem_con, Window("s.txt"))
    assert list(tr.initial_idle) == [2] and [list(v) for v in tr.leaves] == [[2]]


def test_machine_nodes_flag_adds_idle_nodes(mem_con, write_file):
    logs.ingest(mem_con, write_file("s.txt", SACCT), machine_nodes=5)
    s = F.summary(mem_con, Window("s.txt"))
    assert s["nodes"] == 5 and s["idle_node_hours"] == pytest.approx(2.5)


def test_host_named_twice_in_one_job_is_not_shared(mem_con, write_file):
    text = ("JobID|Start|End|NNodes|NodeList\n1|2021-01-01T00:00:00|2021-01-01T01:00:00|1|a,a\n"
            "2|2021-01-01T00:00:00|2021-01-01T02:00:00|2|b,n[1-1],n1\n")
    r = logs.ingest(mem_con, write_file("dup.sacct", text))
    assert r["nodes"] == 3 and not any("two or more jobs" in n for n in r["notes"]), r["notes"]


DST_DUMP = ("JobID|Submit|Start|End|NNodes|NodeList\n"
            "1|2021-11-07T00:50:00|2021-11-07T01:30:00|2021-11-07T01:10:00|1|n1\n"  # across the repeat
            "2|2021-11-07T00:00:00|2021-11-07T00:10:00|2021-11-07T03:00:00|1|n2\n")


def test_dst_repeat_with_tz(mem_con, write_file):
    """A US site's dump with a job across the November repeated hour: refused as UTC (with a
    hint), loaded with --tz America/Chicago: 01:30 CDT -> 01:10 CST is 40 minutes."""
    from planner.errors import InputError
    from planner.logs import slurm

    p = write_file("dst.sacct", DST_DUMP)
    with pytest.raises(InputError, match=r"line 2.*--tz"):
        slurm.read(p)
    job = slurm.read(p, tz="America/Chicago")
    assert list(job.end_s - job.start_s) == [40 * 60, (2 * 60 + 50 + 60) * 60]
    assert job.start_s[0] == 1636266600.0  # 2021-11-07T06:30:00Z (CDT = UTC-5)
    r = logs.ingest(mem_con, p, tz="America/Chicago")
    assert r["options"]["tz"] == "America/Chicago" and r["start"] == "2021-11-07T05:10:00Z"
    with pytest.raises(InputError, match="field 'tz'"):
        slurm.read(p, tz="Mars/Olympus")


@pytest.mark.parametrize("chunk_rows", [1, 2, 5])
def test_chunked_reading_matches_whole(write_file, chunk_rows):
    from planner.logs import slurm

    rows = ["JobID|Start|End|NNodes|NodeList"]
    for i in range(1, 12):
        rows.append(f"{i}|2021-01-01T0{i % 10}:00:00|2021-01-01T0{i % 10}:30:00|2|n[{i}-{i + 1}]")
        rows.append(f"{i}.batch|2021-01-01T00:00:00|2021-01-01T00:30:00|1|n{i}")
    rows.append("99|2021-01-01T02:00:00|Unknown|1|n1")
    p = write_file("c.sacct", "\n".join(rows) + "\n")
    whole, part = slurm.read(p, chunk_rows=10**6), slurm.read(p, chunk_rows=chunk_rows)
    for k in ("job_id", "start_s", "end_s", "nodes", "node_list_text"):
        assert list(getattr(whole, k)) == list(getattr(part, k))
    assert whole.node_list == part.node_list and whole.skipped_why == part.skipped_why
    assert part.end_s[-1] == whole.end_s.max() and part.notes == whole.notes


@pytest.mark.parametrize("chunk_rows", [1, 2, 5])
def test_chunked_reading_keeps_partition(write_file, chunk_rows):
    from planner.logs import slurm

    rows = ["JobID|Start|End|NNodes|NodeList|Partition"]
    for i in range(1, 8):
        rows.append(f"{i}|2021-01-01T0{i}:00:00|2021-01-01T0{i}:30:00|1|n{i}|{'gpu' if i % 2 else 'cpu'}")
        rows.append(f"{i}.batch|2021-01-01T0{i}:00:00|2021-01-01T0{i}:30:00|1|n{i}|")
    j = slurm.read(write_file("p.sacct", "\n".join(rows) + "\n"), chunk_rows=chunk_rows)
    assert list(j.partition) == ["gpu" if i % 2 else "cpu" for i in range(1, 8)]
    no_part = [r.rsplit("|", 1)[0] for r in rows]
    assert slurm.read(write_file("n.sacct", "\n".join(no_part) + "\n"), chunk_rows=chunk_rows).partition is None


def test_cli_tz(write_file, tmp_path, capsys):
    from planner import cli

    p = write_file("dst.sacct", DST_DUMP)
    dbf = str(tmp_path / "t.duckdb")
    assert cli.main(["ingest", p.as_posix(), "--db", dbf, "--json"]) == 2
    assert "--tz" in capsys.readouterr().err
    assert cli.main(["ingest", p.as_posix(), "--db", dbf, "--tz", "America/Chicago", "--json"]) == 0
    assert '"start": "2021-11-07T05:10:00Z"' in capsys.readouterr().out
