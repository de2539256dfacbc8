"""The store: schema, dedup by content, one transaction per load."""

from __future__ import annotations

import pytest

from planner import logs
from planner.errors import InputError
from planner.store import catalog, db
from tests.helpers import TINY_NODE_LOG


def test_schema_tables_and_default_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_DB", str(tmp_path / "sub" / "x.duckdb"))
    con = db.connect()
    names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert set(db.TABLES) <= names
    con.close()
    assert (tmp_path / "sub" / "x.duckdb").exists()
    ro = db.connect(tmp_path / "sub" / "x.duckdb", read_only=True)
    assert db.table_counts(ro)["logs"] == 0
    ro.close()


def test_tiny_rows(tiny_con):
    c = db.table_counts(tiny_con, 1)
    # 3 nodes; node_events: 3 snapshot rows + 7 changes (the repeated c row dropped)
    assert c == {"logs": 1, "nodes": 3, "node_events": 10, "jobs": 0, "idle_series": 5, "fragments": 5,
                 "node_states": 0}
    names = [r[0] for r in tiny_con.execute("SELECT name FROM nodes ORDER BY node_idx").fetchall()]
    assert names == ["a", "b", "c"]
    rep = logs.list_logs(tiny_con).iloc[0]
    assert (rep["name"], rep["kind"], rep["nodes"], rep["rows"]) == ("tiny", "node", 3, 11)
    assert rep["start"] == "2021-01-01T00:00:00Z" and rep["end"] == "2021-01-01T01:00:00Z"


def test_same_file_twice_is_not_duplicated(mem_con, write_file):
    p = write_file("tiny.csv", TINY_NODE_LOG)
    r1 = logs.ingest(mem_con, p)
    before = db.table_counts(mem_con)
    r2 = logs.ingest(mem_con, p)
    assert r2["already_loaded"] is True and not r1["already_loaded"] and r2["log"] == r1["log"]
    gz = write_file("copy.csv", TINY_NODE_LOG)  # same bytes, other name: same content
    assert logs.ingest(mem_con, gz, name="other")["already_loaded"] is True
    assert db.table_counts(mem_con) == before


def test_other_file_under_taken_name(mem_con, write_file):
    logs.ingest(mem_con, write_file("tiny.csv", TINY_NODE_LOG))
    other = write_file("x.csv", TINY_NODE_LOG.replace("01:00:00,b,1", "01:00:00,b,0"))
    with pytest.raises(InputError, match="already loaded"):
        logs.ingest(mem_con, other, name="tiny.csv")


class FailingCon:
    """Proxy that fails on the n-th matching statement, to break a load mid-transaction."""

    def __init__(self, con, fail_on):
        self._con, self._fail_on = con, fail_on

    def execute(self, sql, *a, **k):
        if sql.startswith(self._fail_on):
            raise RuntimeError("disk full (simulated)")
        return self._con.execute(sql, *a, **k)

    def __getattr__(self, name):
        return getattr(self._con, name)


@pytest.mark.parametrize("fail_on", ["INSERT INTO idle_series", "INSERT INTO fragments", "INSERT INTO jobs"])
def test_failed_load_rolls_back(mem_con, write_file, fail_on):
    logs.ingest(mem_con, write_file("tiny.csv", TINY_NODE_LOG))
    before = db.table_counts(mem_con)
    slurm = write_file("s.sacct", "JobID|Start|End|NNodes|NodeList\n"
                                  "1|2021-01-01T00:00:00|2021-01-01T01:00:00|2|n[1-2]\n")
    path = slurm if fail_on == "INSERT INTO jobs" else write_file("t2.csv", TINY_NODE_LOG + "2021-01-01 02:00:00,a,0\n")
    with pytest.raises(RuntimeError, match="simulated"):
        logs.ingest(FailingCon(mem_con, fail_on), path)
    assert db.table_counts(mem_con) == before
    logs.ingest(mem_con, path)  # and it loads fine afterwards
    assert db.table_counts(mem_con)["logs"] == before["logs"] + 1


def test_ensure_default_loads_once(summit_con):
    n = db.table_counts(summit_con)["node_events"]
    assert catalog.ensure_default(summit_con) == "summit-2021"
    assert db.table_counts(summit_con)["node_events"] == n == 851_590


def test_remove_log_then_reload_with_other_options(mem_con, write_file):
    p = write_file("r.csv", "start,end,nodes\n0,100,2\n50,150,1\n")
    assert logs.ingest(mem_con, p)["nodes"] == 3
    assert logs.remove_log(mem_con, "r.csv") is True and logs.remove_log(mem_con, "r.csv") is False
    assert all(v == 0 for v in db.table_counts(mem_con).values())
    assert logs.ingest(mem_con, p, machine_nodes=8)["nodes"] == 8


def test_remove_log_clears_its_live_rows_and_no_other_logs(mem_con, write_file):
    from planner.live import store as live_store

    ids = [logs.ingest(mem_con, write_file(f"{n}.csv", f"start,end,nodes\n0,100,{k}\n"))["log_id"]
           for n, k in (("a", 2), ("b", 3))]
    live_store.ensure_schema(mem_con)
    for lid in ids:
        mem_con.execute("INSERT INTO live_polls (log_id, t_s, ok) VALUES (?, 0, true)", [lid])
    assert logs.remove_log(mem_con, "a.csv") is True
    left = [r[0] for r in mem_con.execute("SELECT log_id FROM live_polls").fetchall()]
    assert left == [ids[1]]


def test_cli_logs_remove(tmp_path, tiny_log, capsys):
    import json

    from planner import cli
    dbp = str(tmp_path / "r.duckdb")
    assert cli.main(["ingest", str(tiny_log), "--db", dbp]) == 0
    assert cli.main(["logs", "--db", dbp, "--remove", "tiny.csv", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == []
    assert cli.main(["logs", "--db", dbp, "--remove", "tiny.csv"]) == 2


def test_not_a_database_file_is_input_error(tmp_path):
    p = tmp_path / "junk.duckdb"
    p.write_bytes(b"this is not a duckdb file" * 100)
    with pytest.raises(InputError, match="cannot open the database"):
        db.connect(p)


def test_fragments_cli_reads_read_only(tmp_path, tiny_log, capsys):
    from planner import cli
    dbp = tmp_path / "ro.duckdb"
    con = db.connect(dbp)
    logs.ingest(con, tiny_log, name="tiny")
    con.close()
    ro = db.connect(dbp, read_only=True)  # another reader holds it open
    try:
        assert cli.main(["fragments", "--db", str(dbp), "--log", "tiny", "--json"]) == 0
        assert cli.main(["logs", "--db", str(dbp), "--json"]) == 0
    finally:
        ro.close()
