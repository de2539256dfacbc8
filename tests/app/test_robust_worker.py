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
