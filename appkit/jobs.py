"""The worker process's side of appkit.worker: `python -m appkit.jobs <job dir>`.

Caps its own address space and CPU time first (before pandas, DuckDB or Pyomo are imported),
then runs one job from spec.json and writes outcome.json: {"status": "ok", "result": ...} or
{"status": "error", "message": one line} or {"status": "memory"}. Job kinds:

ingest  load an uploaded file into a new DuckDB file of the workspace (renamed into place only
        when complete) and look for a warm-up at the start of a job log
replay  the Planner's run pair on one log; the replays are saved in the workspace's runs/ and
        announced (ready.json: the page shows them), then their cost-free twins are added
sweep   the Compare page's grid through planner.sweep.run_sweep
solver  the Solver page's allocator benchmark (appkit.solver.run_grid); the table is saved in
        the workspace
probe   the Logs page's preview and format guess of a staged upload (so that a hostile file costs
        the server nothing: issue 23)
"""

from __future__ import annotations

import json
import math
import os
import resource
import signal
import sys
import threading
import time
import traceback
from pathlib import Path


def _limits(mem_mb: int, time_s: float) -> None:
    mem = int(mem_mb) * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    cpu = int(time_s) + 30  # a backstop: the parent enforces the wall-clock budget
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    # the wall-clock budget enforced by the worker itself, whatever happens to its server: SIGALRM's
    # default action ends the process even inside native code (appkit.worker reads -SIGALRM as "time")
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(max(1, int(math.ceil(float(time_s)))) + 2)


def _die_with_parent(parent_pid: int, period_s: float = 1.0) -> None:
    """A daemon thread that ends this worker's process group when its server is gone (the worker
    runs in its own session, so a SIGKILLed server would otherwise leave it running)."""
    def watch():
        while True:
            time.sleep(period_s)
            if os.getppid() != parent_pid:
                try:
                    os.killpg(os.getpgid(0), signal.SIGKILL)
                finally:
                    os._exit(EXIT_ORPHANED)

    threading.Thread(target=watch, name="die-with-server", daemon=True).start()


class _Progress:
    """Writes progress.json atomically, at most every 0.2 s (and always the last call's text)."""

    def __init__(self, job_dir: Path):
        self.path, self.last = Path(job_dir) / "progress.json", 0.0

    def __call__(self, frac: float, text: str = "", force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < 0.2:
            return
        self.last = now
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"frac": float(frac), "text": str(text)}))
        os.replace(tmp, self.path)

    def ready(self, result: dict) -> None:
        """The job's main result is saved; what follows only adds to it (appkit.worker.ready)."""
        tmp = self.path.with_name("ready.tmp")
        tmp.write_text(json.dumps(result, default=str))
        os.replace(tmp, self.path.with_name(READY_FILE))


READY_FILE = "ready.json"


def _clean(message: str, spec: dict) -> str:
    """No server paths in messages: the stored upload's path becomes the user's file name."""
    for key in ("upload",):
        p = spec.get(key)
        if p:
            message = message.replace(str(p), spec.get("user_filename", "the file"))
            message = message.replace(Path(p).name, spec.get("user_filename", "the file"))
    for key in ("out", "db", "ws_dir"):
        p = spec.get(key)
        if p:
            message = message.replace(str(p), f"the {key}")
    from appkit.report import scrub_paths
    from appkit.uploads import md

    return md(scrub_paths(message))  # shown as Markdown by the pages: user text made inert


def job_ingest(spec: dict, progress) -> dict:
    from planner import logs
    from planner.idle import fragments, warmup
    from planner.idle.window import Window
    from planner.store import db

    out = Path(spec["out"])
    tmp = out.parent / f".{out.name}.loading"
    tmp.unlink(missing_ok=True)
    from appkit.uploads import md

    progress(0.05, f"reading {md(spec['user_filename'])} ...", True)
    con = db.connect(tmp)
    ok = False
    guard = _QuotaGuard(con, tmp, spec.get("quota_left_bytes"))
    try:
        left = spec.get("quota_left_bytes")
        try:  # refused before writing when the parsed tables are larger than what is left
            report = logs.ingest(con, spec["upload"], format=spec.get("format") or None, name=spec["log_name"],
                                 machine_nodes=spec.get("machine_nodes") or None,
                                 mapping=spec.get("mapping") or None,
                                 max_store_bytes=None if left is None else max(int(left) - _stored_bytes(tmp), 0))
        except logs.StoreTooLarge as e:
            from planner.errors import InputError

            raise InputError(f"storing the log needs about {e.need / 2**20:,.1f} MiB, more than the "
                             f"{max(int(left), 0) / 2**20:,.1f} MiB left in this workspace's quota; nothing was "
                             "written; remove a log or staged files below, or start a new workspace",
                             field="workspace") from None
        except Exception:
            guard.raise_if_over()  # interrupted by the guard: the quota is the reason, not DuckDB's words
            raise
        guard.raise_if_over()
        if spec.get("unit", "node") != "node":
            logs.set_unit(con, spec["log_name"], spec["unit"])
        progress(0.8, "looking for a warm-up at the start ...", True)
        report["warmup"] = None
        if report.get("kind") == "jobs":
            s = fragments.idle_series(con, Window(spec["log_name"]), harvest=False)  # the log as it is
            report["warmup"] = warmup.detect(s["t_s"], s["idle_nodes"], int(report["nodes"])).to_dict()
        con.execute("CHECKPOINT")
        _check_stored(tmp, spec)
        ok = True
    finally:
        guard.stop()
        con.close()
        if not ok:  # a refused or failed load leaves no partial file behind
            tmp.unlink(missing_ok=True)
            Path(str(tmp) + ".wal").unlink(missing_ok=True)
    os.chmod(tmp, 0o600)
    os.replace(tmp, out)
    return report


def _stored_bytes(db_file: Path) -> int:
    return sum(p.stat().st_size for p in (db_file, Path(str(db_file) + ".wal")) if p.exists())


def _quota_message(stored: int, left: int) -> str:
    return (f"the loaded log takes more than the {max(int(left), 0) / 2**20:,.1f} MiB left in this workspace's "
            f"quota (stopped at {stored / 2**20:,.1f} MiB); remove a log or staged files below, or start a new "
            "workspace")


class _QuotaGuard:
    """Stops a load as soon as its DuckDB file (and `.wal`) passes what is left of the workspace
    quota, while it is being written (issue 23, finding 4): a thread measures the files every
    QUOTA_POLL_S and interrupts DuckDB's running statement (again at every poll while over, so a
    statement started later is stopped too); the load then fails with the quota's line and its
    file is removed. The disk holds at most what is left plus what DuckDB writes in one poll."""

    def __init__(self, con, db_file: Path, left: int | None):
        self.con, self.db_file, self.left = con, Path(db_file), left
        self.over: int | None = None
        self._stop = threading.Event()
        if left is not None:
            threading.Thread(target=self._watch, name="quota-guard", daemon=True).start()

    def _watch(self) -> None:
        while not self._stop.wait(QUOTA_POLL_S):
            try:
                stored = _stored_bytes(self.db_file)
            except OSError:
                continue
            if stored > int(self.left):
                self.over = max(self.over or 0, stored)
                try:
                    self.con.interrupt()
                except Exception:  # noqa: BLE001 - a closed connection: the load ended anyway
                    pass

    def raise_if_over(self) -> None:
        if self.over is not None:
            from planner.errors import InputError

            raise InputError(_quota_message(self.over, self.left), field="workspace")

    def stop(self) -> None:
        self._stop.set()


QUOTA_POLL_S = 0.02


def _check_stored(db_file: Path, spec: dict) -> None:
    """The workspace quota counts what a load stores, not what was uploaded (a 2 KB sacct naming
    100,000 nodes stores 20 MB): a load whose file passes what is left is refused, nothing kept."""
    left = spec.get("quota_left_bytes")
    if left is None:
        return
    stored = _stored_bytes(db_file)
    if stored > int(left):
        from planner.errors import InputError

        raise InputError(_quota_message(stored, left), field="workspace")


TWINS_NICE = 10  # the cost-free twins' niceness, added after the replays were announced (job_replay)


def job_replay(spec: dict, progress) -> dict:
    """The Planner's pair: the replays (allocator and baseline at once, planner.scenario.pair),
    saved and announced as ready (the page shows them), then the limits (each replay's cost-free
    twin, at once), added to the saved run; the result names both."""
    from appkit import trainer_csv, workspace
    from planner.scenario.pair import Pair
    from planner.store import db

    sc = spec["scenario"]
    hours = float(sc["hours"])
    t0 = time.perf_counter()
    # an uploaded Trainer CSV is named upload:<file> in the scenario; the replay reads the file
    run_sc = {**sc, "workload": trainer_csv.resolve(sc.get("workload", "hpo"), spec["ws_dir"])}
    parallel = int(spec.get("procs", 1)) >= 2  # two processes granted by the server's caps: both at once
    con = db.connect(spec["db"], read_only=True)
    try:
        pair = Pair(run_sc, con=con, db_path=spec["db"])
        res = pair.replay(progress=lambda label, frac, sim_h: progress(
            frac, f"{label}: simulated {sim_h:.1f} h of {hours:g} h"), parallel=parallel)
        wall = time.perf_counter() - t0
        progress(1.0, "saving the results ...", True)
        workspace.save_run(Path(spec["ws_dir"]), spec["rid"], sc, res, wall)
        progress.ready({"rid": spec["rid"], "wall_s": wall})
        progress(0.0, "each allocator's cost-free twin ...", True)
        t1 = time.perf_counter()
        # the twins are background work: the page is loading the run and the browser drawing its
        # charts now, on the same cores (2 twins + server + browser on 2 cores). Lowered priority
        # (inherited by the forked twin) gives those the CPU first; the worker ends after this.
        os.nice(TWINS_NICE)
        limits = pair.limits(res, parallel=parallel)
    finally:
        con.close()
    workspace.save_limits(Path(spec["ws_dir"]), spec["rid"], limits)
    return {"rid": spec["rid"], "wall_s": wall, "limits": limits, "limits_wall_s": time.perf_counter() - t1}


def job_sweep(spec: dict, progress) -> dict:
    from planner import sweep

    def cb(done, total, row):
        progress(done / max(total, 1), f"{done} of {total} cells")

    # run_cell/resolve_scenario given explicitly: the app built the grid from loaded logs, so the
    # parent's log-database preparation (which may write the shipped default log into a log DB)
    # is skipped; a workspace log's DuckDB file stays read-only for everyone.
    # as many processes as the server granted (spec["procs"], counted against its caps while this runs)
    workers = max(1, int(spec.get("procs") or 1))
    return sweep.run_sweep(spec["grid"], out=Path(spec["out"]), executor="local", workers=workers,
                           progress=cb, cell_fn=sweep.run_cell, resolver=sweep.resolve_scenario)


def job_solver(spec: dict, progress) -> dict:
    from appkit import solver

    progress(0.0, "warming up (imports, first solves) ...", True)
    df = solver.run_grid(spec["jobs"], spec["pools"], spec["allocators"], int(spec["reps"]),
                         float(spec["time_limit_s"]), progress=progress)
    progress(1.0, "saving the table ...", True)
    solver.save_result(Path(spec["ws_dir"]), df)
    return {"decisions": len(df)}


# how native code (DuckDB, shared-library loading, Arrow) says it hit RLIMIT_AS
MEMORY_MARKERS = ("out of memory", "memory limit", "memory allocation", "failed to map segment",
                  "cannot allocate memory", "bad_alloc", "memoryerror")
EXIT_ORPHANED = 5  # the worker's server went away: it ended itself


def job_windows(spec: dict, progress) -> dict:
    """A many-window run of the Planner or Compare (planner.replay.windows), saved in the workspace.
    Its (window, allocator) replays run on the Dask scheduler the operator configured
    (spec["scheduler"]), else on a pool of spec["procs"] local processes (granted by
    appkit.worker.start; in this process when 1). The pool's processes are in this worker's
    process group: a cancel or a budget kill ends them with it."""
    from appkit import windows_view
    from appkit.runs import labels_for, make_scenario
    from planner.replay import windows as W

    sc = spec["scenario"]
    allocs = spec.get("allocators") or labels_for(sc)
    base = make_scenario(sc, allocs[0], spec["db"]).to_dict()
    base.pop("start"), base.pop("hours")
    name, t0, t1 = W.log_span(spec["db"], sc["log"])
    ws = W.window_set(t0, t1, spec["hours"], spec.get("stride"), count=spec.get("count"), seed=int(sc["seed"]))
    procs = max(1, int(spec.get("procs") or 1))
    executor = "dask" if spec.get("scheduler") else ("local" if procs > 1 else "inline")
    where = {"dask": f"on the Dask cluster at {spec.get('scheduler')}", "local": f"in {procs} worker processes",
             "inline": "in 1 worker process"}[executor]
    progress(0.0, f"{len(ws)} windows x {len(allocs)} allocators {where}", True)

    def step(done_windows: int, n_windows: int, done: int, n: int) -> None:
        progress(done / n, f"{done_windows} of {n_windows} windows done ({done} of {n} replays, {where})", True)

    out = W.run_windows(base, ws, allocs, baseline=spec.get("baseline"), executor=executor, workers=procs,
                        scheduler=spec.get("scheduler"), window_progress=step)
    out.update(log=sc["log"], window_hours=spec["hours"])
    windows_view.save(spec["ws_dir"], out, spec.get("name", "latest"))
    return {"windows": len(ws), "executor": executor, "procs": procs}


def job_bound(spec: dict, progress) -> dict:
    """The clairvoyant bound of a Planner run's window (planner.scenario.record.scenario_bound),
    saved beside the run (runs/<rid>/clairvoyant.json)."""
    from appkit import trainer_csv, windows_view
    from appkit.runs import make_scenario
    from planner.scenario.record import scenario_bound
    from planner.store import db

    sc = spec["scenario"]
    run_sc = make_scenario({**sc, "workload": trainer_csv.resolve(sc.get("workload", "hpo"), spec["ws_dir"])},
                           sc["allocator"], spec["db"])
    progress(0.0, f"building and solving the MILP (at most {spec['time_limit_s']:g} s) ...", True)
    con = db.connect(spec["db"], read_only=True)
    try:
        cv = scenario_bound(run_sc, spec.get("static_samples"), con=con, time_limit_s=float(spec["time_limit_s"]))
    finally:
        con.close()
    windows_view.save_bound(spec["ws_dir"], spec["rid"], cv)
    return {"status": cv["status"], "solve_s": cv["solve_s"]}


def job_probe(spec: dict, progress) -> dict:
    """The first lines of a staged upload (a 64 KiB read) and its format as detected over at most
    appkit.uploads.DETECT_SCAN_BYTES decompressed bytes; a detection error as its one line, with
    the user's file name for the server path (the page makes it Markdown-inert)."""
    from appkit import uploads
    from planner import logs
    from planner.errors import InputError

    up, name = str(spec["upload"]), str(spec.get("user_filename", "the file"))
    progress(0.1, "reading the first lines ...", True)
    lines = uploads.preview_lines(Path(up))
    try:
        detected, note = logs.detect_format(up, scan_bytes=uploads.DETECT_SCAN_BYTES), None
    except InputError as e:
        detected, note = None, str(e).replace(up, name).replace(Path(up).name, name)
    return {"lines": lines, "detected": detected, "note": note}


KINDS = {"probe": job_probe, "ingest": job_ingest, "replay": job_replay, "sweep": job_sweep, "solver": job_solver,
         "windows": job_windows, "bound": job_bound}


def _write(job_dir: Path, outcome: dict) -> None:
    tmp = job_dir / "outcome.tmp"
    tmp.write_text(json.dumps(outcome, default=str))
    os.replace(tmp, job_dir / "outcome.json")


def main(job_dir: str) -> int:
    job_dir = Path(job_dir)
    spec = json.loads((job_dir / "spec.json").read_text())
    _limits(spec["mem_mb"], spec["time_s"])
    if spec.get("server_pid"):
        _die_with_parent(int(spec["server_pid"]))
    from planner.errors import InputError

    try:
        result = KINDS[spec["kind"]](spec, _Progress(job_dir))
        _write(job_dir, {"status": "ok", "result": result})
        return 0
    except MemoryError:
        _write(job_dir, {"status": "memory"})
        return 3
    except InputError as e:
        _write(job_dir, {"status": "error", "message": _clean(str(e), spec)})
        return 0
    except Exception as e:  # noqa: BLE001 - one line for the page, the traceback for the server log
        if type(e).__name__ == "OutOfMemoryException" or any(m in str(e).lower() for m in MEMORY_MARKERS):
            _write(job_dir, {"status": "memory"})
            return 3
        sys.stderr.write(traceback.format_exc())
        _write(job_dir, {"status": "error",
                         "message": _clean(f"{type(e).__name__}: "
                                           f"{str(e).splitlines()[0][:200] if str(e) else ''}", spec)})
        return 1


SPARE_ARG = "--spare"
SPARE_WARM_DELAY_S = 1.0  # a spare waits this long before its imports (its page is still drawing)


def _warm_imports() -> None:
    """What a replay job imports (~1.2 s of CPU from a cold start), done before the job comes."""
    import pyarrow.parquet  # noqa: F401  (pandas' to_parquet: the saved run)

    from appkit import trainer_csv, workspace  # noqa: F401
    from planner import allocators
    from planner.scenario.pair import Pair  # noqa: F401
    from planner.store import db

    for name in ("dp", "equal-share"):  # the default pair's allocators (their modules load on first use)
        allocators.get(name)
    # DuckDB's first connection in a process sets up its instance (~0.02 s of the job's first connect);
    # an in-memory one does that without holding the log database's file lock
    db.connect(":memory:").close()


def spare() -> int:
    """A pre-started worker (appkit.worker.ensure_spare): imports what a replay needs, then waits
    for its job directory on stdin and runs it as main() would (its limits set then). It leaves
    when stdin ends without a job (its server went away). Once it has its job, its working
    directory is the job directory: appkit.worker tells it from other processes by that."""
    import select

    if not select.select([sys.stdin], [], [], SPARE_WARM_DELAY_S)[0]:
        _warm_imports()
    line = sys.stdin.readline().strip()
    if not line:
        return 0
    job_dir = Path(line)
    os.chdir(job_dir)
    fd = os.open(job_dir / "stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    return main(str(job_dir))


if __name__ == "__main__":
    sys.exit(spare() if sys.argv[1] == SPARE_ARG else main(sys.argv[1]))
