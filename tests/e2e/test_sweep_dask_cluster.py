"""A real multi-process Dask cluster, started the way an operator would (`dask scheduler` and two
`dask worker` processes on 127.0.0.1), runs `planner sweep --executor dask --scheduler tcp://...`;
one worker is killed (SIGKILL, nanny and all) mid-sweep: the sweep completes, and every cell is in
the results exactly once. Every process is stopped by the fixture's finalizer, whatever happens."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import psutil
import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow  # real processes and signals: run in CI (.ci/run: pytest -m slow)

CELLS = 8


def _dask_cmd() -> list[str]:
    """`dask` as an operator types it: the console script of the Python running the tests."""
    exe = Path(sys.executable).with_name("dask")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dask"]


def _wait_for(cond, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def _stop(procs: list[subprocess.Popen]) -> None:
    """SIGTERM each process group, then SIGKILL what is left; reap them."""
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 10
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the group: a nanny's worker child too
        except ProcessLookupError:
            pass
        p.wait(timeout=10)


@pytest.fixture
def cluster(tmp_path):
    """(scheduler address, [worker Popen, worker Popen]) of a cluster on 127.0.0.1."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []
    logs = tmp_path / "dask-logs"
    logs.mkdir()

    def start(name, args):
        with open(logs / f"{name}.log", "wb") as log:
            p = subprocess.Popen([*_dask_cmd(), *args], cwd=tmp_path, env=env, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(p)
        return p

    try:
        start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                            "--scheduler-file", str(sched_file)])
        _wait_for(lambda: sched_file.exists() and sched_file.stat().st_size > 0, 60, "the scheduler")
        address = json.loads(sched_file.read_text())["address"]
        workers = [start(f"worker{i}", ["worker", address, "--host", "127.0.0.1", "--nworkers", "1",
                                        "--nthreads", "1", "--no-dashboard", "--name", f"w{i}"])
                   for i in range(2)]
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, workers
    finally:
        _stop(procs)


@pytest.mark.timeout(300)  # a hang is a failure, not a stuck CI job
def test_sweep_survives_a_killed_worker(tmp_path, cluster):
    address, workers = cluster
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"base": {"pool": "fixed", "pool_size": 256, "hours": 6},
                                "grid": {"seed": list(range(CELLS))}}))
    out = tmp_path / "res.duckdb"
    cmd = [sys.executable, "-m", "planner", "sweep", "--grid", str(grid), "--out", str(out),
           "--executor", "dask", "--scheduler", address, "--json"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in iter(proc.stderr.readline, "")] + [lines.put(None)],
                     daemon=True).start()
    try:
        # both workers busy, one cell finished: kill worker 0 (nanny and worker process) mid-sweep
        finished = 0
        deadline = time.monotonic() + 120
        while finished < 1:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, "the sweep ended early"
            finished += len(re.findall(r"cell \d+ (?:ok|error) ", line))
        victim = workers[0]
        victim_pids = {victim.pid} | {c.pid for c in psutil.Process(victim.pid).children(recursive=True)}
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait(timeout=30)
        stdout, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    assert proc.returncode == 0
    report = json.loads(stdout)
    assert report["cells"] == CELLS and report["ok"] == CELLS and report["errors"] == 0
    con = duckdb.connect(str(out), read_only=True)
    try:
        n, distinct, ok = con.execute("SELECT count(*), count(DISTINCT cell_key), "
                                      "count(*) FILTER (status = 'ok') FROM sweep_results").fetchone()
        seeds = sorted(r[0] for r in con.execute("SELECT seed FROM sweep_results").fetchall())
        worker_pids = {int(r[0].rsplit(":", 1)[1]) for r in
                       con.execute("SELECT worker FROM sweep_results").fetchall()}
    finally:
        con.close()
    assert n == distinct == ok == CELLS and seeds == list(range(CELLS))  # none lost, none twice
    survivor = workers[1]
    assert survivor.poll() is None  # the other worker carried the sweep to its end
    assert worker_pids - victim_pids, "no cell ran on the surviving worker"
