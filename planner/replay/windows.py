"""A scenario over many windows of a log: every window of length H with stride S, or K seeded
random ones; each window replayed under each allocator, in parallel on the sweep executors.

    ws = window_set(t0, t1, hours=24, stride_hours=None)        # every full window, stride = H
    ws = window_set(t0, t1, hours=6, count=20, seed=0)           # 20 random windows
    out = run_windows(base, ws, allocators=("dp", "equal-share"), executor="local", workers=2)
    out["rows"]      one row per (window, allocator): index, start, end, allocator, the headlines
    out["summary"]   per allocator the spread of each headline (planner.report.stats.spread),
                     per other allocator the paired comparison with the baseline (the first one)

Windows are whole: [t0 + i * S, t0 + i * S + H) for i = 0, 1, ... while it ends by t1, so
floor((t1 - t0 - H) / S) + 1 windows (none when the log is shorter than H); the tail of the log
after the last whole window is not replayed (its length is reported as `uncovered_h`). Random
windows start uniformly in [t0, t1 - H] (seeded numpy generator; starts rounded to the second,
sorted). Every window gets the same workload (submit times relative to its start) and seed, so
the per-window comparison of two allocators is paired.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from planner.errors import InputError
from planner.replay.bounds import headroom
from planner.report import stats
from planner.scenario.record import Scenario
from planner.store import catalog
from planner.store.db import log_row
from planner.sweep.executors import execute, make_executor, run_cell
from planner.sweep.grid import Cell
from planner.times import format_iso

# the headlines summarised over windows (summary keys of a replay; labels in report.glossary)
HEADLINES = ("utilization_efficiency", "cost_free_utilization_efficiency", "clairvoyant_utilization_efficiency",
             "bound_share", "allocated_share", "samples", "trainers_completed", "mean_queue_incl_waiting_s",
             "mean_jct_s", "preemptions", "rescale_cost_incurred_samples")
LOWER_IS_BETTER = {"mean_queue_incl_waiting_s", "mean_jct_s", "preemptions", "rescale_cost_incurred_samples"}
MAX_WINDOWS = 10_000


def window_set(t0: float, t1: float, hours: float, stride_hours: float | None = None, count: int | None = None,
               seed: int = 0) -> list[tuple[float, float]]:
    """The windows (start_s, end_s) of [t0, t1]: all whole ones at `stride_hours` (default: hours,
    back to back), or `count` random ones (seeded)."""
    H = float(hours) * 3600.0
    if not (H > 0 and math.isfinite(H)):
        raise InputError(f"the window length must be positive, got {hours!r} h", field="window_hours")
    span = float(t1) - float(t0)
    if count is not None:
        if int(count) < 1:
            raise InputError(f"the number of random windows must be at least 1, got {count!r}", field="windows")
        if int(count) > MAX_WINDOWS:
            raise InputError(f"at most {MAX_WINDOWS:,} windows, got {count!r}", field="windows")
        if span < H:
            raise InputError(f"the log spans {span / 3600:.2f} h, shorter than one {hours:g} h window",
                             field="window_hours")
        rng = np.random.default_rng(int(seed))
        starts = np.sort(np.round(float(t0) + rng.uniform(0.0, span - H, size=int(count))))
        return [(float(s), float(s) + H) for s in starts]
    S = H if stride_hours is None else float(stride_hours) * 3600.0
    if not (S > 0 and math.isfinite(S)):
        raise InputError(f"the stride must be positive, got {stride_hours!r} h", field="stride_hours")
    if span < H:
        return []
    n = int(math.floor((span - H) / S + 1e-9)) + 1
    if n > MAX_WINDOWS:
        raise InputError(f"{n:,} windows: at most {MAX_WINDOWS:,} (a longer stride)", field="stride_hours")
    return [(float(t0) + i * S, float(t0) + i * S + H) for i in range(n)]


def parse_windows(text) -> int | None:
    """`--windows all|K`: None for all, else K (InputError naming the field)."""
    t = str(text).strip().lower()
    if t == "all":
        return None
    try:
        k = int(t)
    except ValueError:
        raise InputError(f"all or a whole number of random windows, got {text!r}", field="windows") from None
    if k < 1:
        raise InputError(f"at least 1 window, got {k}", field="windows")
    return k


def log_span(db, log) -> tuple[str, float, float]:
    """(resolved log name, start_s, end_s) of a log in the store (the shipped Summit log by default)."""
    with catalog.log_connection(db, log) as (con, name):
        row = log_row(con, name)
    if row is None:
        raise InputError(f"no log named {log!r} in the database", field="log")
    return str(row["name"]), float(row["start_s"]), float(row["end_s"])


# ---------------------------------------------------------------- one cell (in a worker)

def run_window_cell(params: dict) -> dict:
    """One (window, allocator) replay; params = a scenario dict. Returns the replay's summary
    with the bounds flattened into headline keys."""
    s = run_cell(params)
    return flatten(s)


def flatten(s: dict) -> dict:
    """The summary with cost_free / clairvoyant U as top-level keys and the bound share."""
    out = {k: v for k, v in s.items() if not isinstance(v, dict)}
    h = headroom(s) or {}
    out["cost_free_utilization_efficiency"] = h.get("cost_free")
    out["clairvoyant_utilization_efficiency"] = h.get("clairvoyant")
    out["bound_share"] = h.get("bound_share")
    cv = s.get("clairvoyant") or {}
    out["clairvoyant_status"] = cv.get("status")
    out["clairvoyant_solve_s"] = cv.get("solve_s")
    out["clairvoyant_mip_gap"] = cv.get("mip_gap")
    out["clairvoyant_bound_source"] = cv.get("bound_source")
    a_s = s.get("static_samples")
    for key, src in (("clairvoyant_lp_utilization_efficiency", "lp_bound_samples"),
                     ("clairvoyant_plan_utilization_efficiency", "incumbent_samples")):
        out[key] = cv[src] / a_s if (cv.get(src) is not None and a_s) else None
    return out


# ---------------------------------------------------------------- many windows

def cells(base: dict, windows: list[tuple[float, float]], allocators) -> list:
    """The sweep cells: one per (window, allocator), params = base with start, hours, allocator."""
    out = []
    for w, (a, b) in enumerate(windows):
        for al in allocators:
            d = {**base, "start": format_iso(a), "hours": (b - a) / 3600.0, "allocator": al}
            params = Scenario.from_dict(d).to_dict()
            out.append(Cell(index=len(out), key=f"w{w}-{al}", params=params, overrides={"window": w, "allocator": al}))
    return out


def run_windows(base: dict, windows: list[tuple[float, float]], allocators=("dp", "equal-share"),
                baseline: str | None = None, executor: str = "local", workers: int = 2,
                scheduler: str | None = None,
                progress: Callable[[int, int], None] | None = None,
                cancel: Callable[[], bool] | None = None,
                window_progress: Callable[[int, int, int, int], None] | None = None) -> dict:
    """Replay `base` (a scenario dict) over every window under every allocator. `baseline`: the
    allocator the others are compared with, window by window (default: equal-share when it runs,
    else the last allocator). executor "inline" runs in this process
    (tests, one worker); "local" / "dask" as planner.sweep.executors. progress(done, total) after
    each cell; window_progress(windows done, windows, cells done, cells) after each cell too (a
    window is done when all its allocators are); cancel() -> True stops (the finished cells are
    kept, `cancelled` is set). Each row names the process that replayed it (`worker`, host:pid)."""
    allocators = list(dict.fromkeys(allocators))
    if not allocators:
        raise InputError("name at least one allocator", field="allocator")
    if not windows:
        raise InputError("no window fits in the log (the window is longer than the log)", field="window_hours")
    todo = cells(base, windows, allocators)
    t0 = time.perf_counter()
    results: list[dict] = []
    cancelled = False
    if base.get("pool", "log") == "log":  # load the shipped log once before workers open it read-only
        log_span(base.get("db"), base.get("log"))
    left = {w: len(allocators) for w in range(len(windows))}

    def done(r: dict) -> None:
        results.append(r)
        w = todo[r["index"]].overrides["window"]
        left[w] -= 1
        if progress:
            progress(len(results), len(todo))
        if window_progress:
            window_progress(sum(1 for v in left.values() if v == 0), len(windows), len(results), len(todo))

    if executor == "inline" or workers <= 1 and executor == "local":
        for c in todo:
            if cancel is not None and cancel():
                cancelled = True
                break
            done(execute(run_window_cell, c.index, c.key, c.params))
    else:
        with make_executor(executor, workers, scheduler) as ex:
            for r in ex.results(run_window_cell, todo):
                done(r)
                if cancel is not None and cancel():
                    cancelled = True
                    break
    wall = time.perf_counter() - t0
    rows = []
    by_index = {r["index"]: r for r in results}
    for c in todo:
        r = by_index.get(c.index)
        if r is None:
            continue
        w = c.overrides["window"]
        row = {"window": w, "start": format_iso(windows[w][0]), "end": format_iso(windows[w][1]),
               "allocator": c.overrides["allocator"], "status": r["status"], "error": r.get("error"),
               "wall_s": r.get("wall_s"), "worker": r.get("worker")}
        s = r.get("summary") or {}
        for k in HEADLINES + ("clairvoyant_status", "clairvoyant_solve_s", "clairvoyant_mip_gap", "mean_pool_nodes",
                               "events", "clairvoyant_bound_source", "clairvoyant_lp_utilization_efficiency",
                               "clairvoyant_plan_utilization_efficiency"):
            row[k] = s.get(k)
        rows.append(row)
    return {"windows": len(windows), "allocators": allocators, "rows": rows,
            "summary": summarize(rows, allocators, baseline), "wall_s": wall, "cancelled": cancelled,
            "executor": executor, "workers": workers}


def default_baseline(allocators) -> str:
    return "equal-share" if "equal-share" in allocators else list(allocators)[-1]


def summarize(rows: list[dict], allocators: list[str], baseline: str | None = None) -> dict:
    """Per allocator, the spread of every headline; per other allocator, paired comparisons with
    the baseline on every headline, with a sentence for U."""
    base = baseline or default_baseline(allocators)
    if base not in allocators:
        raise InputError(f"the baseline {base!r} is not among the allocators run", field="baseline")
    out: dict = {"baseline": base, "per_allocator": {}, "paired": {}}
    table: dict = {}
    for a in allocators:
        mine = {r["window"]: r for r in rows if r["allocator"] == a and r["status"] == "ok"}
        table[a] = mine
        out["per_allocator"][a] = {"windows_ok": len(mine),
                                   "errors": sum(1 for r in rows if r["allocator"] == a and r["status"] != "ok"),
                                   **{k: stats.spread([r.get(k) for r in mine.values()]) for k in HEADLINES}}
    for a in [x for x in allocators if x != base]:
        common = sorted(set(table[a]) & set(table[base]))
        comp = {}
        for k in HEADLINES:
            comp[k] = stats.paired([table[a][w].get(k) for w in common], [table[base][w].get(k) for w in common],
                                   higher_is_better=k not in LOWER_IS_BETTER)
        comp["sentence"] = stats.paired_sentence(a, base, comp["utilization_efficiency"], "U")
        out["paired"][a] = comp
    return out
