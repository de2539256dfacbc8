"""Sweeps with the real simulator on the shipped Summit log: Dask vs local executor, a killed and
restarted sweep, failures recorded, bad grids rejected (CLI exit 2)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from planner.cli import main as cli_main
from planner.errors import InputError
from planner.store import db as pdb
from planner.sweep import load_results, run_sweep
from tests.helpers import ROOT

# keys of the simulator's summary that measure the machine, not the scenario
TIMING = ("wall_s", "solve_s", "build_s")


def deterministic(summary_json: str) -> dict:
    d = json.loads(summary_json)
    return {k: v for k, v in d.items() if not any(k.startswith(t) for t in TIMING)}


@pytest.fixture(scope="module")
def log_db(tmp_path_factory, summit_db) -> Path:
    """A log DB holding the shipped logs: a copy of the session's (loaded once per test process)."""
    path = tmp_path_factory.mktemp("logdb") / "logs.duckdb"
    shutil.copyfile(summit_db, path)
    return path


def small_grid(db: Path, hours: float = 2) -> dict:
    return {"base": {"db": str(db), "start": "2021-02-10T20:21:15", "hours": hours,
                     "pool-size": 1024, "workload": "hpo"},
            "grid": {"allocator": ["dp", "equal-share"], "tfwd": [120, 600]}}


@pytest.mark.slow  # a Dask LocalCluster of 2 worker processes: the slow tier
def test_dask_local_cluster_equals_local_executor(log_db, tmp_path):
    grid = small_grid(log_db)
    a = run_sweep(grid, out=tmp_path / "local.duckdb", executor="local", workers=2)
    b = run_sweep(grid, out=tmp_path / "dask.duckdb", executor="dask", workers=2)
    assert a["cells"] == b["cells"] == 4 and a["ok"] == b["ok"] == 4
    da = load_results(tmp_path / "local.duckdb").set_index("cell_key")
    dk = load_results(tmp_path / "dask.duckdb").set_index("cell_key")
    assert set(da.index) == set(dk.index) and len(da) == 4
    assert set(dk["executor"]) == {"dask"} and set(da["executor"]) == {"local"}
    # two worker processes each, none of them the test process
    assert dk["worker"].nunique() == 2 and not dk["worker"].str.endswith(f":{os.getpid()}").any()
    for key in da.index:
        sa, sd = deterministic(da.loc[key, "summary_json"]), deterministic(dk.loc[key, "summary_json"])
        assert sa == sd, key
        assert sa["events"] > 0 and sa["decisions"] > 0
    # flattened columns agree too, and the cells really differ from each other
    cols = ["allocator", "tfwd", "events", "trainers_completed", "samples", "utilization_efficiency"]
    assert da.sort_index()[cols].equals(dk.sort_index()[cols])
    assert da["utilization_efficiency"].nunique() > 1
    assert {"solve_s_mean", "solve_s_p95", "sim_wall_s", "mean_queue_s"} <= set(da.columns)


def _rows(out: Path) -> dict[str, tuple]:
    con = duckdb.connect(str(out), read_only=True)
    try:
        return {r[0]: (r[1], r[2]) for r in con.execute(
            "SELECT cell_key, status, finished_at FROM sweep_results").fetchall()}
    finally:
        con.close()


@pytest.mark.slow  # a `planner sweep` subprocess killed mid-run: the slow tier
def test_killed_sweep_restarts_without_loss_or_recompute(log_db, tmp_path):
    grid_file = tmp_path / "grid.json"
    grid = small_grid(log_db, hours=6)
    grid["grid"]["pj-max"] = [5, 10]  # 8 cells of ~0.3-1 s on one worker
    grid_file.write_text(json.dumps(grid))
    out = tmp_path / "res.duckdb"
    cmd = [sys.executable, "-m", "planner", "sweep", "--grid", str(grid_file), "--out", str(out),
           "--workers", "1", "--json"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    seen = []
    deadline = time.monotonic() + 90
    try:
        for line in proc.stderr:  # 'cell <i> ok ...' is printed after the cell's row is committed
            if line.lstrip("\r ").startswith("cell ") or "\rcell " in line:
                seen.append(line)
            if len(seen) >= 2 or time.monotonic() > deadline:
                break
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker processes
        proc.wait(timeout=30)
        proc.stderr.close()
    assert len(seen) >= 2, "the sweep did not finish two cells in time"
    before = _rows(out)
    assert 2 <= len(before) < 8, f"{len(before)} cells were written before the kill"
    assert all(s == "ok" for s, _ in before.values())

    rep = run_sweep(grid_file, out=out, workers=2)
    assert rep["cells"] == 8 and rep["skipped"] == len(before) and rep["ran"] == 8 - len(before)
    after = _rows(out)
    assert len(after) == 8 and all(s == "ok" for s, _ in after.values())
    con = duckdb.connect(str(out), read_only=True)
    try:
        n, distinct = con.execute("SELECT count(*), count(DISTINCT cell_key) FROM sweep_results").fetchone()
    finally:
        con.close()
    assert n == distinct == 8  # every cell exactly once
    for key, (_status, finished) in before.items():
        assert after[key][1] == finished  # not recomputed
    # a third run has nothing to do
    rep3 = run_sweep(grid_file, out=out, workers=2)
    assert rep3["skipped"] == 8 and rep3["ran"] == 0


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_failing_cell_is_recorded_and_the_sweep_goes_on(log_db, tmp_path):
    grid = {"base": {"db": str(log_db), "start": "2021-02-10T20:21:15", "hours": 1,
                     "pool_size": 256},
            "grid": {"workload": ["hpo", str(tmp_path / "no-such-trainers.csv")]}}
    rep = run_sweep(grid, out=tmp_path / "r.duckdb", workers=2)
    assert rep["ok"] == 1 and rep["errors"] == 1
    assert "no-such-trainers.csv" in rep["failed_cells"][0]["error"]
    df = load_results(tmp_path / "r.duckdb")
    bad = df[df["status"] == "error"].iloc[0]
    assert "no-such-trainers.csv" in bad["error"] and "\n" not in bad["error"]
    assert bad["traceback"] and df[df["status"] == "ok"].iloc[0]["events"] > 0


def test_unknown_option_exit_2_names_file_and_field(tmp_path, capsys):
    g = tmp_path / "bad.yaml"
    g.write_text("base:\n  hours: 1\ngrid:\n  allocator: [dp]\n  t-forward: [60]\n")
    rc = cli_main(["sweep", "--grid", str(g), "--out", str(tmp_path / "o.duckdb")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1
    assert str(g) in err and "line 5" in err and "grid.t-forward" in err
    assert not (tmp_path / "o.duckdb").exists()  # nothing half-made


def test_bad_value_names_the_cell_and_field(tmp_path):
    g = tmp_path / "g.json"
    g.write_text(json.dumps({"base": {"hours": 1}, "grid": {"allocator": ["dp", "nope"]}}))
    with pytest.raises(InputError, match=r"g\.json.*field 'grid\.allocator'.*cell 1 \(allocator=nope\)"):
        run_sweep(g, out=tmp_path / "o.duckdb")


def test_results_db_must_not_be_the_log_db(log_db):
    with pytest.raises(InputError, match="must not be the log database"):
        run_sweep(small_grid(log_db), out=log_db)


def test_shipped_example_grids_parse():
    from planner.sweep import load_grid, resolve

    for name, n in (("grid.yaml", 8), ("grid.json", 12)):
        g = load_grid(ROOT / "examples" / name)
        assert len(resolve(g)) == n


@pytest.mark.slow  # over 2 s in the default tier (measured): the slow tier runs it
def test_sweep_while_caller_holds_log_db_read_only(log_db, tmp_path):
    """The app keeps the shared log DB open read-only in its process; sweeps must still run."""
    held = pdb.connect(log_db, read_only=True)
    try:
        grid = {"base": {"db": str(log_db), "start": "2021-02-10T20:21:15", "hours": 1,
                         "pool_size": 128},
                "grid": {"allocator": ["dp"], "tfwd": [60, 120]}}
        rep = run_sweep(grid, out=tmp_path / "r.duckdb", workers=2)
        assert rep["ok"] == 2
        assert held.execute("SELECT count(*) FROM logs").fetchone()[0] >= 1
        df = load_results(tmp_path / "r.duckdb", grid)
        assert list(df["tfwd"]) == [60.0, 120.0] and (df["status"] == "ok").all()
    finally:
        held.close()


def test_unknown_log_fails_fast(log_db, tmp_path):
    grid = {"base": {"db": str(log_db), "log": "no-such-log", "hours": 1}, "grid": {"tfwd": [60]}}
    with pytest.raises(InputError, match="log 'no-such-log' is not in the database"):
        run_sweep(grid, out=tmp_path / "r.duckdb", workers=1)
    assert not (tmp_path / "r.duckdb").exists()
