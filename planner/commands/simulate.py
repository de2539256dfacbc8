"""`planner simulate`: replay a log window (or a fixed pool) with a workload under an allocator."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

from planner.scenario import Scenario, run_scenario

NAME = "simulate"
HELP = "replay idle capacity with elastic Trainers under an allocator; print the metrics summary"

_HELP = {
    "db": "DuckDB file (default: $PLANNER_DB, else planner.duckdb in the per-user data directory)",
    "log": "log name in the database (default: the shipped Summit log, loaded if missing)",
    "start": "window start, ISO time UTC (default: the log's start)",
    "hours": "window length in hours (default 24)",
    "pool": "log: the log's idle nodes; fixed: P nodes always there (default log)",
    "pool_size": "log: harvest only K nodes; fixed: P (required)",
    "pool_subset": "which K nodes of a log: first (BFTrainer's) or random (seeded)",
    "workload": "hpo | diverse | philly | path of a Trainer CSV (default hpo)",
    "count": "number of Trainers (default: the workload's)",
    "interarrival_s": "hpo: seconds between submissions; diverse: mean Poisson gap",
    "allocator": "allocator name (default dp)",
    "tfwd": "T_fwd seconds (default 120)",
    "objective": "throughput | scaling-efficiency | priority | progress",
    "pj_max": "most Trainers admitted at once (default 10)",
    "seed": "random seed (workload, random pool subset)",
    "cadence": "events: decide at every event (BFTrainer); interval: every --step-min minutes",
    "time_limit": "solver seconds per decision (default 10)",
    "mip_gap": "relative MIP gap of the MILP allocators (default 1e-6)",
    "rup": "override every Trainer's scale-up cost, seconds",
    "rdw": "override every Trainer's scale-down cost, seconds",
    "horizon_steps": "horizon-milp: look-ahead steps T (default 5)",
    "step_min": "decision step f in minutes (interval cadence, horizon-milp; default 5)",
    "speed_rule": "horizon-milp progress model: curve | modelarts",
    "eta_noise": "relative error of the ETAs the allocator sees (default 0)",
    "bug_share": "share of Trainers that fail early (default 0)",
    "kill_share": "share of Trainers killed by their users (default 0)",
    "scaling_delay_s": "extra delay per rescale, seconds (default 0)",
    "idle_during_solve": "nodes a decision moves stay idle for the decision's wall time",
    "pow2": "node counts restricted to 0 and powers of two",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    for f in fields(Scenario):
        opt = "--" + f.name.replace("_", "-")
        if f.type == "bool":  # a flag (annotations are text: from __future__ import annotations)
            p.add_argument(opt, action="store_true", default=None, help=_HELP.get(f.name))
        else:
            p.add_argument(opt, default=None, help=_HELP.get(f.name), metavar=f.name.upper())
    p.add_argument("--out", default=None, metavar="DIR",
                   help="also write timeline.csv, trainers.csv, decisions.csv, preemptions.csv to DIR")
    p.add_argument("--progress", action="store_true", help="print progress to stderr")


def run(args) -> dict:
    import sys

    d = {f.name: getattr(args, f.name) for f in fields(Scenario) if getattr(args, f.name) is not None}
    sc = Scenario.from_dict(d)
    prog = None
    if args.progress:
        def prog(frac):
            print(f"\r{100 * frac:5.1f} %", end="", file=sys.stderr, flush=True)
    res = run_scenario(sc, progress=prog)
    if args.progress:
        print(file=sys.stderr)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        res.timeline.to_csv(out / "timeline.csv", index=False)
        res.trainers.to_csv(out / "trainers.csv", index=False)
        res.decisions.to_csv(out / "decisions.csv", index=False)
        res.preemptions.to_csv(out / "preemptions.csv", index=False)
    return res.summary
