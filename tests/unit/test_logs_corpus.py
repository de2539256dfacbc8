"""Every file in tests/corpus/ is bad input: a one-line InputError naming the file (and the line
or field where one exists), `planner ingest` exit code 2, and the database unchanged."""

from __future__ import annotations

import pytest

from planner import cli, logs
from planner.errors import InputError
from planner.store import db
from tests.helpers import CORPUS
from tests.helpers import CORPUS_WHERE as WHERE

FILES = sorted(p for p in CORPUS.iterdir() if p.is_file())
# one file per reader and wrapper in the default tier (~0.3 s each); every file under -m slow
FAST = {"bad_time.csv", "idle_not_binary.csv", "negative_wait.swf", "bad_nodelist.sacct", "truncated.csv.gz",
        "binary_nul.bin"}


def test_corpus_is_there():
    assert len(FILES) >= 20
    assert set(WHERE) <= {p.name for p in FILES} and FAST <= {p.name for p in FILES}


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name, marks=() if p.name in FAST else pytest.mark.slow)
                                  for p in FILES])
def test_bad_input(path, loaded_db, capsys):
    con = db.connect(loaded_db)
    before = db.table_counts(con)
    with pytest.raises(InputError) as e:
        logs.ingest(con, path)
    msg = str(e.value)
    assert path.name in msg and "\n" not in msg and len(msg) < 800, msg[:300]
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


@pytest.mark.slow  # 0.4 s CPU measured in the default run: the slow tier
def test_cli_other_bad_input(loaded_db, tiny_log, tmp_path, capsys):
    assert cli.main(["ingest", str(tmp_path / "absent.csv"), "--db", str(loaded_db)]) == 2
    assert cli.main(["ingest", str(tiny_log), "--db", str(loaded_db), "--machine-nodes", "0"]) == 2
    assert cli.main(["fragments", "--db", str(loaded_db), "--log", "nope"]) == 2
    assert cli.main(["fragments", "--db", str(loaded_db), "--log", "tiny.csv", "--pool-size", "9"]) == 2
    assert cli.main(["fragments", "--db", str(loaded_db), "--log", "tiny.csv", "--start", "yesterday"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 5 and all(line.startswith("planner ") for line in err)
