"""A run's headline numbers as a table: the metrics the Planner shows for a run and its baseline,
in order, each scaled to its glossary unit; and which allocators answered a run's decisions.

    headline_table({"dp": summary, "equal-share": summary}) -> DataFrame (metric, unit, dp, equal-share)
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from planner.report import glossary

# the summary keys of the results table, in order (dotted keys reach into nested dicts); label,
# unit, scale and format of each: planner.report.glossary
HEADLINE: tuple[str, ...] = (
    "utilization_efficiency", "trainers_completed", "mean_queue_s", "allocated_share", "mean_jct_s", "mean_run_s",
    "samples", "resource_node_hours", "allocated_node_hours", "rescale_cost_incurred_samples",
    "preemption_cost_incurred_samples", "rescale_cost_per_event_samples", "preemptions",
    "preemption_within_tfwd_share", "decisions", "solve_s.mean", "solve_s.max", "fallback_decisions", "events",
    "wall_s",
)


def _get(summary: Mapping, dotted: str):
    cur = summary
    for part in dotted.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def headline_table(summaries: Mapping[str, Mapping]) -> pd.DataFrame:
    """One row per headline metric, one column per run (scaled to the unit shown)."""
    rows = []
    for key in HEADLINE:
        t = glossary.term(key)
        row = {"metric": t.label, "unit": t.unit}
        for name, s in summaries.items():
            v = _get(s, key)
            row[name] = float(v) * t.scale if isinstance(v, (int, float)) else None
        rows.append(row)
    df = pd.DataFrame(rows)
    for name in summaries:
        df[name] = pd.to_numeric(df[name], errors="coerce")
    return df


def headline_styler(table: pd.DataFrame):
    """headline_table for people: each run's value printed as the glossary prints its metric (no long
    floats, "-" when missing); the data underneath stays numbers (sorting, copying, tests)."""
    runs = [c for c in table.columns if c not in ("metric", "unit")]
    sty = table.style
    for i, key in zip(table.index, HEADLINE):
        fmt = glossary.term(key).fmt
        sty = sty.format(lambda v, f=fmt: "-" if pd.isna(v) else f"{v:{f}}", subset=pd.IndexSlice[[i], runs])
    return sty


def answered_note(summary: Mapping) -> str:
    """'auto answered with dp-reduced in 5,120 of 7,747 decisions, dp in 2,627.' when more than
    one allocator answered a run's decisions (auto picks per decision); '' otherwise."""
    by = summary.get("answered_by") or {}
    if len(by) < 2:
        return ""
    total = sum(by.values())
    parts = sorted(by.items(), key=lambda kv: -kv[1])
    head, rest = parts[0], parts[1:]
    name = head[0].split(":")[0]
    inner = [f"{k.split(':', 1)[-1]} in {v:,}" for k, v in [head, *rest]]
    return f"{name} answered with {inner[0]} of {total:,} decisions" + "".join(f", {x}" for x in inner[1:]) + "."
