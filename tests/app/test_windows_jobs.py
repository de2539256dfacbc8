"""The app's many-window job (appkit.jobs.job_windows through appkit.worker): its windows run on a
pool of local processes granted by the server's caps (issue 24: "in parallel on the existing
executors"); the processes count against the caps; a cancel leaves no process behind."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from appkit import windows_view, worker, workspace
from appkit.state import DEFAULTS


def _ws(tmp_path) -> Path:
    return workspace.path(tmp_path, workspace.create(tmp_path))


def _group(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group, from /proc."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state ppid pgrp ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(d.name))
    return out


def _spec(ws: Path, db: Path, count: int, hours: float, pool_size: int) -> dict:
    sc = {**DEFAULTS, "pool_size": pool_size, "count": 4, "allocator": "dp", "baseline": "equal-share",
          "bound": "none"}
    return {"scenario": sc, "db": str(db), "hours": hours, "count": count, "stride": None, "ws_dir": str(ws),
            "allocators": ["dp", "equal-share"], "baseline": "equal-share", "name": "latest", "scheduler": None}


def _long(ws: Path) -> dict:
    return {"jobs": [2000], "pools": [10_000], "allocators": ["milp"], "reps": 100, "time_limit_s": 100.0,
            "ws_dir": str(ws)}


def test_processes_are_granted_within_the_caps(tmp_path, monkeypatch):
    """A job asking for 3 processes gets what the per-user and server caps leave (the jobs: Solver
    benchmarks no machine finishes in seconds, cancelled at once)."""
    monkeypatch.setenv("PLANNER_APP_USER_PROCS", "2")
    monkeypatch.setenv("PLANNER_APP_MAX_JOBS", "3")
    ws = _ws(tmp_path)
    a = worker.start(ws, "solver", _long(ws), procs=3)
    try:
        assert a.procs == 2  # the per-user cap
        other = _ws(tmp_path)
        b = worker.start(other, "solver", _long(other), procs=3)
        try:
            assert b.procs == 1  # what the server has left (3 - 2)
            with pytest.raises(worker.Busy, match="3 worker processes are running"):
                worker.start(other, "solver", {}, procs=1)
        finally:
            worker.cancel(b)
    finally:
        worker.cancel(a)


@pytest.mark.slow  # ~20 s: two spawned pool processes import the planner and replay 1 h windows
def test_many_window_job_runs_in_several_processes_and_cancel_leaves_none(tmp_path, summit_db, monkeypatch):
    monkeypatch.setenv("PLANNER_APP_USER_PROCS", "2")
    ws = _ws(tmp_path)
    job = worker.start(ws, "windows", _spec(ws, summit_db, count=2, hours=1, pool_size=64), procs=2)
    assert job.procs == 2
    out = worker.run_to_end(job)
    assert out["status"] == "ok", out
    assert out["result"]["executor"] == "local" and out["result"]["procs"] == 2
    saved = windows_view.load(ws)
    assert len(saved["rows"]) == 4 and all(r["status"] == "ok" for r in saved["rows"])
    # replayed in the pool's processes, not the job's own (which of the 2 takes which cell is the
    # pool's choice: under load one may take them all, so the pool itself is checked below)
    pids = {int(r["worker"].rsplit(":", 1)[1]) for r in saved["rows"]}
    assert job.pid not in pids and 1 <= len(pids) <= 2
    assert saved["executor"] == "local" and saved["workers"] == 2
    assert windows_view.where(saved) == ", in a pool of 2 worker processes"
    worker.cleanup(job)

    # a long run, cancelled while its pool replays: the job and every pool process are gone
    job = worker.start(ws, "windows", _spec(ws, summit_db, count=40, hours=24, pool_size=1024), procs=2)
    deadline = time.time() + 120
    while len(_group(job.pid)) < 3:  # the job and its pool processes (2, plus spawn's resource tracker)
        assert time.time() < deadline and job.proc.poll() is None, (worker.progress(job), _group(job.pid))
        time.sleep(0.2)
    assert "40 windows" in worker.progress(job)[1]
    assert worker.cancel(job)["status"] == "cancelled"
    deadline = time.time() + 10
    while _group(job.pid) and time.time() < deadline:
        time.sleep(0.1)
    assert _group(job.pid) == [], "a pool process outlived the cancel"
    assert worker.poll(job) is not None
    worker.cleanup(job)
    assert os.getpid()  # the test process itself is untouched


@pytest.mark.slow  # ~15 s: a one-worker Dask LocalCluster and 2 replays of 1 h on 64 nodes
def test_many_window_job_runs_on_the_operators_dask_scheduler(tmp_path, summit_db):
    """PLANNER_APP_DASK_SCHEDULER set: the page passes it in the spec and the job's replays run on
    that cluster's workers (not in the job's process)."""
    import logging

    from distributed import LocalCluster

    from appkit import jobs

    ws = _ws(tmp_path)
    texts = []
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster:
        spec = {**_spec(ws, summit_db, count=1, hours=1, pool_size=64), "scheduler": cluster.scheduler_address}
        out = jobs.job_windows(spec, lambda frac, text="", force=False: texts.append(text))
        worker_pids = {w.pid for w in cluster.workers.values() if getattr(w, "pid", None)}
    assert out == {"windows": 1, "executor": "dask", "procs": 1}
    saved = windows_view.load(ws)
    assert [r["status"] for r in saved["rows"]] == ["ok", "ok"]
    pids = {int(r["worker"].rsplit(":", 1)[1]) for r in saved["rows"]}
    assert os.getpid() not in pids and (not worker_pids or pids <= worker_pids)
    assert "on the Dask cluster at tcp://" in texts[0] and texts[-1].startswith("1 of 1 windows done")
    assert saved["executor"] == "dask" and windows_view.where(saved).startswith(", on a Dask cluster")


@pytest.mark.slow  # ~15 s: a two-cell grid on 1 h of Summit in the granted pool
def test_a_compare_grid_gets_its_processes_from_the_caps(tmp_path, summit_db, monkeypatch):
    """Compare's grid asks for its worker processes like a many-window run: 4 asked, 2 granted by
    the per-user cap, and its sweep runs on the 2 granted (not on the 4 asked)."""
    from planner.sweep.compare import grid_from_choices

    monkeypatch.setenv("PLANNER_APP_USER_PROCS", "2")
    ws = _ws(tmp_path)
    grid = grid_from_choices(dict(log="summit-2021", start=DEFAULTS["start"], hours=1.0, workload="hpo",
                                  pj_max=4, seed=0, db=str(summit_db)),
                             allocator=["dp", "equal-share"], tfwd=[120], pool_size=[64], objective=["throughput"])
    job = worker.start(ws, "sweep", {"grid": grid, "out": str(ws / "grid.duckdb")}, procs=4)
    assert job.procs == 2
    out = worker.run_to_end(job)
    assert out["status"] == "ok", out
    assert out["result"]["ok"] == 2 and out["result"]["workers"] == 2
