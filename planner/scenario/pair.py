"""A scenario run with an allocator and a baseline beside it: the Planner's run pair.

    run_pair({"allocator": "dp", "baseline": "equal-share", ...}, con=con) -> {"dp": SimResult, "equal-share": ...}

The scenario dict holds Scenario fields plus `baseline` (an allocator name, "none" or missing:
no baseline; the same as the allocator: one run).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from planner.scenario.record import Scenario, run_scenario

SCENARIO_FIELDS = frozenset(f.name for f in dataclasses.fields(Scenario))


def labels_for(sc: Mapping) -> list[str]:
    """The allocators the pair runs: the scenario's, then its baseline when it is another one."""
    out = [sc["allocator"]]
    if sc.get("baseline") and sc["baseline"] not in ("none", sc["allocator"]):
        out.append(sc["baseline"])
    return out


def make_scenario(sc: Mapping, allocator: str, db_path: str | None = None) -> Scenario:
    """The Scenario of `sc` (a dict; keys that are not Scenario fields, e.g. baseline, dropped)
    with `allocator` (validated: InputError naming the field)."""
    kw = {k: v for k, v in sc.items() if k in SCENARIO_FIELDS}
    kw["allocator"] = allocator
    if db_path is not None:
        kw["db"] = db_path
    return Scenario.from_dict(kw)


def run_pair(sc: Mapping, progress: Callable[[str, float, float], None] | None = None,
             con=None, db_path: str | None = None) -> dict:
    """Run the scenario with its allocator and (if set) its baseline: {label: SimResult}.

    progress(label, overall_fraction, simulated_hours_of_this_run) is called as the replays go.
    con: the DuckDB connection holding the log (None: the scenario's db, opened per run).
    """
    labels = labels_for(sc)
    out = {}
    hours = float(sc["hours"])
    for i, label in enumerate(labels):
        def cb(frac, i=i, label=label):
            if progress is not None:
                progress(label, (i + float(frac)) / len(labels), float(frac) * hours)
        out[label] = run_scenario(make_scenario(sc, label, db_path), progress=cb, con=con)
    return out
