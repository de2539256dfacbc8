"""Issue 23, finding 6: killing the Dask scheduler mid-sweep is a one-line error and a non-zero
exit (it ended with exit 0 and a traceback, 12 of 16 cells "worker lost"); a rerun resumes."""

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

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CELLS = 16


def _dask() -> list[str]:
    exe = Path(sys.executable).with_name("dask")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dask"]


def _kill(p: subprocess.Popen) -> None:
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.wait(timeout=30)


@pytest.mark.timeout(400)
def test_losing_the_scheduler_is_one_line_and_a_non_zero_exit(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    sched_file = tmp_path / "scheduler.json"
    log = open(tmp_path / "dask.log", "wb")
    procs = []
    try:
        sched = subprocess.Popen([*_dask(), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                  "--scheduler-file", str(sched_file)], cwd=tmp_path, env=env, stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(sched)
        deadline = time.monotonic() + 60
        while not (sched_file.exists() and sched_file.stat().st_size > 0):
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        procs.append(subprocess.Popen([*_dask(), "worker", address, "--host", "127.0.0.1", "--nworkers", "1",
                                       "--nthreads", "1", "--no-dashboard"], cwd=tmp_path, env=env, stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True))
        grid = tmp_path / "grid.json"
        grid.write_text(json.dumps({"base": {"pool": "fixed", "pool_size": 256, "hours": 6},
                                    "grid": {"seed": list(range(CELLS))}}))
        out = tmp_path / "res.duckdb"
        proc = subprocess.Popen([sys.executable, "-m", "planner", "sweep", "--grid", str(grid), "--out", str(out),
                                 "--executor", "dask", "--scheduler", address], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        procs.append(proc)
        lines: queue.Queue = queue.Queue()
        err: list[str] = []

        def read():
            for x in iter(proc.stderr.readline, ""):
                err.append(x)
                lines.put(x)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        finished, deadline = 0, time.monotonic() + 240
        while finished < 2:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, "the sweep ended early:\n" + "".join(err)
            finished += len(re.findall(r"cell \d+ (?:ok|error) ", line))
        os.killpg(sched.pid, signal.SIGKILL)
        proc.wait(timeout=180)
        time.sleep(0.5)
        text = "".join(err)
        last = [ln for ln in text.splitlines() if ln.strip()][-1]
        assert proc.returncode == 2, text[-3000:]
        assert "Traceback" not in text, text[-3000:]
        assert "lost the Dask scheduler" in last and "resume" in last
    finally:
        for p in procs:
            _kill(p)
        log.close()
