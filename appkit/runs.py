"""Running a Planner scenario (allocator and baseline) and its headline numbers."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

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


def labels_for(sc: Mapping) -> list[str]:
    out = [sc["allocator"]]
    if sc.get("baseline") and sc["baseline"] not in ("none", sc["allocator"]):
        out.append(sc["baseline"])
    return out


def make_scenario(sc: Mapping, allocator: str, db_path: str | None = None):
    """planner.scenario.record.Scenario for the page's scenario dict with `allocator`."""
    from planner.scenario.record import Scenario

    names = {f.name for f in dataclasses.fields(Scenario)}
    kw = {k: v for k, v in sc.items() if k in names}  # drops UI-only keys such as baseline
    kw["allocator"] = allocator
    if db_path is not None:
        kw["db"] = db_path
    return Scenario.from_dict(kw)  # validates: InputError naming the field


def run_pair(sc: Mapping, progress: Callable[[str, float, float], None] | None = None,
             con=None, db_path: str | None = None) -> dict:
    """Run the scenario with its allocator and (if set) its baseline: {label: SimResult}.

    progress(label, overall_fraction, simulated_hours_of_this_run) is called as the replays go.
    con: the DuckDB connection holding the log (default: the one the app uses for it).
    """
    from planner.scenario.record import run_scenario

    if con is None:
        from appkit import data

        con, db_path = data.con_for_log(str(sc["log"]))
    labels = labels_for(sc)
    out = {}
    hours = float(sc["hours"])
    for i, label in enumerate(labels):
        def cb(frac, i=i, label=label):
            if progress is not None:
                progress(label, (i + float(frac)) / len(labels), float(frac) * hours)
        out[label] = run_scenario(make_scenario(sc, label, db_path), progress=cb, con=con)
    return out
