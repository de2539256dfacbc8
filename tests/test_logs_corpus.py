"""Every file in tests/corpus/ is bad input: a one-line InputError naming the file (and the line
or field where one exists), `planner ingest` exit code 2, and the database unchanged."""

from __future__ import annotations

import pytest

from planner import cli, db, logs
from planner.errors import InputError
from tests.conftest import CORPUS

FILES = sorted(p for p in CORPUS.iterdir() if p.is_file())

# where the error must point (line or field), for the files where one exists
WHERE = {
    "bad_nodelist.sacct": "line 2", "bad_time.csv": "line 3", "end_before_start.sacct": "line 2",
    "idle_not_binary.csv": "line 4", "inf_end.csv": "line 3", "inf_run.swf": "line 3",
    "misnamed_column.csv": "field 'end'", "missing_nodelist.sacct": "field 'NodeList'",
    "nan_time.csv": "line 3", "negative_run.csv": "line 3", "negative_wait.swf": "line 3",
    "nodelist_count_mismatch.sacct": "line 3", "oversubscribed.swf": "field 'machine-nodes'",
    "short_row.swf": "line 3", "text_in_idle.csv": "line 4", "text_in_nnodes.sacct": "line 2",
    "text_in_nodes.csv": "line 2", "text_in_run.swf": "line 3", "time_backwards.csv": "line 5",
    "unknown_format.txt": "line 1",
}


def test_corpus_is_there():
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_bad_input(path, loaded_db, capsys):
    con = db.connect(loaded_db)
    before = db.table_counts(con)
    with pytest.raises(InputError) as e:
        logs.ingest(con, path)
    msg = str(e.value)
    assert path.name in msg and "\n" not in msg
    if path.name in WHERE:
        assert WHERE[path.name] in msg
    assert db.table_counts(con) == before
    con.close()
    assert cli.main(["ingest", str(path), "--db", str(loaded_db)]) == 2
    err = capsys.readouterr().err
    assert path.name in err and len(err.strip().splitlines()) == 1
    con = db.connect(loaded_db, read_only=True)
    assert db.table_counts(con) == before
    con.close()


def test_cli_other_bad_input(loaded_db, tiny_log, tmp_path, capsys):
    assert cli.main(["ingest", str(tmp_path / "absent.csv"), "--db", str(loaded_db)]) == 2
    assert cli.main(["ingest", str(tiny_log), "--db", str(loaded_db), "--machine-nodes", "0"]) == 2
    assert cli.main(["fragments", "--db", str(loaded_db), "--log", "nope"]) == 2
    assert cli.main(["fragments", "--db", str(loaded_db), "--log", "tiny.csv", "--pool-size", "9"]) == 2
    assert cli.main(["fragments", "--db", str(loaded_db), "--log", "tiny.csv", "--start", "yesterday"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 5 and all(line.startswith("planner ") for line in err)
