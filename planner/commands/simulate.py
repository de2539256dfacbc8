"""`planner simulate`: replay a log window (or a fixed pool) with a workload under an allocator."""

from __future__ import annotations

import argparse
from pathlib import Path

from planner.scenario.record import Scenario, run_scenario
from planner.scenario.schema import FIELDS

NAME = "simulate"
HELP = "replay idle capacity with elastic Trainers under an allocator; print the metrics summary"


def add_arguments(p: argparse.ArgumentParser) -> None:
    for f in FIELDS:  # one option per scenario field, help from the schema
        if f.kind is bool:
            p.add_argument(f.option, action="store_true", default=None, help=f.cli_help())
        else:
            p.add_argument(f.option, default=None, help=f.cli_help(), metavar=f.name.upper())
    p.add_argument("--out", default=None, metavar="DIR",
                   help="also write timeline.csv, trainers.csv, decisions.csv, preemptions.csv to DIR")
    p.add_argument("--progress", action="store_true", help="print progress to stderr")


def run(args) -> dict:
    import sys

    d = {f.name: getattr(args, f.name) for f in FIELDS if getattr(args, f.name) is not None}
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
