"""The Solver page's live allocator benchmark (pure: no Streamlit).

Same instances as `planner bench allocators` (planner.allocators.instances.fig5_instance: BFTrainer's
Fig. 5 setting, ShuffleNet curve, random current maps, seed = rep), but every call is kept as
a row so the page can draw histograms, not only medians. The page runs it in a worker process
(appkit.jobs' `solver` job) and keeps the table in the workspace (RESULT_FILE), so a refresh,
a restart or the workspace's link find it again.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from appkit import workspace
from planner.allocators import ALLOCATORS
from planner.bench import suite
from planner.replay.estimate import TIME_LIMITED
from planner.scenario.defaults import DEFAULT_TFWD_S

DEFAULT_JOBS = (5, 10, 20)
DEFAULT_POOLS = (100, 400)
# the Fig. 5 benchmark's allocators (planner.allocators records) but the slow node-level MILP
DEFAULT_ALLOCATORS = tuple(a.name for a in ALLOCATORS if a.bench and not a.node_level)
RESULT_FILE = "solver.parquet"  # in the workspace


def decisions(jobs: Sequence[int], pools: Sequence[int], allocators: Sequence[str], reps: int) -> int:
    return len(jobs) * len(pools) * len(allocators) * int(reps)


def worst_case_s(jobs: Sequence[int], pools: Sequence[int], allocators: Sequence[str], reps: int,
                 time_limit_s: float) -> float:
    """An upper bound of the grid's solver time: every MILP decision at its time limit (the rest
    take milliseconds at these sizes: dp 1 ms at 30 x 800)."""
    return decisions(jobs, pools, [a for a in allocators if a in TIME_LIMITED], reps) * float(time_limit_s)


def save_result(ws_dir: Path, df: pd.DataFrame) -> Path:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return workspace.write_private(Path(ws_dir) / RESULT_FILE, buf.getvalue())


def load_result(ws_dir: Path) -> pd.DataFrame | None:
    """The workspace's last Solver table, or None when it has none."""
    p = Path(ws_dir) / RESULT_FILE
    return pd.read_parquet(p) if p.exists() else None


def run_grid(jobs: Sequence[int] = DEFAULT_JOBS, pools: Sequence[int] = DEFAULT_POOLS,
             allocators: Sequence[str] = DEFAULT_ALLOCATORS, reps: int = 3, time_limit_s: float = 10.0,
             tfwd_s: float = DEFAULT_TFWD_S, progress: Callable[[float, str], None] | None = None) -> pd.DataFrame:
    """One row per allocate() call (planner.bench.suite.allocator_calls, every instance for every
    allocator): allocator, jobs, pool, rep, build_s, solve_s, e2e_s, objective, status, gap_to_dp."""
    return pd.DataFrame(suite.allocator_calls(jobs, pools, int(reps), allocators, None, time_limit_s, tfwd_s,
                                              progress=progress))


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Medians per allocator and cell, and how often each allocator reached dp's optimum."""
    if df.empty:
        return df
    g = df.groupby(["allocator", "jobs", "pool"], sort=False)
    out = g.agg(build_ms_median=("build_s", "median"), solve_ms_median=("solve_s", "median"),
                e2e_ms_median=("e2e_s", "median"), e2e_ms_max=("e2e_s", "max"),
                optimal_share=("gap_to_dp", lambda x: float((x.abs() <= 1e-6).mean())),
                gap_to_dp_median=("gap_to_dp", "median")).reset_index()
    for c in ("build_ms_median", "solve_ms_median", "e2e_ms_median", "e2e_ms_max"):
        out[c] = out[c] * 1000.0
    return out


# the per-cell medians for people: column -> header with its unit (a share in %)
SUMMARY_TITLES = {"jobs": "Trainers J", "pool": "pool size (nodes)", "build_ms_median": "model build, median (ms)",
                  "solve_ms_median": "solve, median (ms)", "e2e_ms_median": "time per decision, median (ms)",
                  "e2e_ms_max": "time per decision, max (ms)", "optimal_share": "reached dp's optimum (%)",
                  "gap_to_dp_median": "gap to dp's optimum, median (%)"}


def summary_view(summary: pd.DataFrame):
    """summarize() for the page: headers in words with units, shares in %, 3 significant digits (the data
    underneath stays numbers)."""
    from appkit.charts import fmt_num

    out = summary.assign(**{c: summary[c] * 100.0 for c in ("optimal_share", "gap_to_dp_median") if c in summary})
    out = out.rename(columns=SUMMARY_TITLES)
    nums = [SUMMARY_TITLES[c] for c in SUMMARY_TITLES if c not in ("jobs", "pool") and SUMMARY_TITLES[c] in out]
    return out.style.format({c: fmt_num for c in nums})
