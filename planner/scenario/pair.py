"""A scenario run with an allocator and a baseline beside it: the Planner's run pair.

    run_pair({"allocator": "dp", "baseline": "equal-share", ...}, con=con) -> {"dp": SimResult, "equal-share": ...}
    pair = Pair(sc, con=con); runs = pair.replay(parallel=True); pair.limits(runs, parallel=True)

Pair splits the run in two, so the app shows a run's charts before its limits are known:
replay() runs the allocator and the baseline (at once, with parallel=True: planner.scenario.forked),
limits() then each run's cost-free twin (also at once) and the clairvoyant bound the scenario's
`bound` asks for, into the summaries. The results are those of run_scenario, float for float.

The scenario dict holds Scenario fields plus `baseline` (an allocator name, "none" or missing:
no baseline; the same as the allocator: one run).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from planner.scenario import forked
from planner.scenario.record import (
    Scenario,
    clairvoyant_of,
    cost_free_of,
    replay_hooks,
    replay_scenario,
    scenario_inputs,
    survival_option_of,
)

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


class Pair:
    """A scenario's allocator and baseline, their inputs built (validated: InputError naming the
    field) from `con` (None: the scenario's db, opened per run)."""

    def __init__(self, sc: Mapping, con=None, db_path: str | None = None):
        self.labels = labels_for(sc)
        self.hours = float(sc["hours"])
        self.con = con
        self.inputs = {}
        first = None
        for label in self.labels:
            s = make_scenario(sc, label, db_path)
            s.validate()
            if first is not None and dataclasses.replace(s, allocator=first[0].allocator) == first[0]:
                specs, pool = first[1], first[2]  # the same inputs: the pool and Trainers do not depend on
            else:  # the allocator, and no replay changes them (read once: issue 25, the Run's speed)
                specs, pool = scenario_inputs(s, con)
            self.inputs[label] = (s, specs, pool)
            first = first or self.inputs[label]

    def replay(self, progress: Callable[[str, float, float], None] | None = None, parallel: bool = False) -> dict:
        """{label: SimResult} without the limits. progress(label, overall fraction, simulated hours)
        as the replays go (with parallel=True only the first label's replay reports, in this process)."""
        n = len(self.labels)

        def one(i, label, hooks):
            s, specs, pool = self.inputs[label]
            share = 1.0 if parallel else 1.0 / n

            def cb(frac):
                if progress is not None and (i == 0 or not parallel):
                    progress(label, (0.0 if parallel else i / n) + share * float(frac), float(frac) * self.hours)
            return replay_scenario(s, specs, pool, hooks, progress=cb)

        # every replay's hooks built here, before any fork (they may read the database)
        calls = [(lambda i=i, label=label, h=replay_hooks(self.inputs[label][0], self.inputs[label][2], self.con):
                  one(i, label, h)) for i, label in enumerate(self.labels)]
        return dict(zip(self.labels, forked.run_all(calls, parallel=parallel)))

    def limits(self, runs: dict, parallel: bool = False) -> dict:
        """Each run's cost-free twin (at once with parallel=True) and clairvoyant bound, as the
        scenario's `bound` asks, added to runs[label].summary; returns {label: what was added}."""
        calls = []
        for label in self.labels:
            s, specs, pool = self.inputs[label]
            summ = runs[label].summary
            hooks = replay_hooks(s, pool, self.con) if s.bound != "none" else None
            calls.append(lambda s=s, specs=specs, pool=pool, summ=summ, hooks=hooks:
                         cost_free_of(summ, s, pool, specs, hooks=hooks))
        out = dict(zip(self.labels, forked.run_all(calls, parallel=parallel)))
        for label in self.labels:  # in this process: the MILP bound (Pyomo and HiGHS are not for a fork) and
            s, specs, pool = self.inputs[label]  # the survival options' share (it reads the database)
            summ = runs[label].summary
            summ.update(out[label])
            summ.update(clairvoyant_of(summ, s, pool, specs))
            summ.update(survival_option_of(summ, s, pool, specs, self.con))
            out[label].update({k: summ[k] for k in ("clairvoyant", "survival_option") if k in summ})
        return out


def run_pair(sc: Mapping, progress: Callable[[str, float, float], None] | None = None,
             con=None, db_path: str | None = None, parallel: bool = False) -> dict:
    """Run the scenario with its allocator and (if set) its baseline: {label: SimResult}.

    progress(label, overall_fraction, simulated_hours_of_this_run) is called as the replays go.
    con: the DuckDB connection holding the log (None: the scenario's db, opened per run).
    parallel: the replays (then the cost-free twins) at once on the usable cores (Pair).
    """
    pair = Pair(sc, con=con, db_path=db_path)
    runs = pair.replay(progress, parallel=parallel)
    pair.limits(runs, parallel=parallel)
    return runs
