"""Golden replays: the summary JSON of a few short scenarios, stored under tests/golden/.

Written before the simulator refactor (issue #11) and kept afterwards: a refactor of the replay,
the metrics or the allocators must leave these summaries identical (floats to 1e-9 relative,
everything else exactly). Only wall-clock fields are left out (GOLDEN_EXCLUDE).

The scenarios cover a `log` pool (the shipped Summit log, small harvested subsets so that
preemptions happen) and a `fixed` pool, both cadences, the allocators dp, milp, equal-share,
greedy, marginal-gain and horizon-milp, and the ModelArts perturbations (ETA noise, bug and
killed jobs), each on a window of an hour or two so the whole file runs in a few seconds.

A deliberate change of results: regenerate with
    PLANNER_GOLDEN_UPDATE=1 PYTHONPATH=$PWD python3 -m pytest -q -m "" tests/unit/test_scenario_golden.py
and explain the difference in the commit message. Adding keys to the summary is allowed
without regenerating (stored keys are compared; new keys are reported only if stored ones change).
"""

from __future__ import annotations

import json
import math
import os

import pytest

from planner.scenario.record import run_scenario
from tests.helpers import GOLDEN

GOLDEN_EXCLUDE = {"wall_s", "solve_s"}  # wall-clock seconds (solve_s: stats of per-decision wall times)
START = "2021-02-10 20:00:00"

CSV = "trainers.csv"  # tests/golden/trainers.csv: 40 Trainers of mixed models, sizes and work

SCENARIOS = {
    "log_dp_events_csv": dict(pool="log", pool_size=900, start=START, hours=2, allocator="dp",
                              workload=CSV),
    "log_milp_events_csv": dict(pool="log", pool_size=700, pool_subset="random", start=START, hours=1.5,
                                allocator="milp", workload=CSV, pj_max=8, seed=3),
    "fixed_equal_share_interval": dict(pool="fixed", pool_size=96, hours=2, allocator="equal-share",
                                       cadence="interval", step_min=10, workload=CSV),
    "log_greedy_interval_delay": dict(pool="log", pool_size=800, start=START, hours=2, allocator="greedy",
                                      cadence="interval", step_min=5, workload=CSV,
                                      scaling_delay_s=20, pj_max=6),
    "fixed_horizon_milp_perturbed": dict(pool="fixed", pool_size=64, hours=2, allocator="horizon-milp",
                                         workload=CSV, eta_noise=0.3, bug_share=0.2, kill_share=0.2,
                                         seed=5, horizon_steps=3),
    "log_horizon_milp_interval_modelarts": dict(pool="log", pool_size=900, start=START, hours=1.5,
                                                allocator="horizon-milp", cadence="interval", step_min=10,
                                                speed_rule="modelarts", workload=CSV, horizon_steps=3),
    "log_marginal_gain_events_hpo": dict(pool="log", pool_size=900, start=START, hours=1, allocator="marginal-gain",
                                         workload="hpo", count=30, interarrival_s=60, rup=30, rdw=20),
    "fixed_dp_pow2_progress_diverse": dict(pool="fixed", pool_size=50, hours=1.5, allocator="dp", pow2=True,
                                           objective="progress", workload="diverse", count=20, pj_max=4,
                                           seed=4),
    "fixed_milp_priority_csv": dict(pool="fixed", pool_size=40, hours=1.5, allocator="milp",
                                    objective="priority", workload=CSV, tfwd=300),
}


def _clean(summary: dict) -> dict:
    return json.loads(json.dumps({k: v for k, v in summary.items() if k not in GOLDEN_EXCLUDE}))


def _diff(want, got, path="") -> list[str]:
    if isinstance(want, dict) and isinstance(got, dict):
        out = []
        for k in want:
            if k not in got:
                out.append(f"{path}{k}: missing")
            else:
                out += _diff(want[k], got[k], f"{path}{k}.")
        return out
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        if math.isclose(want, got, rel_tol=1e-9, abs_tol=1e-9):
            return []
    elif want == got and type(want) is type(got):
        return []
    return [f"{path.rstrip('.')}: stored {want!r}, now {got!r}"]


# the MILP scenarios and the pow2 one take 2-10 s of CPU each: the slow tier (.ci/run) runs them, the
# default tier the five cheaper ones; `-m ""` or `-k golden -m ""` runs all nine
SLOW = {"fixed_horizon_milp_perturbed", "log_milp_events_csv", "fixed_milp_priority_csv",
        "fixed_dp_pow2_progress_diverse"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in sorted(SCENARIOS)])
def test_golden_summary(name, summit_db):
    sc = dict(SCENARIOS[name])
    if sc["pool"] == "log":
        sc["db"] = str(summit_db)
    if sc["workload"] == CSV:
        sc["workload"] = str(GOLDEN / CSV)
    got = _clean(run_scenario(sc).summary)
    if got.get("workload") == str(GOLDEN / CSV):
        got["workload"] = CSV  # machine-independent
    path = GOLDEN / f"{name}.json"
    if os.environ.get("PLANNER_GOLDEN_UPDATE") == "1":
        path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        pytest.skip(f"wrote {path.name}: nothing compared")
    want = json.loads(path.read_text())
    problems = _diff(want, got)
    assert not problems, f"{name} changed:\n" + "\n".join(problems[:20])


def test_golden_scenarios_exercise_the_replay():
    """The stored summaries cover what they claim: decisions, preemptions, quick starts, kills, hangs."""
    g = {p.stem: json.loads(p.read_text()) for p in GOLDEN.glob("*.json")}
    assert set(g) == set(SCENARIOS)
    assert {v["allocator"] for v in g.values()} >= {"dp", "milp", "equal-share", "greedy", "horizon-milp"}
    assert {v["pool"] for v in g.values()} == {"log", "fixed"}
    assert {v["cadence"] for v in g.values()} == {"events", "interval"}
    assert sum(v["preemptions"] for v in g.values()) > 0
    assert sum(v["quick_starts"] for v in g.values()) > 0
    assert g["fixed_horizon_milp_perturbed"]["trainers_killed"] > 0
    assert g["fixed_horizon_milp_perturbed"]["trainers_hung"] > 0
    assert all(v["decisions"] > 0 for v in g.values())
    assert sum(v["trainers_completed"] > 0 for v in g.values()) >= len(g) - 1
