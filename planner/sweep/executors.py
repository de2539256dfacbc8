"""Where the cells run: one protocol (`Executor`) over local processes and a Dask cluster.

    with make_executor("local", workers=2) as ex:       # or "dask", scheduler="tcp://..."
        for res in ex.results(cell_fn, cells):          # result dicts, as cells complete
            ...

`results()` yields one dict per cell (index, key, status, error, traceback, summary, wall_s,
finished_at, worker) and never raises for a cell's own failure. `close()` stops every worker
process the executor started, at once (running cells are abandoned, not waited for), and is
what an interrupted sweep relies on to leave no process behind; leaving the `with` block calls it.
Worker processes ignore SIGINT: on Ctrl-C in a terminal the whole process group gets it, and
the parent alone decides (it stops the workers and keeps the finished cells).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

from planner.errors import InputError
from planner.scenario.record import Scenario, run_scenario
from planner.store import db as pdb
from planner.sweep.grid import Cell, one_line

EXECUTORS = ("local", "dask")
DASK_CONNECT_TIMEOUT_S = 20  # how long to try reaching a given --scheduler
STOP_GRACE_S = 3.0           # terminate -> kill delay when stopping worker processes

CellFn = Callable[[dict], dict]


class Executor(Protocol):
    name: str

    def results(self, cell_fn: CellFn, todo: list[Cell]) -> Iterator[dict[str, Any]]: ...

    def close(self) -> None: ...


# ----------------------------------------------------------------------- in the worker process

def run_cell(params: dict[str, Any]) -> dict[str, Any]:
    """The default cell function: run one scenario on a read-only log DB; return its summary."""

    sc = Scenario.from_dict(dict(params))
    if sc.pool != "log":  # a fixed pool reads no log
        return dict(run_scenario(sc).summary)
    con = pdb.connect(sc.db, read_only=True)
    try:
        res = run_scenario(sc, con=con)
    finally:
        con.close()
    return dict(res.summary)


def execute(cell_fn: CellFn, index: int, key: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run one cell in a worker. Never raises: errors come back as a row with status 'error'."""
    t0 = time.perf_counter()
    out: dict[str, Any] = {"index": index, "key": key,
                           "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        summary = cell_fn(params)
        if not isinstance(summary, dict):
            raise TypeError(f"cell function returned {type(summary).__name__}, not dict")
        out.update(status="ok", error=None, traceback=None, summary=summary)
    except BaseException as e:  # noqa: BLE001 - a cell's failure is data, not a crash
        if isinstance(e, KeyboardInterrupt):
            raise
        out.update(status="error", error=one_line(e), traceback=traceback.format_exc(),
                   summary=None)
    out["wall_s"] = time.perf_counter() - t0
    out["finished_at"] = time.time()
    return out


def lost(c: Cell, e: BaseException) -> dict[str, Any]:
    return {"index": c.index, "key": c.key, "status": "error",
            "error": f"worker lost: {one_line(e)}", "traceback": None, "summary": None,
            "wall_s": None, "finished_at": time.time(), "worker": None}


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def starting_workers():
    """Around code that starts worker processes: they inherit SIGINT ignored from their first
    instruction (a Ctrl-C that reaches the process group while a worker is still importing must
    not print its traceback). Main thread only; a SIGINT to the parent inside this short
    window is ignored too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


# ------------------------------------------------------------------------------ local processes

class LocalExecutor:
    """A spawn-started process pool of `workers` processes.

    A worker process that dies (killed, out of memory) breaks the whole pool and every cell
    still in it; those cells then run again, each in a process of its own, so only the cell that
    kills its process is recorded as lost.
    """

    name = "local"

    def __init__(self, workers: int):
        self.workers = workers
        self.ctx = multiprocessing.get_context("spawn")
        self.pools: list = []

    def _pool(self, n: int):
        pool = ProcessPoolExecutor(max_workers=n, mp_context=self.ctx, initializer=_worker_init)
        self.pools.append(pool)
        return pool

    def _retire(self, pool) -> None:
        pool.shutdown(wait=True)  # its workers exit and are reaped
        self.pools.remove(pool)

    def results(self, cell_fn: CellFn, todo: list[Cell]) -> Iterator[dict[str, Any]]:
        broken: list[Cell] = []
        pool = self._pool(self.workers)
        with starting_workers():  # a spawn pool starts its processes on submit
            futs = {pool.submit(execute, cell_fn, c.index, c.key, c.params): c for c in todo}
        for fut in as_completed(futs):
            c = futs.pop(fut)  # a yielded future (and its result) is not held any longer
            try:
                res = fut.result()
            except BrokenProcessPool:
                broken.append(c)
                continue
            except Exception as e:  # e.g. a summary that cannot be pickled back
                res = lost(c, e)
            yield res
        self._retire(pool)
        if broken:
            yield from self._solo(cell_fn, sorted(broken, key=lambda c: c.index))

    def _solo(self, cell_fn: CellFn, cells: list[Cell]) -> Iterator[dict[str, Any]]:
        """Each cell in a fresh one-process pool, up to `workers` at once (isolates a killer cell)."""
        pending = list(cells)
        running: dict = {}
        while pending or running:
            while pending and len(running) < self.workers:
                c = pending.pop(0)
                p = self._pool(1)
                with starting_workers():
                    running[p.submit(execute, cell_fn, c.index, c.key, c.params)] = (c, p)
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for f in done:
                c, p = running.pop(f)
                try:
                    res = f.result()
                except Exception as e:  # this cell's own process died
                    res = lost(c, e)
                self._retire(p)
                yield res

    def close(self) -> None:
        """Stop every worker process now: SIGTERM, then SIGKILL after STOP_GRACE_S; reap them."""
        procs = []
        for pool in self.pools:
            # the pool's processes: Python < 3.14 has no public handle (3.14: terminate_workers());
            # taken before shutdown(), which forgets them
            procs.extend(list((getattr(pool, "_processes", None) or {}).values()))
            pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        for p in procs:
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(STOP_GRACE_S)
        self.pools.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ----------------------------------------------------------------------------------------- Dask

class DaskExecutor:
    """The cluster at `scheduler` (tcp://HOST:PORT), or a LocalCluster of `workers` processes.

    A worker that dies mid-cell is replaced (or its cells go to the other workers) and the
    scheduler reruns its tasks (`distributed.scheduler.allowed-failures`); each cell's result
    comes back once, from its one future.
    """

    name = "dask"

    def __init__(self, workers: int, scheduler: str | None = None):
        from distributed import Client, LocalCluster  # lazy: heavy (distributed)

        self.cluster = None
        self.futures: dict = {}  # the cells' futures not yet yielded (cancelled on close)
        if scheduler:
            try:
                self.client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError, ValueError, TypeError) as e:
                raise InputError(f"cannot reach the Dask scheduler ({one_line(e)})",
                                 field="scheduler") from None
        else:
            with starting_workers():
                self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                            dashboard_address=None, silence_logs=logging.ERROR)
            self.client = Client(self.cluster)

    def results(self, cell_fn: CellFn, todo: list[Cell]) -> Iterator[dict[str, Any]]:
        from distributed import as_completed  # lazy: heavy (distributed)

        futs = {}
        for c in todo:
            f = self.client.submit(execute, cell_fn, c.index, c.key, c.params,
                                   key=f"planner-cell-{c.key}-{os.getpid()}-{time.time_ns()}",
                                   pure=False, retries=0)
            futs[f] = c
        self.futures = futs
        for fut in as_completed(list(futs)):
            c = futs.pop(fut)
            try:
                yield fut.result()
            except Exception as e:  # KilledWorker (a lost worker: the cell is an error, rerun resumes it)
                if self._scheduler_gone(e):
                    self.scheduler_lost = True
                    raise InputError(f"lost the Dask scheduler ({one_line(e) or type(e).__name__}); the cells "
                                     "finished so far are kept: start the scheduler again and run the same "
                                     "command to resume", field="scheduler") from None
                yield lost(c, e)
            finally:
                fut.release()

    def _scheduler_gone(self, e: BaseException) -> bool:
        """Whether a cell's failure is the scheduler's loss (not one worker's)."""
        if type(e).__name__ in ("CancelledError", "FutureCancelledError", "CommClosedError"):
            return True
        return getattr(self.client, "status", "running") not in ("running", "connecting")

    def close(self) -> None:
        """Cancel the cells not finished (an external cluster stops running them), disconnect,
        and close the LocalCluster if this executor started it."""
        try:
            if self.futures and self.client.status == "running":
                self.client.cancel(list(self.futures), force=True)
        except Exception:  # noqa: BLE001 - best effort on a cluster that may be gone
            pass
        self.futures = {}
        if getattr(self, "scheduler_lost", False):  # its reconnect attempts must not print tracebacks

            for name in ("distributed", "distributed.client", "distributed.core", "distributed.comm"):
                logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        try:
            self.client.close(timeout=STOP_GRACE_S * 2)
        except Exception:  # noqa: BLE001 - a client whose scheduler is gone may fail to close cleanly
            if not getattr(self, "scheduler_lost", False):
                raise
        if self.cluster is not None:
            self.cluster.close(timeout=STOP_GRACE_S * 4)
            self.cluster = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def make_executor(name: str, workers: int, scheduler: str | None = None) -> Executor:
    if name == "local":
        return LocalExecutor(workers)
    if name == "dask":
        return DaskExecutor(workers, scheduler)
    raise InputError(f"unknown executor '{name}' (known: {', '.join(EXECUTORS)})", field="executor")
