"""Heavy work of the app (a log load, a Planner replay, a Compare sweep, a Solver benchmark) in a
worker process with a memory and a time budget, so one user's work can never exhaust the shared server.

Pure (no Streamlit). `start()` writes the job's spec into a private job directory and spawns
`python -m appkit.jobs <job dir>` in its own process group; the child caps its address space
(RLIMIT_AS) and CPU time (RLIMIT_CPU) before importing anything heavy, runs the job and writes
progress.json while it goes and outcome.json at the end. `poll()` reads them, enforces the
wall-clock budget (the whole process group is killed when it passes) and turns every way a
child can end into one readable outcome: ok, error (an InputError's line), memory (budget hit),
time (budget hit), cancelled, crashed. The server process itself never holds the job's data.

Budgets: PLANNER_APP_MEM_MB (default 2048 MiB of address space per worker process; a Compare grid's
W pool processes inherit the cap each, so a grid may use up to (W + 1) x the budget) and
PLANNER_APP_TIME_S (default 900 s of wall time per job).

Processes: at most PLANNER_APP_MAX_JOBS worker processes run at once over all sessions. A job
may ask for more than one (`procs`: a many-window run's pool of local processes); it is granted
what is free, at most PLANNER_APP_USER_PROCS over all running jobs of its workspace (one user),
and at least 1 (it then runs in its own process); every granted process counts against both caps
until the job ends. When the operator set PLANNER_APP_DASK_SCHEDULER (tcp://HOST:PORT) such a job
runs its cells on that Dask cluster instead and counts as one process here.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from appkit import workspace
from planner import paths
from planner.errors import InputError

EXIT_MEMORY = 3  # the child's exit code when it ran out of its memory budget
EXIT_ORPHANED = 5  # the child ended itself: its server went away (appkit.jobs)


def mem_budget_mb() -> int:
    return int(float(os.environ.get("PLANNER_APP_MEM_MB", "2048")))


def time_budget_s() -> float:
    return float(os.environ.get("PLANNER_APP_TIME_S", "900"))


def max_jobs() -> int:
    """Workers the server runs at once (over all sessions); more are refused, not queued."""
    return int(os.environ.get("PLANNER_APP_MAX_JOBS", "4"))


def user_procs() -> int:
    """Worker processes one workspace's jobs may use together (a many-window run's pool)."""
    return max(1, int(os.environ.get("PLANNER_APP_USER_PROCS", "2")))


def dask_scheduler() -> str | None:
    """The Dask scheduler the operator configured for the app's many-window runs (None: local)."""
    return os.environ.get("PLANNER_APP_DASK_SCHEDULER") or None


class Busy(InputError):
    """Every worker slot of the server is taken (the caller may wait for one)."""


_LIVE: dict[int, subprocess.Popen] = {}
_SLOTS: dict[int, tuple[int, str]] = {}  # pid -> (processes granted, workspace dir) of a live job
_LIVE_LOCK = threading.Lock()


@dataclass
class Job:
    kind: str
    job_dir: Path
    pid: int
    started_s: float
    time_s: float
    mem_mb: int
    proc: subprocess.Popen | None = field(default=None, repr=False, compare=False)
    adopted: bool = False  # started by a server from before a restart (recover())
    procs: int = 1  # worker processes granted (counted against the caps while it runs)

    def elapsed_s(self) -> float:
        return time.time() - self.started_s


def start(ws_dir: Path, kind: str, spec: dict, mem_mb: int | None = None, time_s: float | None = None,
          procs: int = 1) -> Job:
    """Spawn a worker for `spec` (a JSON-able dict with the job's inputs). procs > 1: the job
    may run up to that many processes; it gets what is free (at least 1), written into its spec
    as "procs" (see the module docstring)."""
    mem_mb = mem_budget_mb() if mem_mb is None else int(mem_mb)
    time_s = time_budget_s() if time_s is None else float(time_s)
    job_dir = workspace.private_dir(Path(ws_dir) / "jobs" / f"{kind}-{secrets.token_hex(6)}")
    ws_key = str(Path(ws_dir).resolve())
    env = _worker_env()
    # the slot check, the spawn and the registration under one lock: sessions starting at the same
    # moment cannot all pass the check (Popen itself is quick)
    with _LIVE_LOCK, open(job_dir / "stderr.txt", "wb") as err:
        for pid in [p for p, pr in _LIVE.items() if pr.poll() is not None]:
            del _LIVE[pid]
            _SLOTS.pop(pid, None)
        before = len(foreign_workers(Path(ws_dir).parent))  # a server's from before a restart count too
        used = sum(_SLOTS.get(p, (1, ""))[0] for p in _LIVE) + before
        if used >= max_jobs():
            shutil.rmtree(job_dir, ignore_errors=True)
            raise Busy(f"the server is busy: {used} worker processes are running"
                       + (f" ({before} started before the server restarted)" if before else "")
                       + f" (at most {max_jobs()} at once); try again in a minute", field="server")
        mine = sum(n for p, (n, w) in _SLOTS.items() if w == ws_key and p in _LIVE)
        granted = max(1, min(int(procs), max_jobs() - used, user_procs() - mine))
        workspace.write_private(job_dir / "spec.json", json.dumps(
            {**spec, "kind": kind, "mem_mb": mem_mb, "time_s": time_s, "server_pid": os.getpid(),
             "procs": granted}, default=str).encode())
        proc = _take_spare(kind, env, Path(ws_dir).parent, job_dir)
        if proc is None:
            proc = subprocess.Popen([sys.executable, "-m", "appkit.jobs", str(job_dir)], cwd=paths.ROOT, env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                    start_new_session=True)
        _LIVE[proc.pid] = proc
        _SLOTS[proc.pid] = (granted, ws_key)
    started = time.time()
    workspace.write_private(job_dir / WORKER_FILE, json.dumps({"pid": proc.pid, "started_s": started}).encode())
    return Job(kind, job_dir, proc.pid, started, time_s, mem_mb, proc, procs=granted)


def _worker_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(paths.ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


# ---------------------------------------------------------------------------
# one spare worker: started ahead (appkit.jobs.spare imports what a replay needs, ~1.2 s of CPU,
# while nobody waits), handed the next replay's job directory on stdin; the Planner's Run then
# does not wait for a Python start and its imports. It is not a job: it takes no slot of the cap
# until it has one, and it ends when its server goes (stdin closed). Off: PLANNER_APP_SPARE_WORKER=0.

SPARE_KINDS = frozenset({"replay"})
_SPARE: dict = {}  # proc, env, root


def spare_enabled() -> bool:
    return os.environ.get("PLANNER_APP_SPARE_WORKER", "1") != "0"


def ensure_spare(root: Path) -> None:
    """Start the spare worker for workspaces under `root` unless one is there (cheap when it is)."""
    if not spare_enabled():
        return
    root = str(Path(root).resolve())
    with _LIVE_LOCK:
        p = _SPARE.get("proc")
        if p is not None and p.poll() is None and _SPARE.get("root") == root:
            return
        _drop_spare()
        env = _worker_env()
        from appkit.jobs import SPARE_ARG

        _SPARE.update(proc=subprocess.Popen(
            [sys.executable, "-m", "appkit.jobs", SPARE_ARG, root], cwd=paths.ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True),
            env=env, root=root)


def _drop_spare() -> None:
    p = _SPARE.pop("proc", None)
    if p is not None and p.poll() is None:
        try:
            p.stdin.close()  # it leaves on its own (no job)
        except OSError:
            pass
        try:
            p.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    _SPARE.clear()


def _take_spare(kind: str, env: dict, root: Path, job_dir: Path) -> subprocess.Popen | None:
    """The spare, handed job_dir (under _LIVE_LOCK), when it fits: a replay, the same environment
    and sessions root, alive; else None (a spare that no longer fits is ended)."""
    if kind not in SPARE_KINDS or "proc" not in _SPARE:
        return None
    p, same = _SPARE["proc"], _SPARE.get("env") == env and _SPARE.get("root") == str(Path(root).resolve())
    if not same or p.poll() is not None:
        _drop_spare()
        return None
    _SPARE.clear()
    try:
        p.stdin.write(f"{job_dir}\n".encode())
        p.stdin.close()
    except OSError:
        p.kill()
        p.wait()
        return None
    return p


WORKER_FILE = "worker.json"  # the worker's pid and start, for the next server (recover())
CLAIMED_FILE = "claimed.json"  # worker.json once a session of a later server took the job over


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace").split("\0")
    except OSError:
        return []


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def _job_arg(pid: int, argv: list[str]) -> str:
    """The job directory of a worker process (a spare's: its working directory once it has a job)."""
    i = argv.index("appkit.jobs")
    arg = argv[i + 1] if i + 1 < len(argv) else ""
    return _cwd(pid) if arg == "--spare" else arg


def _is_worker_of(pid: int, job_dir: Path) -> bool:
    """Whether pid is the worker of job_dir (not a recycled pid of another process)."""
    argv = _cmdline(pid)
    if "appkit.jobs" not in argv:
        return False
    arg = _job_arg(pid, argv)
    return arg == str(job_dir) or (bool(arg) and arg == os.path.realpath(job_dir))


def foreign_workers(root: Path) -> list[tuple[int, Path]]:
    """(pid, job dir) of workers on job dirs under root (the sessions root) that this server
    process did not start: those of a server from before a restart (a worker ends itself within
    ~1 s of its server's death, see appkit.jobs; one busy in native code may take longer). Linux
    /proc; elsewhere none are seen."""
    root_s = str(Path(root).resolve())
    out = []
    proc = Path("/proc")
    if not proc.is_dir():
        return out
    for d in proc.iterdir():
        if not d.name.isdigit() or int(d.name) in _LIVE:
            continue
        argv = _cmdline(int(d.name))
        if "appkit.jobs" in argv:
            arg = _job_arg(int(d.name), argv)  # an idle spare has none under root: not a job
            if arg.startswith(root_s + os.sep):
                out.append((int(d.name), Path(arg)))
    return out


def recover(ws_dir: Path) -> list[Job]:
    """The jobs of this workspace started by another server process (one from before a restart),
    taken over by the caller: running ones (counted by start() until they end), finished ones
    (their outcome.json: the result saved by the worker) and dead ones (poll() says the restart
    stopped them). Each job is claimed once (an atomic rename), so two sessions on one link do not
    both follow it; poll() and cleanup() then work as for a job of this server."""
    jobs_dir = Path(ws_dir) / "jobs"
    if not jobs_dir.is_dir():
        return []
    out = []
    for d in sorted(jobs_dir.iterdir()):
        try:
            spec = json.loads((d / "spec.json").read_text())
        except (OSError, ValueError):
            continue
        if spec.get("server_pid") == os.getpid():  # this server's own job: its session follows it
            continue
        try:
            os.rename(d / WORKER_FILE, d / CLAIMED_FILE)
            w = json.loads((d / CLAIMED_FILE).read_text())
        except FileNotFoundError:
            if (d / CLAIMED_FILE).exists():
                continue  # another session took it over
            w = {"pid": -1, "started_s": (d / "spec.json").stat().st_mtime}  # the server died while starting it
        except (OSError, ValueError):
            continue
        out.append(Job(str(spec.get("kind", d.name.split("-")[0])), d, int(w.get("pid", -1)),
                       float(w.get("started_s", time.time())), float(spec.get("time_s", time_budget_s())),
                       int(spec.get("mem_mb", mem_budget_mb())), None, adopted=True))
    return out


def _kill_group(job: Job) -> None:
    if job.proc is None and not _is_worker_of(job.pid, job.job_dir):
        return  # a taken-over job whose worker is gone (its pid may belong to another process now)
    try:
        os.killpg(job.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if job.proc is not None:
        try:
            job.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def _returncode(job: Job) -> int | None:
    if job.proc is not None:
        return job.proc.poll()
    # a job handle without its Popen (a job taken over from a server before a restart): is its
    # worker still there? (by /proc: a recycled pid is not the worker)
    return None if _is_worker_of(job.pid, job.job_dir) else -1


def progress(job: Job) -> tuple[float, str]:
    """(fraction 0..1, text) as last written by the worker."""
    try:
        p = json.loads((job.job_dir / "progress.json").read_text())
        return float(p.get("frac", 0.0)), str(p.get("text", ""))
    except (OSError, ValueError):
        return 0.0, "starting the worker ..."


def ready(job: Job) -> dict | None:
    """The main result of a job that goes on after it (a replay's cost-free twins), once the
    worker saved it (appkit.jobs: ready.json); None before (or for jobs that announce none)."""
    try:
        return json.loads((job.job_dir / "ready.json").read_text())
    except (OSError, ValueError):
        return None


def cancel(job: Job) -> dict:
    _kill_group(job)
    return {"status": "cancelled", "message": f"cancelled after {job.elapsed_s():.0f} s"}


def poll(job: Job) -> dict | None:
    """None while the job runs; else its outcome {"status", "message", "result"}."""
    rc = _returncode(job)
    if rc is None:
        if job.elapsed_s() > job.time_s:
            _kill_group(job)
            return {"status": "time", "message": f"stopped: the time budget of {job.time_s:,.0f} s per job was "
                                                 "reached (choose a shorter window, a smaller pool or fewer cells)"}
        return None
    if job.proc is not None:
        _kill_group(job)  # leftovers of the group (sweep workers), if any
    try:
        out = json.loads((job.job_dir / "outcome.json").read_text())
    except (OSError, ValueError):
        out = None
    if out is not None and out.get("status") != "memory":
        return out
    if job.adopted and out is None:
        return {"status": "restart", "message": "stopped: the server restarted while it ran (a worker ends with "
                                                "its server); nothing was saved; start it again"}
    # native code (NumPy, DuckDB) that cannot get memory under RLIMIT_AS may abort or segfault;
    # or e.g. OpenBLAS refuses to start under the cap and says so on stderr
    return ending(rc, out, job.mem_mb, job.time_s, _stderr_says_memory(job) if out is None else False)


def ending(rc: int | None, out: dict | None, mem_mb: int, time_s: float, stderr_memory: bool = False) -> dict:
    """The outcome of a worker that ended without its own ok/error outcome, from its exit: one
    exact message per way a worker can end (memory budget, time budget by wall clock or CPU, killed
    from outside, a crash by signal, another exit code)."""
    memory = {"status": "memory", "message": f"stopped: the memory budget of {mem_mb:,} MiB per process was "
                                             "reached (choose a shorter window, a smaller pool or a smaller file)"}
    if (out is not None and out.get("status") == "memory") or rc == EXIT_MEMORY or stderr_memory:
        return memory
    if rc == -signal.SIGALRM:
        return {"status": "time", "message": f"stopped: the time budget of {time_s:,.0f} s per job was reached "
                                             "(choose a shorter window, a smaller pool or fewer cells)"}
    if rc == -signal.SIGXCPU:
        return {"status": "time", "message": f"stopped: the CPU-time budget of {time_s:,.0f} s per job was "
                                             "reached (choose a shorter window, a smaller pool or fewer cells)"}
    if rc == -signal.SIGKILL:
        return {"status": "killed", "message": "stopped: the worker was killed from outside the app (SIGKILL: "
                                               "most often the system's out-of-memory killer, when the machine "
                                               "runs short of memory); nothing was saved"}
    if rc == EXIT_ORPHANED:
        return {"status": "crashed", "message": "stopped: the server that started the worker went away; nothing "
                                                "was saved"}
    if rc is not None and rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        what = {"SIGSEGV": "a segmentation fault", "SIGBUS": "a bus error", "SIGABRT": "an abort",
                "SIGTERM": "a termination request", "SIGFPE": "a floating-point exception",
                "SIGILL": "an illegal instruction"}.get(name, name)
        return {"status": "crashed", "message": f"the worker crashed ({what}, {name}) in native code; nothing "
                                                "was saved (the server log has the details)"}
    return {"status": "crashed", "message": f"the worker stopped unexpectedly (exit code {rc}); nothing was saved"}


def _stderr_says_memory(job: Job) -> bool:
    try:
        with open(job.job_dir / "stderr.txt", "rb") as fh:
            fh.seek(max(fh.seek(0, 2) - 4096, 0))
            tail = fh.read().decode("utf-8", "replace").lower()
    except OSError:
        return False
    from appkit.jobs import MEMORY_MARKERS

    return any(m in tail for m in MEMORY_MARKERS)


def cleanup(job: Job, log_errors: bool = False) -> None:
    """Remove the job's scratch directory; a failed job's stderr tail goes to the server log first."""
    if log_errors:
        try:
            tail = (job.job_dir / "stderr.txt").read_text(errors="replace")[-4000:]
            if tail.strip():
                sys.stderr.write(f"[harvest planner] {job.kind} worker {job.pid} failed:\n{tail}\n")
        except OSError:
            pass
    _drop_partial_load(job.job_dir)
    shutil.rmtree(job.job_dir, ignore_errors=True)


def _drop_partial_load(job_dir: Path) -> None:
    """A load that did not finish (killed, crashed) leaves no partial DuckDB file or `.wal`."""
    try:
        spec = json.loads((Path(job_dir) / "spec.json").read_text())
    except (OSError, ValueError):
        return
    if spec.get("kind") != "ingest" or not spec.get("out"):
        return
    out = Path(spec["out"])
    tmp = out.parent / f".{out.name}.loading"
    for p in (tmp, Path(str(tmp) + ".wal")):
        p.unlink(missing_ok=True)
    if not out.exists():
        Path(str(out) + ".wal").unlink(missing_ok=True)


def run_to_end(job: Job, poll_s: float = 0.1, on_progress=None) -> dict:
    """Block until the job ends (for the CLI-less callers: tests, benchmarks)."""
    while True:
        out = poll(job)
        if out is not None:
            return out
        if on_progress is not None:
            on_progress(*progress(job))
        time.sleep(poll_s)
