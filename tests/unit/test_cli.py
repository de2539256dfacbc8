"""The `planner` command's own behaviour (each subcommand is tested beside its module)."""

import gzip
import json
import subprocess
import sys

import pytest

from planner import cli, paths
from planner.store import catalog
from tests.helpers import ROOT, TINY_NODE_LOG, built_once


@pytest.mark.slow  # 2.9 s CPU measured in the default run: the slow tier
def test_output_into_a_closed_pipe_is_not_an_error():
    """`planner ... | head` closes the pipe early: exit 0, no traceback."""
    p = subprocess.Popen([sys.executable, "-m", "planner", "allocate", "--instance",
                          str(ROOT / "examples" / "instance.json"), "--allocator", "dp", "--map", "--json"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the command prints
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0, err
    assert "Traceback" not in err


# ---------------------------------------------------------------- the default log and window starts


SUMMIT = paths.SUMMIT_LOG  # datasets/summit-2021-node_idle_transitions.csv.gz
T_BFTRAINER = 1612988475  # 2021-02-10T20:21:15Z


def _planner(*args, db=None, timeout=300):
    """`python -m planner ARGS --db DB` in a subprocess (a real process: exit code, stdout, stderr)."""
    env_db = ["--db", str(db)] if db is not None else []
    return subprocess.run([sys.executable, "-m", "planner", *args, *env_db], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def planner_in(capsys):
    """planner_in(*args, db=DB) -> (returncode, stdout, stderr) of planner.cli.main in this process
    (the same code path as the console script, without a new interpreter per call)."""
    def run(*args, db=None):
        capsys.readouterr()
        rc = cli.main([*map(str, args), *(["--db", str(db)] if db is not None else [])])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, rc, out, err)
    return run


@pytest.fixture(scope="module")
def ingested_db(request, tmp_path_factory):
    """A fresh database holding the Summit file ingested under its file name (not 'summit-2021') by
    `planner ingest` in a subprocess; built once for all workers and runs (tests.helpers.built_once):
    the file name is checked on the stored log by test_a_read_only_replay_finds_..., the command's
    JSON report by test_ingest_reports_the_file_name_without_gz on every run."""
    def build(path):
        p = _planner("ingest", str(SUMMIT), "--json", db=path)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["log"] == SUMMIT.name[:-3]  # the file name without .gz

    return built_once(request.config, tmp_path_factory, "ingested", build,
                      tmp_path_factory.mktemp("ingested") / "fresh.duckdb")


def test_ingest_reports_the_file_name_without_gz(tmp_path, planner_in):
    """`planner ingest X.csv.gz --json` names the log X.csv (ingested_db's check, on a small copy)."""
    f = tmp_path / "summit-2021-node_idle_transitions.csv.gz"
    f.write_bytes(gzip.compress(TINY_NODE_LOG.encode()))
    p = planner_in("ingest", f, "--json", db=tmp_path / "fresh.duckdb")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["log"] == "summit-2021-node_idle_transitions.csv"


@pytest.mark.slow  # 16.2 s CPU measured in the default run: the slow tier
def test_fragments_with_the_default_log_after_ingesting_the_summit_file(ingested_db, planner_in):
    _planner = planner_in
    p = _planner("fragments", "--hours", "1", "--json", db=ingested_db)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["nodes"] == 4734 and s["span_h"] == pytest.approx(1.0) and s["events"] > 0
    # the same log asked for by its shipped name and by its file name: the same figures
    for log in ("summit-2021", "summit-2021-node_idle_transitions.csv"):
        q = _planner("fragments", "--log", log, "--hours", "1", "--json", db=ingested_db)
        assert q.returncode == 0 and json.loads(q.stdout) == s, q.stderr
    # nothing was loaded a second time
    logs = json.loads(_planner("logs", "--json", db=ingested_db).stdout)
    assert [r["name"] for r in logs] == ["summit-2021-node_idle_transitions.csv"]


@pytest.mark.slow  # 5.7 s CPU measured in the default run: the slow tier
def test_simulate_with_an_epoch_start_runs_on_the_default_log(ingested_db, planner_in):
    _planner = planner_in
    args = ("simulate", "--hours", "2", "--pool-size", "256", "--count", "10", "--allocator", "equal-share",
            "--json")
    p = _planner(*args, "--start", str(T_BFTRAINER), db=ingested_db)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["window_start"] == "2021-02-10 20:21:15" and s["window_hours"] == pytest.approx(2.0)
    q = _planner(*args, "--start", "2021-02-10T21:21:15+01:00", db=ingested_db)
    assert q.returncode == 0, q.stderr
    same = {k: v for k, v in json.loads(q.stdout).items() if k != "wall_s" and "solve" not in k}
    assert same == {k: v for k, v in s.items() if k != "wall_s" and "solve" not in k}


@pytest.mark.parametrize("start,why", [("9999-12-31", "out of range"), ("2262-06-01", "out of range"),
                                       ("1677-01-01", "out of range"), ("0001-01-01", "out of range"),
                                       ("2262", "outside the log"), ("0001", "outside the log"),
                                       ("2022-01-01", "outside the log"), ("1e300", "out of range"),
                                       ("yesterday", "not a time")])
@pytest.mark.parametrize("command", ["fragments", "simulate"])
@pytest.mark.parametrize("how", ["in-process", pytest.param("subprocess", marks=pytest.mark.slow)])
def test_bad_window_starts_end_in_one_line_naming_the_field(ingested_db, planner_in, command, start, why, how):
    run = planner_in if how == "in-process" else _planner
    p = run(command, "--start", start, "--hours", "1", "--json", db=ingested_db)
    assert p.returncode == 2 and p.stdout == ""
    assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1
    assert "field 'start'" in p.stderr and why in p.stderr


def test_a_read_only_replay_finds_the_default_log_under_its_file_name(ingested_db):
    """As sweep workers do: a read-only connection, the scenario's log left at its default."""
    from planner.scenario.record import Scenario, run_scenario
    from planner.store import db

    con = db.connect(ingested_db, read_only=True)
    try:
        assert catalog.resolve_log(con, None) == catalog.resolve_log(con, "summit-2021") == \
            "summit-2021-node_idle_transitions.csv"
        res = run_scenario(Scenario(start=str(T_BFTRAINER), hours=0.5, pool_size=64, count=4,
                                    allocator="equal-share"), con=con)
    finally:
        con.close()
    assert res.summary["log"] == "summit-2021-node_idle_transitions.csv" and res.summary["decisions"] > 0


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_reading_commands_do_not_create_a_mistyped_database(tmp_path):
    typo = tmp_path / "typo.duckdb"
    for args in (("fragments", "--json"), ("simulate", "--hours", "1", "--json")):
        p = _planner(*args, db=typo)
        assert p.returncode == 2 and "no such database" in p.stderr and "typo.duckdb" in p.stderr, p.stderr
        assert p.stderr.count("\n") == 1
    assert not list(tmp_path.iterdir())
