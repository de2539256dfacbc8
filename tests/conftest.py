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
from pathlib import Path

import pytest

from planner import db, logs

CORPUS = Path(__file__).parent / "corpus"

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
    logs.ensure_default(con)
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
