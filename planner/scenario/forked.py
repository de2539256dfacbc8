"""Run a few independent calls at once on the machine's cores, by fork (the app's Run: the
allocator's replay beside its baseline's, then the two cost-free twins).

    forked.run_all([lambda: simulate(...), lambda: simulate(...)], parallel=True) -> [result, result]

The first call runs in this process, each other one in a child forked just before (so it
inherits the inputs already built here: pools, Trainers, hooks; nothing is pickled on the way
in); a child pickles its result into a private temporary file and leaves with os._exit (no
atexit handlers, no destructors of objects it inherited, e.g. a DuckDB connection). At most
`workers` calls run at once (default: the usable cores).

Only for pure computation: a child must not touch a database connection, a solver subprocess
or a thread it inherited (the studies' Pyomo pools deadlocked under fork: planner.studies.common
uses spawn). A child that fails for any reason (an exception, a crash, a signal) leaves no
result, and its call is run again in this process, so the caller gets the call's own exception
or result: the same result as sequential calls, only sooner. The child inherits the process's
limits (address space and CPU time per process: with a budget of B per process, up to
`workers` x B in all) and its wall-clock alarm; it dies with this process (PR_SET_PDEATHSIG).
Without os.fork (not Linux) or with parallel=False, the calls run one after the other here.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

PR_SET_PDEATHSIG = 1


def usable_cores() -> int:
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the process group kill still ends it
        pass


def _child(fn: Callable, out: Path, alarm_s: int) -> None:
    """In the forked child: run fn, pickle its result, leave without cleanup."""
    code = 1
    try:
        _die_with_parent()
        if alarm_s:
            signal.alarm(alarm_s)  # the parent's wall-clock budget, what is left of it
        res = fn()
        with open(out, "wb") as fh:
            pickle.dump(res, fh, protocol=pickle.HIGHEST_PROTOCOL)
        code = 0
    except BaseException:  # noqa: BLE001 - the parent runs the call again and gets the exception
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run_all(calls: list[Callable], parallel: bool = True, workers: int | None = None) -> list:
    """[call() for call in calls], up to `workers` of them at once (see the module docstring)."""
    workers = usable_cores() if workers is None else max(int(workers), 1)
    if not parallel or workers < 2 or len(calls) < 2 or not hasattr(os, "fork"):
        return [c() for c in calls]
    results: list = [None] * len(calls)
    done = [False] * len(calls)
    with tempfile.TemporaryDirectory(prefix="planner-fork-") as tmp:
        i = 0
        while i < len(calls):
            batch = list(range(i, min(i + workers, len(calls))))
            i = batch[-1] + 1
            left = signal.alarm(0)  # read the pending alarm (and keep it)
            if left:
                signal.alarm(left)
            kids = {}
            for j in batch[1:]:
                out = Path(tmp) / f"{j}.pickle"
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:  # the child
                    _child(calls[j], out, left)
                kids[j] = (pid, out)
            try:
                results[batch[0]] = calls[batch[0]]()
                done[batch[0]] = True
            finally:
                for j, (pid, out) in kids.items():
                    if not done[batch[0]]:  # this process failed: its exception goes up, the children go
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                    os.waitpid(pid, 0)
                    if done[batch[0]] and out.exists():
                        try:
                            with open(out, "rb") as fh:
                                results[j] = pickle.load(fh)
                            done[j] = True
                        except (OSError, pickle.UnpicklingError, EOFError):
                            pass
            for j in batch[1:]:
                if not done[j]:  # the child left no result: this call here, for its own error (or result)
                    results[j] = calls[j]()
                    done[j] = True
    return results
