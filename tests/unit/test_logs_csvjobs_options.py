"""Job CSV time options (issue 12): epoch ms, seconds relative to an origin, rows with empty
required fields skipped and counted per reason; the library, and `planner ingest` on the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from planner import cli, logs
from planner.errors import InputError
from planner.logs import csvjobs
from planner.store import db

# an Alibaba-GPU-like trace: seconds since the trace start; a pending pod has no start/end
RELATIVE = """job,start_time,end_time,gpus,plan
j1,0,3600,4,a
j2,600,7200,2,b
j3,,,8,pending
j4,1200,,1,running
j5,86400,90000,,c
j6,90000,93600,2,d
"""
MAPPING = {"job_id": "job", "start": "start_time", "end": "end_time", "nodes": "gpus"}


def _year(t_s: float) -> int:
    return datetime.fromtimestamp(float(t_s), tz=UTC).year


def test_relative_seconds_with_an_origin_and_skip_incomplete(write_file):
    p = write_file("trace.csv", RELATIVE)
    job = csvjobs.read(p, {**MAPPING, "time_origin": "2020-07-01T00:00:00", "skip_incomplete": "1"})
    assert list(job.job_id) == ["j1", "j2", "j6"]
    assert {_year(t) for t in job.start_s} == {2020}
    assert job.start_s[0] == datetime(2020, 7, 1, tzinfo=UTC).timestamp()
    assert job.end_s[1] - job.start_s[1] == 6600
    # every skipped row counted once under its first empty field
    assert job.skipped_why == {"empty start_time": 1, "empty end_time": 1, "empty gpus": 1}
    assert job.skipped == 3


def test_without_skip_incomplete_an_empty_field_names_its_line(write_file):
    p = write_file("trace.csv", RELATIVE)
    with pytest.raises(InputError) as e:
        csvjobs.read(p, {**MAPPING, "time_origin": "2020-07-01"})
    assert "line 4" in str(e.value) and "start_time" in str(e.value)


def test_relative_seconds_without_an_origin_land_in_1970(write_file):
    """What the issue saw: without the origin the trace loads as 1970 (the option is the fix)."""
    p = write_file("trace.csv", RELATIVE)
    job = csvjobs.read(p, {**MAPPING, "skip_incomplete": "1"})
    assert _year(job.start_s[0]) == 1970


def test_epoch_milliseconds(write_file):
    p = write_file("ms.csv", "start,end,nodes\n1612988475000,1612992075000,3\n1612990000000,1612999000500,1\n")
    job = csvjobs.read(p, {"start": "start", "end": "end", "nodes": "nodes", "time_unit": "ms"})
    assert job.start_s[0] == 1612988475.0 and job.end_s[1] == pytest.approx(1612999000.5)
    with pytest.raises(InputError) as e:  # the same file read as seconds is far in the future
        csvjobs.read(p, {"start": "start", "end": "end", "nodes": "nodes"})
    assert "after 2100" in str(e.value)


@pytest.mark.parametrize("opts, field", [({"time_unit": "us"}, "time-unit"),
                                         ({"time_origin": "yesterday"}, "time-origin"),
                                         ({"time_origin": "1900-01-01"}, "time-origin")])
def test_bad_time_options_name_the_option(write_file, opts, field):
    p = write_file("trace.csv", RELATIVE)
    with pytest.raises(InputError) as e:
        csvjobs.read(p, {**MAPPING, **opts})
    assert field in str(e.value)
    assert "\n" not in str(e.value)


def test_all_rows_incomplete_is_one_clear_line(write_file):
    p = write_file("pending.csv", "job,start_time,end_time,gpus\na,,,1\nb,,,2\n")
    with pytest.raises(InputError) as e:
        csvjobs.read(p, {**MAPPING, "skip_incomplete": "1"})
    assert "no complete rows" in str(e.value) and "empty start_time: 2" in str(e.value)


def test_cli_ingest_relative_times_origin_and_skip_incomplete(write_file, tmp_path, capsys):
    p = write_file("alibaba-like.csv", RELATIVE)
    dbp = tmp_path / "cli.duckdb"
    rc = cli.main(["ingest", str(p), "--db", str(dbp), "--map-job-id", "job", "--map-start", "start_time",
                   "--map-end", "end_time", "--map-nodes", "gpus", "--time-origin", "2020-07-01T00:00:00",
                   "--skip-incomplete", "--json"])
    out = capsys.readouterr().out
    assert rc == 0, out
    rep = json.loads(out)
    assert rep["rows"] == 3 and rep["skipped"] == 3
    assert rep["skipped_why"]["empty start_time"] == 1
    con = db.connect(dbp, read_only=True)
    try:
        row = logs.list_logs(con).iloc[0]
        assert _year(row["start_s"]) == 2020 and _year(row["end_s"]) == 2020
    finally:
        con.close()


def test_cli_ingest_milliseconds(write_file, tmp_path, capsys):
    p = write_file("ms.csv", "start,end,nodes\n1612988475000,1612992075000,3\n")
    rc = cli.main(["ingest", str(p), "--db", str(tmp_path / "m.duckdb"), "--format", "csv",
                   "--time-unit", "ms", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0 and rep["rows"] == 1
    assert rep["start"].startswith("2021-02-10")


@pytest.mark.parametrize("chunk_rows", [1, 2, 4, 10**6])
def test_time_options_and_skip_incomplete_inside_the_chunked_reader(write_file, chunk_rows):
    """Per chunk: the time options, incomplete rows dropped and counted across chunks, partition
    kept; job ids and line numbers are the file's, whatever the chunk size."""
    p = write_file("rel.csv", "start,end,gpus,queue\n,,1,p\n,9,1,p\n0,3600,4,a\n5,,1,b\n600,7200,2,b\n7,8,,c\n")
    m = {"start": "start", "end": "end", "nodes": "gpus", "partition": "queue",
         "time_origin": "2020-07-01T00:00:00", "skip_incomplete": "1"}
    job = csvjobs.read(p, m, chunk_rows=chunk_rows)
    assert list(job.job_id) == ["3", "5"] and list(job.partition) == ["a", "b"]
    assert [_year(t) for t in job.start_s] == [2020, 2020]
    assert job.end_s[1] - job.start_s[1] == 6600
    assert job.skipped_why == {"empty start": 2, "empty end": 1, "empty gpus": 1} and job.skipped == 4
    # a bad value after dropped rows still names its own line of the file
    bad = write_file("bad.csv", "start,end,gpus\n,,1\n0,10,1\n,5,1\n3,x,1\n")
    with pytest.raises(InputError) as e:
        csvjobs.read(bad, {"start": "start", "end": "end", "nodes": "gpus", "time_unit": "ms",
                           "skip_incomplete": "1"}, chunk_rows=chunk_rows)
    assert "line 5" in str(e.value), str(e.value)
    # incomplete rows filling whole chunks are not an error while another chunk has a complete row
    tail = write_file("tail.csv", "start,end,gpus\n,,1\n,,1\n,,1\n0,10,1\n")
    job = csvjobs.read(tail, {"start": "start", "end": "end", "nodes": "gpus", "skip_incomplete": "1"},
                       chunk_rows=chunk_rows)
    assert list(job.job_id) == ["4"] and job.skipped_why == {"empty start": 3}
    with pytest.raises(InputError, match="no complete rows.*empty start: 3"):
        csvjobs.read(write_file("none.csv", "start,end,gpus\n,,1\n,,1\n,4,1\n"),
                     {"start": "start", "end": "end", "nodes": "gpus", "skip_incomplete": "1"},
                     chunk_rows=chunk_rows)
