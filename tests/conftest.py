"""Shared fixtures.

summit_db    session: path of a DuckDB file with the shipped Summit log loaded ('summit-2021')
summit_con   session: an open connection to that file (treat as read-only)
mem_con      a fresh in-memory planner database
write_file   write_file(name, text, gz=False) -> Path under tmp_path
tiny_log     path of the 3-node hand-made node log (TINY_NODE_LOG; figures counted by hand in
             tests/test_fragments.py)
tiny_con     mem_con with the tiny log loaded as 'tiny'
loaded_db    path of a database file already holding the tiny log (as 'tiny.csv')
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from hypothesis import settings

from planner import logs
from planner.store import catalog, db

# Under CI the property tests draw the same examples every run (a failure there reproduces);
# locally each run draws new ones and keeps exploring.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")

CORPUS = Path(__file__).parent / "corpus"

# tests/corpus/ file -> text its refusal must contain (the line or field, or the cause), where one
# exists: tests/test_logs_corpus.py (library, in-process CLI), tests/test_hostile_inputs.py (subprocess)
CORPUS_WHERE = {
    "bad_nodelist.sacct": "line 2, field 'NodeList'",
    "bad_time.csv": "line 3",
    "before_1970.csv": "line 2, field 'start'",
    "before_1970.swf": "line 3",
    "binary_junk.dat": "line 1",
    "binary_nul.bin": "binary file",
    "empty.csv": "empty",
    "end_before_start.sacct": "line 2",
    "far_future.sacct": "line 3, field 'End'",
    "far_future_epoch.csv": "line 3, field 'end'",
    "far_future_iso.csv": "line 4, field 'time'",
    "header_only.csv": "header only",
    "header_only.sacct": "header only",
    "huge_hostlist.sacct": "line 2, field 'NodeList'",
    "huge_job.csv": "exceeds the limit",
    "huge_machine.swf": "field 'machine-nodes'",
    "huge_nodes_1e20.csv": "line 3, field 'nodes'",
    "huge_procs.swf": "line 2, field 'field 5 (allocated procs)'",
    "idle_not_binary.csv": "line 4",
    "inf_end.csv": "line 3",
    "inf_run.swf": "line 3",
    "inf_time.csv": "line 3, field 'time'",
    "letters_in_range.sacct": "line 2, field 'NodeList'",
    "misnamed_column.csv": "field 'end'",
    "missing_idle_column.csv": "missing column",
    "missing_nodelist.sacct": "field 'NodeList'",
    "nan_nodes.csv": "line 3, field 'nodes'",
    "nan_time.csv": "line 3",
    "negative_run.csv": "line 3",
    "negative_wait.swf": "line 3",
    "nodelist_count_mismatch.sacct": "line 3",
    "oversubscribed.swf": "field 'machine-nodes'",
    "semicolon_delimiter.csv": "separated by ';'",
    "short_row.swf": "line 3",
    "tab_delimiter.csv": "separated by tabs",
    "text_in_idle.csv": "line 4",
    "text_in_nnodes.sacct": "line 2",
    "text_in_nodes.csv": "line 2",
    "text_in_run.swf": "line 3",
    "time_backwards.csv": "line 5",
    "truncated.csv.gz": "gzip",
    "unknown_format.txt": "line 1",
    "zero_durations.csv": "no usable jobs",
    "zero_runs.swf": "no usable jobs",
}

# t = 0 is 2021-01-01 00:00:00 UTC. a idle [0,1200) and [1800,3600); b idle [600,1800);
# c idle [0,1200) and [2400,3600); b's row at 3600 is at the log end (zero length).
TINY_NODE_LOG = """time,node,idle
2021-01-01 00:00:00,a,1
2021-01-01 00:00:00,b,0
2021-01-01 00:00:00,c,1
2021-01-01 00:10:00,b,1
2021-01-01 00:20:00,a,0
2021-01-01 00:20:00,c,0
2021-01-01 00:30:00,a,1
2021-01-01 00:30:00,b,0
2021-01-01 00:40:00,c,1
2021-01-01 00:40:00,c,1
2021-01-01 01:00:00,b,1
"""
TINY_T0 = 1609459200.0  # 2021-01-01T00:00:00Z


@pytest.fixture(scope="session")
def summit_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("summit") / "summit.duckdb"
    con = db.connect(path)
    catalog.ensure_default(con)
    con.close()
    return path


@pytest.fixture(scope="session")
def summit_con(summit_db):
    con = db.connect(summit_db)
    yield con
    con.close()


@pytest.fixture
def mem_con():
    con = db.connect(":memory:")
    yield con
    con.close()


@pytest.fixture
def write_file(tmp_path):
    def _write(name: str, text: str, gz: bool = False) -> Path:
        p = tmp_path / name
        data = text.encode()
        p.write_bytes(gzip.compress(data) if gz else data)
        return p
    return _write


@pytest.fixture
def tiny_log(write_file) -> Path:
    return write_file("tiny.csv", TINY_NODE_LOG)


@pytest.fixture
def tiny_con(mem_con, tiny_log):
    logs.ingest(mem_con, tiny_log, name="tiny")
    return mem_con


@pytest.fixture
def loaded_db(tmp_path, tiny_log) -> Path:
    """A database file that already holds one good log (so 'unchanged' is not trivially 0)."""
    path = tmp_path / "loaded.duckdb"
    con = db.connect(path)
    logs.ingest(con, tiny_log)
    con.close()
    return path


@pytest.fixture(autouse=True)
def _keep_main_module():
    """Streamlit's AppTest runs app.py as `__main__` and leaves it there; a sweep started later in
    the same process spawns its workers, which re-import the parent's `__main__` by path and so
    ran the app's pages (opening the default database). Put pytest's `__main__` back after each test."""
    import sys

    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture
def open_app(tmp_path, monkeypatch):
    """open_app(db, page=None, query=None) -> Streamlit AppTest of app.py on database `db`, the
    app's workspaces under tmp_path; run (no exception) and switched to app_pages/<page>.py."""
    from streamlit.testing.v1 import AppTest

    import appkit.data

    monkeypatch.setenv("PLANNER_SESSIONS_DIR", str(tmp_path / "sessions"))
    monkeypatch.setattr(appkit.data, "SESSIONS_ROOT", tmp_path / "sessions")

    def make(db, page: str | None = None, query: dict | None = None, timeout_s: float = 180):
        monkeypatch.setenv("PLANNER_DB", str(db))
        at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=timeout_s)
        if query:
            at.query_params.update(query)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        if page and page != "home":
            at.switch_page(f"app_pages/{page}.py").run()
        return at
    return make
