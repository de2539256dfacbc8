"""SWF reader: header parsing, the field rules, the shipped SWF logs."""

from __future__ import annotations

import numpy as np
import pytest

from planner import logs
from planner.logs import swf
from planner.paths import DATASETS

ROW = "{j} {sub} {wait} {run} {alloc} -1 -1 {req} 100 -1 1 1 1 -1 -1 -1 -1 -1"


def test_parse_header():
    h = swf.parse_header(["; Version: 2.2", "; MaxNodes: 100", ";MaxProcs:100",
                          "; UnixStartTime: 843480031", "; Note: a: b", "1 2 3"])
    assert h["MaxNodes"] == "100" and h["MaxProcs"] == "100" and h["UnixStartTime"] == "843480031"
    assert h["Note"] == "a: b"


def test_rules(write_file):
    text = "\n".join(["; UnixStartTime: 100", "; MaxProcs: 16",
                      ROW.format(j=1, sub=0, wait=5, run=10, alloc=2, req=4),     # start 105
                      ROW.format(j=2, sub=3, wait=-1, run=10, alloc=-1, req=4),   # start=submit, nodes=req
                      ROW.format(j=3, sub=3, wait=0, run=0, alloc=2, req=2),      # run 0: skipped
                      ROW.format(j=4, sub=3, wait=0, run=-1, alloc=2, req=2),     # run -1: skipped
                      ROW.format(j=5, sub=3, wait=0, run=5, alloc=0, req=-1)]) + "\n"  # no nodes: skipped
    j = swf.read(write_file("r.swf", text))
    assert [str(x) for x in j.job_id] == ["1", "2"]
    assert list(j.start_s) == [105, 103] and list(j.end_s) == [115, 113]
    assert list(j.submit_s) == [100, 103] and list(j.nodes) == [2, 4]
    assert j.skipped == 3 and j.machine_nodes == 16 and j.machine_nodes_from == "header"


def test_machine_size_from_max_concurrent_and_flag(mem_con, write_file):
    text = "\n".join([ROW.format(j=1, sub=0, wait=0, run=10, alloc=3, req=3),
                      ROW.format(j=2, sub=5, wait=0, run=10, alloc=4, req=4)]) + "\n"
    p = write_file("nohdr.swf", text)
    r = logs.ingest(mem_con, p)
    assert (r["nodes"], r["machine_nodes_from"]) == (7, "max concurrent")
    r2 = logs.ingest(mem_con, write_file("nohdr2.swf", text + "\n"), machine_nodes=10)
    assert (r2["nodes"], r2["machine_nodes_from"]) == (10, "flag")


def test_plain_and_gzip_agree(mem_con, write_file):
    text = "; MaxNodes: 8\n" + ROW.format(j=1, sub=0, wait=0, run=10, alloc=3, req=3) + "\n"
    from planner.store import db
    a = logs.ingest(mem_con, write_file("a.swf", text))
    b = logs.ingest(db.connect(":memory:"), write_file("b.swf.gz", text, gz=True))
    assert b["log"] == "b.swf" and b["format"] == "swf" and not b["already_loaded"]
    for k in ("rows", "nodes", "start", "end", "skipped", "content_sha256"):
        assert a[k] == b[k]
    # the gzip of a loaded file is the same content: not stored again, and the report says so
    again = logs.ingest(mem_con, write_file("b.swf.gz", text, gz=True))
    assert again["already_loaded"] and again["log"] == "a.swf"
    assert "already loaded as 'a.swf'" in again["notes"][-1]


@pytest.mark.parametrize("name,nodes,rows", [("KTH-SP2-1996-2.1-cln.swf.gz", 100, 28467),
                                              ("ANL-Theta-2022.swf.gz", 4360, 23911)])
def test_shipped_swf(mem_con, name, nodes, rows):
    path = DATASETS / name
    assert logs.detect_format(path) == "swf"
    r = logs.ingest(mem_con, path)
    assert (r["nodes"], r["machine_nodes_from"], r["rows"]) == (nodes, "header", rows)
    assert r["kind"] == "jobs" and r["node_identity"] == "derived"
    # real logs overlap a little: clipped, reported, far below the refusal share
    assert 0 < r["oversubscription"]["oversub_fraction"] < 0.01
    n = mem_con.execute("SELECT min(idle_nodes), max(idle_nodes) FROM idle_series s JOIN logs l "
                        "USING (log_id) WHERE l.name = ?", [r["log"]]).fetchone()
    assert 0 <= n[0] <= n[1] <= nodes
    if name.startswith("KTH"):  # UnixStartTime 843480031 + first kept job's start
        assert r["start"].startswith("1996-09")
    assert np.isfinite(r["span_h"]) and r["span_h"] > 1000


@pytest.mark.parametrize("j,alloc,where,what", [
    ("1.5", "2", "field 1 (job)", "expected a whole number, got '1.5'"),
    ("1", "2.5", "field 5 (allocated procs)", "expected a whole number, got '2.5'"),
    ("100000000000000000", "2", "field 1 (job)", "whole number out of range"),
])
def test_whole_number_fields(mem_con, write_file, j, alloc, where, what):
    p = write_file("w.swf", "; MaxNodes: 8\n" + ROW.format(j=j, sub=0, wait=0, run=100, alloc=alloc, req=2) + "\n")
    with pytest.raises(logs.InputError) as e:
        logs.ingest(mem_con, p, format="swf")
    assert f"line 2, field '{where}'" in str(e.value) and what in str(e.value)


@pytest.mark.parametrize("prefix", ["\ufeff", "; Comment: " + "x" * 70_000 + "\n", "\ufeff" + ";\n" * 40_000],
                         ids=["bom", "long-line", "bom-40000-lines"])
def test_header_read_with_bom_or_longer_than_64k(mem_con, write_file, prefix):
    """A UTF-8 BOM or a header past the first 64 KiB must not hide the header (was: 1970 dates
    and the machine size from the busiest moment)."""
    text = (prefix + "; UnixStartTime: 1600000000\n; MaxNodes: 100\n"
            + ROW.format(j=1, sub=0, wait=0, run=10, alloc=3, req=3) + "\n"
            + ROW.format(j=2, sub=5, wait=0, run=10, alloc=50, req=50) + "\n")
    r = logs.ingest(mem_con, write_file("h.swf", text))
    assert r["nodes"] == 100 and r["machine_nodes_from"] == "header"
    assert r["start"] == "2020-09-13T12:26:40Z" and r["rows"] == 2


@pytest.mark.parametrize("chunk_rows", [1, 3])
def test_chunked_reading_matches_whole(write_file, chunk_rows):
    rows = "".join(ROW.format(j=j, sub=j * 10, wait=j % 3 - 1, run=(j % 4) * 5, alloc=j % 5, req=3) + "\n"
                   for j in range(1, 20))
    p = write_file("c.swf", "; MaxNodes: 8\n" + rows)
    whole, part = swf.read(p, chunk_rows=10**6), swf.read(p, chunk_rows=chunk_rows)
    for k in ("job_id", "submit_s", "start_s", "end_s", "nodes"):
        assert list(getattr(whole, k)) == list(getattr(part, k))
    assert (whole.skipped, whole.skipped_why, whole.machine_nodes) == (part.skipped, part.skipped_why, 8)


@pytest.mark.parametrize("chunk_rows", [1, 3, 10**6])
def test_chunked_reading_keeps_queue_and_partition(write_file, chunk_rows):
    """Fields 15/16 per chunk, concatenated: chunks with no label give '' (unknown); a log with
    no label in any chunk has None."""
    lab = ROW.rsplit(" ", 4)[0]  # up to field 14
    rows = "".join(lab.format(j=j, sub=j * 10, wait=0, run=5, alloc=1, req=1)
                   + (" -1 -1" if j < 4 else f" 2 {7 + j % 2}") + " -1 -1\n" for j in range(1, 9))
    j = swf.read(write_file("q.swf", "; MaxNodes: 8\n" + rows), chunk_rows=chunk_rows)
    assert list(j.partition) == ["", "", "", "7", "8", "7", "8", "7"]
    assert list(j.queue) == ["", "", "", "2", "2", "2", "2", "2"]
    none = "".join(ROW.format(j=j, sub=j * 10, wait=0, run=5, alloc=1, req=1) + "\n" for j in range(1, 9))
    j = swf.read(write_file("n.swf", "; MaxNodes: 8\n" + none), chunk_rows=chunk_rows)
    assert j.partition is None and j.queue is None
