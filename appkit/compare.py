"""The Compare page's grid and result shaping (pure: no Streamlit)."""

from __future__ import annotations

import pandas as pd

# sweep result column -> (label, unit)
METRICS: dict[str, tuple[str, str]] = {
    "utilization_efficiency": ("U (A_e/A_s)", "ratio"),
    "allocated_share": ("allocated / available node-hours", "ratio"),
    "trainers_completed": ("Trainers completed", "count"),
    "mean_queue_s": ("mean queueing time", "s"),
    "mean_jct_s": ("mean job completion time", "s"),
    "samples": ("samples trained", "samples"),
    "rescale_cost_incurred_samples": ("rescaling cost", "samples"),
    "preemption_cost_incurred_samples": ("preemption cost", "samples"),
    "preemptions": ("preemptions", "count"),
    "solve_s_mean": ("mean time per decision", "s"),
    "solve_s_max": ("max time per decision", "s"),
    "decisions": ("allocator decisions", "count"),
    "wall_s": ("cell wall time", "s"),
}
GRID_OPTIONS = ("allocator", "tfwd", "pool_size", "objective")


def grid_from_choices(base: dict, **lists) -> dict:
    """{"base": ..., "grid": ...} for planner.sweep.run_sweep; values sorted, duplicates dropped."""
    grid = {}
    for name in GRID_OPTIONS:
        vals = list(dict.fromkeys(lists.get(name) or []))
        if name in ("tfwd", "pool_size"):
            vals = sorted(vals)
        grid[name] = vals
    return {"base": {k: v for k, v in base.items() if k not in grid}, "grid": grid}


def result_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Sweep rows with numeric metric columns (those present) and readable grid columns."""
    out = df.copy()
    for m in METRICS:
        if m in out.columns:
            out[m] = pd.to_numeric(out[m], errors="coerce")
    for c in ("tfwd", "pool_size"):
        if c in out.columns:
            out[c] = pd.to_numeric(out[c], errors="coerce")
    return out.reset_index(drop=True)
