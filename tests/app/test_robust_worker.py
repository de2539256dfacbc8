"""Issue 23, findings 7 and 2 (workers): one exact message per way a worker can end; a killed
load leaves no partial file or `.wal`; a worker enforces its own wall time and dies with its server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from appkit import server, worker, workspace
from planner.errors import InputError


def _ws(tmp_path) -> Path:
    return workspace.path(tmp_path, workspace.create(tmp_path))


def _long_job(d: Path, **kw) -> worker.Job:
    """A Solver benchmark no machine finishes in seconds (2,000 Trainers on 10,000 nodes, MILP, 100
    repetitions; at 100,000 nodes the allocators' memory estimate now refuses it at once)."""
    return worker.start(d, "solver", {"jobs": [2000], "pools": [10_000], "allocators": ["milp"], "reps": 100,
                                      "time_limit_s": 100.0, "ws_dir": str(d)}, **kw)


def _wait_started(job: worker.Job, timeout_s: float = 60) -> None:
    deadline = time.time() + timeout_s
    while not (job.job_dir / "progress.json").exists():
        assert time.time() < deadline and job.proc.poll() is None, "the worker did not start"
        time.sleep(0.05)


@pytest.mark.parametrize("rc,status,words", [
    (-signal.SIGKILL, "killed", ["SIGKILL", "out-of-memory killer"]),
    (-signal.SIGSEGV, "crashed", ["segmentation fault"]),
    (-signal.SIGALRM, "time", ["time budget of 60 s"]),
    (-signal.SIGXCPU, "time", ["CPU-time budget of 60 s"]),
    (worker.EXIT_MEMORY, "memory", ["memory budget of 100 MiB"]),
    (worker.EXIT_ORPHANED, "crashed", ["server that started the worker went away"]),
    (7, "crashed", ["exit code 7"]),
])
def test_each_ending_has_its_own_message(rc, status, words):
    out = worker.ending(rc, None, 100, 60.0)
    assert out["status"] == status
    for w in words:
        assert w in out["message"]
    if rc in (-signal.SIGKILL, -signal.SIGSEGV):
        assert "budget" not in out["message"]


@pytest.mark.slow
def test_sigkill_from_outside_is_not_reported_as_the_time_budget(tmp_path):
    job = _long_job(_ws(tmp_path))
    _wait_started(job)
    os.kill(job.pid, signal.SIGKILL)
    job.proc.wait(30)
    out = worker.poll(job)
    assert out["status"] == "killed" and "time budget" not in out["message"], out


@pytest.mark.slow
def test_a_segfault_is_not_reported_as_the_memory_budget(tmp_path):
    job = _long_job(_ws(tmp_path))
    _wait_started(job)
    os.kill(job.pid, signal.SIGSEGV)
    job.proc.wait(30)
    out = worker.poll(job)
    assert out["status"] == "crashed" and "segmentation fault" in out["message"], out
    assert "memory budget" not in out["message"]


@pytest.mark.slow
def test_the_worker_enforces_its_own_wall_time(tmp_path):
    """Nobody polls: the worker stops itself (SIGALRM) 2 s after its budget."""
    job = _long_job(_ws(tmp_path), time_s=1)
    t0 = time.time()
    rc = job.proc.wait(60)
    assert rc == -signal.SIGALRM and time.time() - t0 < 30
    out = worker.poll(job)
    assert out["status"] == "time" and "time budget of 1 s" in out["message"]


@pytest.mark.slow
def test_a_killed_load_leaves_no_partial_file_or_wal(tmp_path):
    d = _ws(tmp_path)
    rows = "".join(f"{j} {j} 0 100 4 -1 -1 4 100 -1 1 1 1 -1 1 1 -1 -1\n" for j in range(1, 400_001))
    up = workspace.write_private(d / "uploads" / "u.swf", ("; MaxNodes: 64\n" + rows).encode())
    out_file = workspace.log_file(d, "big")
    job = worker.start(d, "ingest", {"upload": str(up), "user_filename": "big.swf", "log_name": "big",
                                     "out": str(out_file)})
    loading = out_file.parent / f".{out_file.name}.loading"
    deadline = time.time() + 60
    while not loading.exists() and job.proc.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    # a DuckDB file mid-write has its .wal next to it; make sure one is there when the kill lands
    Path(str(loading) + ".wal").write_bytes(b"partial")
    os.kill(job.pid, signal.SIGKILL)
    job.proc.wait(30)
    out = worker.poll(job)
    worker.cleanup(job)
    left = sorted(p.name for p in (d / "logs").iterdir())
    if out["status"] == "ok":  # finished before the kill: the log is whole
        assert left == ["big.duckdb"], left
    else:
        assert out["status"] == "killed" and left == [], left


@pytest.mark.slow
def test_a_worker_dies_with_its_server(tmp_path):
    d = _ws(tmp_path)
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from appkit import worker
        job = worker.start(Path({str(d)!r}), "solver", {{"jobs": [2000], "pools": [100000],
                           "allocators": ["milp"], "reps": 100, "time_limit_s": 100.0, "ws_dir": {str(d)!r}}})
        print(job.pid, flush=True)
        time.sleep(300)
    """)
    env = dict(os.environ, PYTHONPATH=str(server.paths.ROOT))
    srv = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        pid = int(srv.stdout.readline())
        time.sleep(1.0)
        os.kill(srv.pid, signal.SIGKILL)  # the server dies without a word
        srv.wait(10)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            # a zombie counts as gone: its parent is gone, init reaps it
            try:
                if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                    break
            except OSError:
                break
            time.sleep(0.2)
        else:
            os.kill(pid, signal.SIGKILL)
            pytest.fail("the worker outlived its server by 20 s")
    finally:
        if srv.poll() is None:
            srv.kill()


@pytest.mark.slow
def test_jobs_from_before_a_restart_are_counted_taken_over_and_cleaned(tmp_path, monkeypatch):
    """Issue 23, finding 2, with real workers: a first server process starts a load (which finishes
    but is never polled: the server dies right after) and a long benchmark. While that server runs,
    a second server process on the same workspaces counts the benchmark's worker against its cap.
    Then the first server is SIGKILLed (its benchmark worker ends itself) and the second takes both
    jobs over: the load's result (the log is there, the report read from its outcome), the
    benchmark's "stopped: the server restarted"; both scratch directories are removed."""
    d = _ws(tmp_path)
    up = workspace.write_private(d / "uploads" / "kth.swf", server.small_swf(50).encode())
    out_file = workspace.log_file(d, "kth")
    script = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from appkit import worker
        d = Path({str(d)!r})
        load = worker.start(d, "ingest", {{"upload": {str(up)!r}, "user_filename": "kth.swf",
                                            "log_name": "kth", "out": {str(out_file)!r}}})
        while not (load.job_dir / "outcome.json").exists():
            time.sleep(0.05)
        bench = worker.start(d, "solver", {{"jobs": [2000], "pools": [10000], "allocators": ["milp"],
                                            "reps": 100, "time_limit_s": 100.0, "ws_dir": {str(d)!r}}})
        print(bench.pid, flush=True)
        time.sleep(300)
    """)
    env = dict(os.environ, PYTHONPATH=str(server.paths.ROOT))
    srv = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        bench_pid = int(srv.stdout.readline())
        # the second server: the first one's running worker takes a slot (the load's worker, done,
        # is exiting: a zombie of the first server has no command line and is not counted)
        deadline = time.time() + 20
        while [p for p, _ in worker.foreign_workers(tmp_path)] != [bench_pid] and time.time() < deadline:
            time.sleep(0.1)
        assert [p for p, _ in worker.foreign_workers(tmp_path)] == [bench_pid]
        monkeypatch.setenv("PLANNER_APP_MAX_JOBS", "1")
        with pytest.raises(worker.Busy,
                           match=r"1 worker processes are running \(1 started before the server restarted\)"):
            worker.start(d, "solver", {"jobs": [1], "pools": [1], "allocators": ["dp"], "reps": 1,
                                       "time_limit_s": 1.0, "ws_dir": str(d)})
        os.kill(srv.pid, signal.SIGKILL)  # the first server dies without a word
        srv.wait(10)
        deadline = time.time() + 20
        while worker.foreign_workers(tmp_path) and time.time() < deadline:
            time.sleep(0.2)
        assert worker.foreign_workers(tmp_path) == [], "the first server's worker outlived it"
        jobs = {j.kind: j for j in worker.recover(d)}
        assert sorted(jobs) == ["ingest", "solver"] and all(j.adopted for j in jobs.values())
        assert worker.recover(d) == []  # taken over once (a second tab on the link gets nothing)
        load, bench = worker.poll(jobs["ingest"]), worker.poll(jobs["solver"])
        assert load["status"] == "ok" and load["result"]["log"] == "kth" and out_file.exists(), load
        assert bench["status"] == "restart" and "server restarted" in bench["message"], bench
        for j in jobs.values():
            worker.cleanup(j)
        assert list((d / "jobs").iterdir()) == []
        assert sorted(p.name for p in (d / "logs").iterdir()) == ["kth.duckdb"]
    finally:
        if srv.poll() is None:
            srv.kill()


@pytest.mark.slow  # two DuckDB processes and the Summit log loaded: ~9 s
def test_another_process_holding_the_database_is_a_note_not_an_exception(tmp_path, monkeypatch):
    """Issue 23, finding 2: the restarted server opens the shared database although a process from
    before (reading it) holds a lock; a process writing it gives a note naming it, not an exception."""
    import duckdb

    from appkit import data
    from planner.store import catalog, db

    path = tmp_path / "shared.duckdb"
    con = db.connect(path)
    catalog.ensure_default(con)
    con.close()
    monkeypatch.setattr(data, "shared_db_path", lambda: str(path))
    for read_only, busy in ((True, False), (False, True)):
        holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, time
            con = duckdb.connect({str(path)!r}, read_only={read_only})
            print("held", flush=True)
            time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "held"
            data._shared_connection.clear()
            note = data.shared_db_busy()
            if busy:
                assert note and f"(PID {holder.pid})" in note and "from before the server restarted" in note, note
            else:
                assert note is None
                assert data.shared_cursor().execute("SELECT count(*) FROM logs").fetchone()[0] >= 1
        finally:
            holder.kill()
            holder.wait(10)
            data._shared_connection.clear()
    with pytest.raises((duckdb.IOException, InputError)):  # not a lock: still an error
        path.write_bytes(b"not a database" * 100)
        data.shared_db_busy()


@pytest.mark.slow  # a spare and a cold worker, two short replays of the Summit log
def test_a_spare_worker_runs_the_next_replay_and_is_told_from_other_processes(tmp_path, summit_db, monkeypatch):
    """The pre-started worker (appkit.worker.ensure_spare): the next replay runs in it (no cold
    start), as a job like any other (its stderr in the job dir, its pid recognised by the job dir,
    the result saved); a spare started under another environment is not used; an idle spare is not
    a job (foreign_workers) and leaves when its server closes its stdin."""
    monkeypatch.setenv("PLANNER_APP_SPARE_WORKER", "1")
    d = _ws(tmp_path)
    sc = {"log": "summit-2021", "start": "2021-02-10 20:21:15", "hours": 1.0, "pool": "log", "pool_size": 400,
          "workload": "hpo", "count": 8, "allocator": "dp", "baseline": "equal-share"}
    spec = {"scenario": sc, "db": str(summit_db), "ws_dir": str(d)}
    worker.ensure_spare(tmp_path)
    spare = worker._SPARE["proc"]
    worker.ensure_spare(tmp_path)  # one is there: no second
    assert worker._SPARE["proc"] is spare
    assert spare.pid not in [p for p, _ in worker.foreign_workers(tmp_path)]  # idle: not a job
    time.sleep(2.5)  # its imports done (the warm-up delay is 1 s)
    job = worker.start(d, "replay", {**spec, "rid": "a" * 16}, procs=2)  # its two replays at once (fork)
    assert job.pid == spare.pid and "proc" not in worker._SPARE and job.procs == 2
    deadline = time.time() + 30  # it has read its job directory (and moved into it)
    while not worker._is_worker_of(job.pid, job.job_dir) and time.time() < deadline and job.proc.poll() is None:
        time.sleep(0.01)
    assert worker._is_worker_of(job.pid, job.job_dir) and not worker._is_worker_of(job.pid, d)
    out = worker.run_to_end(job, poll_s=0.05)
    assert out["status"] == "ok" and set(out["result"]["limits"]) == {"dp", "equal-share"}, out
    assert worker.ready(job) == {"rid": "a" * 16, "wall_s": out["result"]["wall_s"]}
    run = workspace.load_run(d, "a" * 16)
    assert run["runs"]["dp"].summary["cost_free"] == out["result"]["limits"]["dp"]["cost_free"]
    worker.cleanup(job)
    worker.ensure_spare(tmp_path)
    other = worker._SPARE["proc"]
    monkeypatch.setenv("PLANNER_ALLOC_MEM_MB", "1000")  # the environment changed: a cold worker
    job = worker.start(d, "replay", {**spec, "rid": "b" * 16})
    assert job.pid != other.pid and other.wait(timeout=10) is not None
    assert worker.run_to_end(job, poll_s=0.05)["status"] == "ok"
    worker.cleanup(job)
    worker.ensure_spare(tmp_path)
    last = worker._SPARE["proc"]
    worker._SPARE.clear()
    last.stdin.close()  # as when its server goes: it leaves on its own
    assert last.wait(timeout=20) == 0
