"""Hostile log files: every one is refused with a one-line InputError naming the file and the
line or field, `planner ingest` exits 2, and the database keeps exactly the rows it had.

The corpus files are under tests/corpus/ (tests/unit/test_logs_corpus.py runs every file there
through the library and the in-process CLI); this module adds what issue 8 lists on top:
binary junk, wrong delimiters, times outside 1970..2100, zero durations, sizes that would
overflow the store, host lists that do not parse or explode, 10 MB lines (generated here, not
committed), overlapping use of one node, and real `python -m planner` subprocesses.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner import logs
from planner.errors import InputError
from planner.idle import fragments as F
from planner.idle.window import Window
from planner.store import db
from tests.helpers import CORPUS, ROOT
from tests.helpers import CORPUS_WHERE as WHERE

MB10 = 10 * 1024 * 1024


def counts(path) -> dict:
    con = db.connect(path, read_only=True)
    try:
        return db.table_counts(con)
    finally:
        con.close()


def assert_refused(path: Path, dbfile: Path, where: str | None = None) -> str:
    before = counts(dbfile)
    con = db.connect(dbfile)
    try:
        with pytest.raises(InputError) as e:
            logs.ingest(con, path)
    finally:
        con.close()
    msg = str(e.value)
    assert path.name in msg, msg
    assert "\n" not in msg and len(msg) < 800, msg[:300]
    if where:
        assert where in msg, msg
    assert counts(dbfile) == before
    return msg


# ---------------------------------------------------------------- 10 MB lines (generated)

def _ten_mb_cases(d: Path) -> dict[str, tuple[Path, str]]:
    x = "x" * MB10
    cases = {
        "first_line.csv": (x + "\n", "line 1"),
        "node_name.csv": ("time,node,idle\n2021-01-01 00:00:00," + x + ",1\n2021-01-01 00:10:00,a,0\n",
                          "field 'node'"),
        "nodelist.sacct": ("JobID|Start|End|NNodes|NodeList\n1|2021-01-01T00:00:00|2021-01-01T01:00:00|2|nid["
                           + x + "\n", "line 2, field 'NodeList'"),
        "hostname.sacct": ("JobID|Start|End|NNodes|NodeList\n1|2021-01-01T00:00:00|2021-01-01T01:00:00|1|" + x
                           + "\n", "line 2, field 'NodeList'"),
        "row.swf": ("; MaxNodes: 8\n1 0 0 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n" + "7 " * (MB10 // 2)
                    + "\n", "line 3"),
        "job_id.csv": ("job_id,start,end,nodes\n" + x + ",100,200,1\n2,150,300,1\n", "field 'job id'"),
        "number.csv": ("start,end,nodes\n100,200," + "9" * MB10 + "\n", "line 2"),
    }
    out = {}
    for name, (text, where) in cases.items():
        p = d / name
        p.write_text(text)
        out[name] = (p, where)
    # and one gzipped: 10 MB of one line, a few KB on disk
    p = d / "node_name_gz.csv.gz"
    p.write_bytes(gzip.compress(cases["node_name.csv"][0].encode(), compresslevel=1))
    out[p.name] = (p, "field 'node'")
    return out


@pytest.fixture(scope="module")
def ten_mb(tmp_path_factory):
    return _ten_mb_cases(tmp_path_factory.mktemp("tenmb"))


# two of them in the default tier (~0.5 s each), all under -m slow
@pytest.mark.parametrize("name", ["first_line.csv", "nodelist.sacct"] + [
    pytest.param(n, marks=pytest.mark.slow)
    for n in ("node_name.csv", "hostname.sacct", "row.swf", "job_id.csv", "number.csv", "node_name_gz.csv.gz")])
def test_ten_megabyte_line_is_refused_with_a_short_message(name, ten_mb, loaded_db):
    path, where = ten_mb[name]
    assert path.stat().st_size >= MB10 or name.endswith(".gz")
    msg = assert_refused(path, loaded_db, where)
    assert len(msg) <= 700  # the 10 MB field is never echoed back


# ---------------------------------------------------------------- the CLI as a real process

def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "planner", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, **(env or {})))


# a real `python -m planner` per case (~2-4 s of CPU): one in the default tier, all under -m slow
@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
@pytest.mark.parametrize("name", ["binary_junk.dat"] + [
    pytest.param(n, marks=pytest.mark.slow)
    for n in ("far_future_iso.csv", "huge_machine.swf", "semicolon_delimiter.csv", "truncated.csv.gz")])
def test_cli_subprocess_exit_2_one_line_nothing_stored(name, loaded_db):
    before = counts(loaded_db)
    r = run_cli("ingest", CORPUS / name, "--db", loaded_db, "--json")
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("planner ingest: error: ") and name in lines[0]
    assert WHERE[name] in lines[0]
    assert counts(loaded_db) == before


@pytest.mark.slow  # a real `python -m planner` subprocess (~2-4 s of CPU): the slow tier
def test_cli_subprocess_ten_megabyte_line(ten_mb, loaded_db):
    before = counts(loaded_db)
    r = run_cli("ingest", ten_mb["nodelist.sacct"][0], "--db", loaded_db, "--json")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and len(r.stderr) < 800
    assert "nodelist.sacct, line 2, field 'NodeList'" in r.stderr
    assert counts(loaded_db) == before


@pytest.mark.slow  # a real `python -m planner` subprocess (~2-4 s of CPU): the slow tier
def test_cli_subprocess_good_log_still_loads_after_refusals(loaded_db, write_file):
    good = write_file("good.swf", "; MaxNodes: 4\n1 0 0 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
                                  "2 10 0 50 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n")
    for name in ("binary_junk.dat", "huge_job.csv"):
        assert run_cli("ingest", CORPUS / name, "--db", loaded_db).returncode == 2
    r = run_cli("ingest", good, "--db", loaded_db, "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert (rep["log"], rep["rows"], rep["nodes"]) == ("good.swf", 2, 4)
    assert counts(loaded_db)["jobs"] == 2


# ---------------------------------------------------------------- flags and sizes

def test_machine_flag_smaller_than_named_nodes(loaded_db, write_file):
    p = write_file("three.sacct", "JobID|Start|End|NNodes|NodeList\n"
                                  "1|2021-01-01T00:00:00|2021-01-01T01:00:00|3|nid[01-03]\n")
    before = counts(loaded_db)
    con = db.connect(loaded_db)
    with pytest.raises(InputError, match="field 'machine-nodes'"):
        logs.ingest(con, p, machine_nodes=2)
    with pytest.raises(InputError, match="exceeds the limit"):
        logs.ingest(con, p, machine_nodes=10**12)
    con.close()
    assert counts(loaded_db) == before


@pytest.mark.slow  # a real `python -m planner` subprocess (~2-4 s of CPU): the slow tier
def test_machine_flag_too_large_via_cli(loaded_db):
    r = run_cli("ingest", CORPUS / "text_in_run.swf", "--db", loaded_db, "--machine-nodes", "99999999999")
    assert r.returncode == 2 and "machine-nodes" in r.stderr


# ---------------------------------------------------------------- overlapping use of one node

def test_overlapping_use_of_one_node_is_reported_and_counted_once(mem_con, write_file):
    """Two jobs holding nid02 at once (shared nodes, legal on Slurm): loaded, the overlap named
    in the load notes, and nid02 busy over the union of the two jobs (not counted twice)."""
    p = write_file("overlap.sacct", "JobID|Start|End|NNodes|NodeList\n"
                                    "1|2021-01-01T00:00:00|2021-01-01T01:00:00|2|nid[01-02]\n"
                                    "2|2021-01-01T00:30:00|2021-01-01T02:00:00|1|nid02\n")
    rep = logs.ingest(mem_con, p)
    assert any("held by two or more jobs" in n and "0.50 node-hours" in n for n in rep["notes"]), rep["notes"]
    s = F.summary(mem_con, Window("overlap.sacct"))
    # 2 nodes over 2 h; nid01 idle 01:00-02:00, nid02 never idle
    assert s["nodes"] == 2 and s["idle_node_hours"] == pytest.approx(1.0)


# ---------------------------------------------------------------- nothing half-loaded

def test_failure_inside_the_transaction_leaves_nothing(loaded_db, write_file):
    """A fault after some rows went in (here: the last table insert) rolls the whole log back."""
    p = write_file("ok.swf", "; MaxNodes: 4\n1 0 0 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n")
    before = counts(loaded_db)
    con = db.connect(loaded_db)
    real = con.execute

    class Boom(RuntimeError):
        pass

    class Wrapped:
        def __getattr__(self, k):
            return getattr(con, k)

        def execute(self, sql, *a):
            if sql.startswith("INSERT INTO idle_series"):
                raise Boom("disk full")
            return real(sql, *a)

    with pytest.raises(Boom):
        logs.ingest(Wrapped(), p)
    con.close()
    assert counts(loaded_db) == before


# --- instance files (planner allocate): every hostile number or byte is one line, exit 2 ------

_TRAINER = '{"id": "a", "model": "shufflenet", "priority": %s}'
HOSTILE_INSTANCES = {
    "deep_nesting": b'{"pool": [0], "trainers": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "infinity": b'{"pool": [0, 1], "tfwd_s": Infinity, "trainers": []}',
    "nan": b'{"pool": [0, 1], "trainers": [' + (_TRAINER % "NaN").encode() + b"]}",
    "overflow_float": b'{"pool": [0, 1], "trainers": [' + (_TRAINER % "1e999").encode() + b"]}",
    "huge_int": b'{"pool_nodes": ' + b"9" * 5000 + b', "trainers": []}',
    "non_utf8": b'{"pool": [0], "trainers": [{"id": "\xff\xfe", "model": "shufflenet"}]}',
    "pool_1e12": b'{"pool_nodes": 1000000000000, "trainers": []}',
    "priority_1e308": b'{"pool": [0, 1], "trainers": [' + (_TRAINER % "1e308").encode() + b"]}",
    "nmax_1e12": b'{"pool": [0], "trainers": [{"id": "a", "model": "shufflenet", "nmax": 1000000000000}]}',
    "curve_inf_nodes": b'{"pool": [0], "trainers": [{"id": "a", "curve": {"nodes": [1e300], "samples_per_s": [1]}}]}',
    "node_id_2e40": b'{"pool": [20000000000000000000000000000000000000000], "trainers": []}',
    "id_is_list": b'{"pool": [0], "trainers": [{"id": "a", "model": ["x"]}]}',
    "misspelt_trainer_key": b'{"pool": [0], "trainers": [{"id": "a", "model": "shufflenet", "nmx": 4}]}',
    "misspelt_top_key": b'{"pool": [0], "trainers": [], "tfwd": 60}',
}
INSTANCE_WHERE = {"infinity": "Infinity", "nan": "NaN", "overflow_float": "out of range",
                  "non_utf8": "not UTF-8", "pool_1e12": "field 'pool_nodes'",
                  "priority_1e308": "field 'trainers[0].priority'", "nmax_1e12": "field 'trainers[0].nmax'",
                  "curve_inf_nodes": "field 'trainers[0].curve.nodes'", "node_id_2e40": "field 'pool'",
                  "deep_nesting": "nested too deeply", "id_is_list": "field 'trainers[0].model'",
                  "misspelt_trainer_key": "field 'trainers[0].nmx': unknown key", "misspelt_top_key": "field 'tfwd'"}


@pytest.mark.parametrize("name", sorted(HOSTILE_INSTANCES))
def test_hostile_instance_one_line_no_traceback(tmp_path, capsys, name):
    from planner import cli

    f = tmp_path / f"{name}.json"
    f.write_bytes(HOSTILE_INSTANCES[name])
    rc = cli.main(["allocate", "--instance", str(f), "--json"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, err[-600:]
    assert f"{name}.json" in err and INSTANCE_WHERE.get(name, "") in err, err


@pytest.mark.parametrize("flag,value", [("--tfwd", "inf"), ("--tfwd", "nan"), ("--mip-gap", "2"),
                                        ("--time-limit", "1e300")])
def test_hostile_allocate_options(tmp_path, capsys, flag, value):
    from planner import cli

    f = tmp_path / "ok.json"
    f.write_text('{"pool": [0, 1], "trainers": [{"id": "a", "model": "shufflenet"}]}')
    rc = cli.main(["allocate", "--instance", str(f), flag, value])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


@pytest.mark.slow  # a real `python -m planner` subprocess (~2-4 s of CPU): the slow tier
def test_json_output_stays_json_when_a_library_prints(tmp_path):
    """With --json, stdout holds only the JSON: a Pyomo log warning (its handler writes to
    stdout), a stray print and a C-level write on fd 1 during the command go to stderr."""
    code = (
        "import logging, os, sys\n"
        "import pyomo.environ  # noqa: F401 (installs its stdout log handler)\n"
        "import planner.commands.logs as L\n"
        "def run(args):\n"
        "    logging.getLogger('pyomo').warning('WARNING: Loading a SolverResults object with a warning status')\n"
        "    print('stray print')\n"
        "    os.write(1, b'C-level write\\n')\n"
        "    return [{'x': 1}]\n"
        "L.run = run\n"
        "from planner import cli\n"
        "sys.exit(cli.main(['logs', '--json']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == [{"x": 1}]
    for text in ("SolverResults", "stray print", "C-level write"):
        assert text in proc.stderr


@pytest.mark.slow  # a real `python -m planner` subprocess: the slow tier
def test_json_output_of_a_horizon_milp_replay_finishes(tmp_path):
    """`planner simulate --allocator horizon-milp --json` hung at its first decision when --json made
    sys.stdout the very object sys.stderr is: Pyomo's capture_output around the HiGHS solve never saw
    its reader thread end (killed after 30 s; 1.4 s with the fix). Its stdout is the run's JSON."""
    proc = subprocess.run([sys.executable, "-m", "planner", "simulate", "--pool", "fixed", "--pool-size", "20",
                           "--hours", "1", "--workload", "philly", "--allocator", "horizon-milp", "--pj-max", "100",
                           "--json"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["allocator"] == "horizon-milp" and out["pool_size"] == 20


def test_reading_commands_do_not_create_a_mistyped_database(tmp_path, capsys):
    from planner import cli

    typo = tmp_path / "typo.duckdb"
    for argv in (["logs", "--db", str(typo)], ["fragments", "--db", str(typo)],
                 ["logs", "--remove", "x", "--db", str(typo)]):
        rc = cli.main(argv)
        err = capsys.readouterr().err
        assert rc == 2 and "no such database" in err and "typo.duckdb" in err, err
        assert len(err.strip().splitlines()) == 1
    assert not typo.exists() and not list(tmp_path.iterdir())
