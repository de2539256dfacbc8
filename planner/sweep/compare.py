"""A comparison grid (the app's Compare page): its axes, defaults and the shaping of its results.

AXES is the one definition of the grid's axes (scenario field, title with unit, what a chart's
points average over, numeric or not); everything else here and on the page reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from planner.report import glossary


@dataclass(frozen=True)
class Axis:
    name: str  # the scenario field
    title: str  # an axis or column title, with its unit
    plural: str  # "mean over <plural> a, b"
    numeric: bool


AXES: tuple[Axis, ...] = (
    Axis("allocator", "allocator", "allocators", False),
    Axis("tfwd", "T_fwd (s)", "T_fwd", True),
    Axis("pool_size", "pool size (nodes)", "pool sizes", True),
    Axis("objective", "objective", "objectives", False),
)
AXIS = {a.name: a for a in AXES}
GRID_OPTIONS = tuple(AXIS)  # the grid's fields, in order

# the sweep result columns Compare can plot; label, unit (the Planner's) and scale: planner.report.glossary
METRICS: tuple[str, ...] = (
    "utilization_efficiency", "allocated_share", "trainers_completed", "trainers_waiting_at_end", "mean_queue_s",
    "mean_queue_incl_waiting_s", "mean_jct_s", "samples", "rescale_cost_incurred_samples",
    "preemption_cost_incurred_samples", "preemptions", "solve_s_mean", "solve_s_max", "decisions", "wall_s",
)
POOL_CHOICES = (64, 128, 256, 512, 1024, 2048, 4096, 8192)
TFWD_CHOICES = (30, 60, 120, 300, 600, 1800)


def default_pool_sizes(machine_nodes: int) -> list[int]:
    """Pool sizes where Trainers compete for nodes on this log: the HPO workload runs up to 10
    Trainers of up to 64 nodes (640 nodes at most), so pools of 128-512 nodes (or a quarter and
    a half of a smaller machine) make the allocators' choices matter."""
    fit = [p for p in (128, 256, 512) if p <= machine_nodes]
    if len(fit) >= 2:
        return fit
    return sorted({max(1, machine_nodes // 4), max(1, machine_nodes // 2)})


def pool_choices(machine_nodes: int) -> list[int]:
    return sorted({p for p in POOL_CHOICES if p <= machine_nodes} | set(default_pool_sizes(machine_nodes))
                  | {int(machine_nodes)})


def default_hours(span_h: float) -> float:
    return float(min(6.0, max(round(span_h, 2), 0.25)))


def failed_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Cells that failed or had nothing to replay, each with its reason (never dropped)."""
    if df is None or df.empty:
        return pd.DataFrame(columns=[*GRID_OPTIONS, "reason"])
    bad = df["status"] != "ok"
    reason = df.get("error", pd.Series([""] * len(df), index=df.index)).astype(str)
    if "decisions" in df.columns:
        empty = (df["status"] == "ok") & (pd.to_numeric(df["decisions"], errors="coerce").fillna(0) == 0)
        reason = reason.where(~empty, "nothing to replay: no allocator decision in this window (empty idle pool "
                                      "or no Trainer)")
        bad |= empty
    out = df.loc[bad, [c for c in GRID_OPTIONS if c in df.columns]].copy()
    out["reason"] = reason[bad].str.slice(0, 300)
    return out.reset_index(drop=True)


def ok_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Cells that ran and made at least one allocator decision (the rest are in failed_cells)."""
    ok = df[df["status"] == "ok"]
    if "decisions" in ok.columns:
        ok = ok[pd.to_numeric(ok["decisions"], errors="coerce").fillna(0) > 0]
    return ok


def averaged_over(df: pd.DataFrame, keep: tuple[str, ...]) -> str:
    """'mean over pool size 256, 512 and objective throughput': what a chart's points average."""
    parts = []
    for c, label in ((a.name, a.plural) for a in AXES):
        if c in keep or c not in df.columns:
            continue
        vals = list(dict.fromkeys(df[c].tolist()))
        if len(vals) > 1:
            parts.append(f"{label} {', '.join(str(v) for v in vals)}")
    return ("mean over " + " and ".join(parts)) if parts else "one cell per point"


def grid_from_choices(base: dict, **lists) -> dict:
    """{"base": ..., "grid": ...} for planner.sweep.run_sweep; values sorted, duplicates dropped."""
    grid = {}
    for name in GRID_OPTIONS:
        vals = list(dict.fromkeys(lists.get(name) or []))
        if AXIS[name].numeric:
            vals = sorted(vals)
        grid[name] = vals
    return {"base": {k: v for k, v in base.items() if k not in grid}, "grid": grid}


def result_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Sweep rows with numeric metric columns (those present, in the Planner's units) and readable
    grid columns."""
    out = df.copy()
    for m in METRICS:
        if m in out.columns:
            out[m] = pd.to_numeric(out[m], errors="coerce") * glossary.term(m).scale
    for c in (a.name for a in AXES if a.numeric):
        if c in out.columns:
            out[c] = pd.to_numeric(out[c], errors="coerce")
            if out[c].notna().all() and (out[c] % 1 == 0).all():
                out[c] = out[c].astype("int64")  # axes read 60, not 60.0
    return out.reset_index(drop=True)


def column_titles(columns) -> dict[str, str]:
    """Table headers: an axis' title, a glossary metric's 'label (unit)'."""
    out = {}
    for c in columns:
        if c in AXIS:
            out[c] = AXIS[c].title
        elif (t := glossary.term(c)) is not None:
            out[c] = f"{t.label} ({t.unit})"
    return out


def cell_text(row) -> str:
    """'allocator=dp, tfwd=120, pool_size=256, objective=throughput': one cell's coordinates."""
    return ", ".join(f"{k}={row[k]}" for k in GRID_OPTIONS)
