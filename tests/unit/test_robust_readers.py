"""Issue 23, finding 5: loads that succeeded with wrong data. Each case is generated here."""

from __future__ import annotations

import gzip

import pytest

from planner import logs
from planner.errors import InputError
from planner.store import db

SWF_ROW = "{j} {s} 0 100 4 -1 -1 4 100 -1 1 1 1 -1 1 1 -1 -1"


@pytest.fixture
def con():
    c = db.connect(":memory:")
    yield c
    c.close()


def _names(con, log):
    return sorted(r[0] for r in con.execute(
        "SELECT n.name FROM nodes n JOIN logs l USING (log_id) WHERE l.name = ?", [log]).fetchall())


@pytest.mark.parametrize("eol", ["\r", "\r\n", "mixed"])
def test_swf_header_survives_cr_only_and_mixed_line_ends(tmp_path, con, eol):
    lines = ["; UnixStartTime: 1000000000", "; MaxNodes: 64", "; MaxProcs: 64"]
    lines += [SWF_ROW.format(j=j, s=10 * j) for j in range(1, 7)]
    if eol == "mixed":
        text = "".join(ln + ("\r", "\n", "\r\n")[k % 3] for k, ln in enumerate(lines))
    else:
        text = eol.join(lines) + eol
    p = tmp_path / "cr.swf"
    p.write_bytes(text.encode())
    rep = logs.ingest(con, p, name="cr")
    assert rep["nodes"] == 64 and rep["machine_nodes_from"] == "header"
    assert rep["rows"] == 6
    assert rep["start"].startswith("2001-09-09T01:46:50")


def test_node_names_are_text_not_numbers(tmp_path, con):
    p = tmp_path / "names.csv"
    rows = ["time,node,idle"] + [f"0,{n},1" for n in ("1", "01", "001", "1e3", "1000", "1.0")] + ["10,1,0"]
    p.write_text("\n".join(rows) + "\n")
    rep = logs.ingest(con, p, name="names")
    assert rep["nodes"] == 6
    assert _names(con, "names") == sorted(["1", "01", "001", "1e3", "1000", "1.0"])


def test_node_names_do_not_depend_on_the_chunk(tmp_path):
    """Names 001..100 that meet a text name only in a later chunk stay 100 + 1 names (pandas
    inferred numbers per chunk: 200 nodes)."""
    from planner.logs import nodestate

    p = tmp_path / "chunks.csv"
    names = [f"{i:03d}" for i in range(1, 101)]
    rows = ["time,node,idle"] + [f"0,{n},1" for n in names]
    rows += [f"{t},{n},{t % 2}" for t in range(1, 4) for n in names] + ["5,x1,1"] + [f"6,{n},1" for n in names]
    p.write_text("\n".join(rows) + "\n")
    log = nodestate.read(p, chunk_rows=150)
    assert len(log.names) == 101
    assert set(names) <= set(log.names)


def test_sacct_time_zone_applies_per_row(tmp_path, con):
    p = tmp_path / "tz.sacct"
    p.write_text("JobID|Start|End|NNodes|NodeList\n"
                 "1|2021-01-10T00:00:00|2021-01-10T01:00:00|1|n1\n"
                 "2|2021-01-10T00:00:00+00:00|2021-01-10T01:00:00+00:00|1|n2\n")
    logs.ingest(con, p, name="tz", tz="America/Chicago")
    got = dict(con.execute("SELECT job_id, start_s FROM jobs").fetchall())
    assert got["2"] == 1610236800.0  # explicit offset: as given
    assert got["1"] == 1610236800.0 + 6 * 3600  # naive: Chicago winter time, UTC-6


def test_stray_quotes_in_sacct_swallow_no_job(tmp_path, con):
    """sacct -P does not quote: a job name with a lone quote is text (it swallowed 6 of 12 jobs)."""
    rows = ["JobID|JobName|Start|End|NNodes|NodeList"]
    for j in range(1, 13):
        name = {4: '"train', 9: 'eval"'}.get(j, f"job{j}")
        rows.append(f"{j}|{name}|2021-01-01T{j:02d}:00:00|2021-01-01T{j:02d}:30:00|1|n{j}")
    p = tmp_path / "quotes.sacct"
    p.write_text("\n".join(rows) + "\n")
    rep = logs.ingest(con, p, name="q")
    assert rep["rows"] == 12


def test_stray_quote_in_a_used_sacct_field_is_refused_with_line_and_field(tmp_path, con):
    p = tmp_path / "quotes.sacct"
    p.write_text("JobID|Start|End|NNodes|NodeList\n1|2021-01-01T00:00:00|2021-01-01T01:00:00|1|n1\n"
                 '"2|2021-01-01T00:00:00|2021-01-01T01:00:00|1|n2\n')
    with pytest.raises(InputError, match=r"line 3, field 'JobID'.*quote"):
        logs.ingest(con, p, name="q")


def test_quoted_field_spanning_lines_in_a_csv_is_refused(tmp_path, con):
    """A quote opened in the last column and closed at the end of a later row made one job of
    six rows, silently."""
    rows = ["start,end,nodes,job_id"] + [f"{1000 + j},{2000 + j},1,j{j}" for j in range(12)]
    rows[3] = '1002,2002,1,"j2'
    rows[8] = '1007,2007,1,j7"'
    p = tmp_path / "quotes.csv"
    p.write_text("\n".join(rows) + "\n")
    with pytest.raises(InputError, match=r"line 4.*quote"):
        logs.ingest(con, p, name="q")


def test_fractional_seconds_are_kept_in_the_report(tmp_path, con):
    p = tmp_path / "frac.csv"
    p.write_text("start,end,nodes\n1612988475.25,1612988575.75,2\n")
    rep = logs.ingest(con, p, name="frac")
    assert rep["start"] == "2021-02-10T20:21:15.250000Z"
    assert rep["end"] == "2021-02-10T20:22:55.750000Z"
    assert rep["start_s"] == 1612988475.25 and rep["end_s"] == 1612988575.75
    row = logs.list_logs(con).iloc[0]
    assert row["start"] == "2021-02-10T20:21:15.250000Z"


@pytest.mark.parametrize("ch", ["\x85", "\x9b", "\u2028", "\x07"])
def test_control_characters_in_node_names_are_refused_with_line_and_field(tmp_path, con, ch):
    p = tmp_path / "ctl.csv"
    p.write_text(f"time,node,idle\n0,a,1\n0,b{ch}x,1\n5,a,0\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        logs.ingest(con, p, name="ctl")
    assert "line 3" in str(e.value) and "node" in str(e.value) and "control" in str(e.value)


@pytest.mark.parametrize("ch", ["\x85", "\x9b"])
def test_control_characters_in_host_lists_are_refused_with_line_and_field(tmp_path, con, ch):
    p = tmp_path / "ctl.sacct"
    p.write_text("JobID|Start|End|NNodes|NodeList\n1|2021-01-01T00:00:00|2021-01-01T01:00:00|1|n1\n"
                 f"2|2021-01-01T00:00:00|2021-01-01T01:00:00|1|n{ch}2\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        logs.ingest(con, p, name="ctl")
    assert "line 3" in str(e.value) and "NodeList" in str(e.value)


def test_cr_only_gzip_node_log(tmp_path, con):
    p = tmp_path / "cr.csv.gz"
    with gzip.open(p, "wb") as fh:
        fh.write(b"time,node,idle\r0,a,1\r0,b,0\r10,a,0\r20,b,1\r")
    rep = logs.ingest(con, p, name="crgz")
    assert rep["nodes"] == 2 and rep["rows"] == 4


def test_a_load_larger_than_its_store_budget_is_refused_before_writing(tmp_path):
    """Issue 23, finding 4: a 120-byte host list names 10,000 nodes; with 1 MiB allowed the load
    is refused from the parsed tables' estimate before any row is written; with room it loads and
    the estimate is not below what DuckDB stores."""
    f = tmp_path / "wide.sacct"
    f.write_text("JobID|Start|End|NNodes|NodeList\n"
                 "1|2021-01-01T00:00:00|2021-01-01T01:00:00|10000|n[00000-09999]\n"
                 "2|2021-01-01T00:30:00|2021-01-01T02:00:00|1|m1\n")
    p = tmp_path / "x.duckdb"
    con = db.connect(p)
    con.execute("CHECKPOINT")
    empty = p.stat().st_size
    with pytest.raises(logs.StoreTooLarge, match=r"wide.sacct: storing this log needs about 3\.\d MiB, more "
                       r"than the 1\.0 MiB allowed") as e:
        logs.ingest(con, f, max_store_bytes=2**20)
    assert con.execute("SELECT count(*) FROM logs").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM nodes").fetchone()[0] == 0
    logs.ingest(con, f, max_store_bytes=e.value.need)
    con.execute("CHECKPOINT")
    con.close()
    assert p.stat().st_size - empty <= e.value.need
