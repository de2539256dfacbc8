"""`planner simulate`: replay a log window (or a fixed pool) with a workload under an allocator."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from planner.errors import InputError
from planner.paths import os_error_text
from planner.replay import windows as W
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
    w = p.add_argument_group("many windows (planner.replay.windows)")
    w.add_argument("--windows", default=None, metavar="all|K",
                   help="replay every whole window of the log (all) or K seeded random ones, instead of one")
    w.add_argument("--window-hours", default=None, metavar="H", help="window length with --windows (h)")
    w.add_argument("--stride-hours", default=None, metavar="S",
                   help="with --windows all: hours between window starts (default: the window length)")
    w.add_argument("--allocators", default=None, metavar="A,B",
                   help="with --windows: the allocators to replay in every window (default: --allocator and "
                        "equal-share); the paired comparison is against --baseline")
    w.add_argument("--baseline", default=None, metavar="A",
                   help="with --windows: the allocator the others are compared with (default: equal-share)")
    w.add_argument("--executor", default="local", choices=("local", "dask", "inline"),
                   help="with --windows: where the replays run (default local processes)")
    w.add_argument("--workers", default=None, metavar="N", help="with --windows: worker processes (default: cores)")
    w.add_argument("--scheduler", default=None, metavar="URL", help="with --executor dask: a running scheduler")


def run(args) -> dict:
    d = {f.name: getattr(args, f.name) for f in FIELDS if getattr(args, f.name) is not None}
    if args.windows is not None:
        return run_many(args, d)
    for opt in ("window_hours", "stride_hours", "allocators", "baseline", "workers", "scheduler"):
        if getattr(args, opt) is not None:
            raise InputError(f"--{opt.replace('_', '-')} needs --windows", field=opt)
    sc = Scenario.from_dict(d)
    out = _out_dir(args.out, sc) if args.out else None  # refused before the replay, not after
    prog = None
    if args.progress:
        def prog(frac):
            print(f"\r{100 * frac:5.1f} %", end="", file=sys.stderr, flush=True)
    res = run_scenario(sc, progress=prog)
    if args.progress:
        print(file=sys.stderr)
    if out is not None:
        res.timeline.to_csv(out / "timeline.csv", index=False)
        res.trainers.to_csv(out / "trainers.csv", index=False)
        res.decisions.to_csv(out / "decisions.csv", index=False)
        res.preemptions.to_csv(out / "preemptions.csv", index=False)
    return res.summary


def _number(text, name: str, kind=float):
    try:
        x = kind(text)
    except (TypeError, ValueError):
        raise InputError(f"must be a number, got {text!r}", field=name) from None
    if not x > 0:
        raise InputError(f"must be positive, got {text!r}", field=name)
    return x


def run_many(args, d: dict) -> dict:
    """`--windows all|K`: the scenario over many windows (planner.replay.windows)."""

    k = W.parse_windows(args.windows)
    if args.window_hours is None:
        raise InputError("--windows needs --window-hours", field="window_hours")
    hours = _number(args.window_hours, "window_hours")
    stride = _number(args.stride_hours, "stride_hours") if args.stride_hours is not None else None
    if stride is not None and k is not None:
        raise InputError("--stride-hours applies to --windows all, not to random windows", field="stride_hours")
    for opt in ("start", "hours", "out"):
        if d.get(opt) is not None or (opt == "out" and args.out):
            raise InputError(f"--{opt} does not apply with --windows (each window sets its own)", field=opt)
    base = Scenario.from_dict(d).to_dict()
    base.pop("start"), base.pop("hours")
    if base["pool"] != "log":
        raise InputError("--windows needs a log pool", field="pool")
    allocs = ([a.strip() for a in args.allocators.split(",") if a.strip()] if args.allocators
              else list(dict.fromkeys([base["allocator"], "equal-share"])))
    for a in allocs:
        Scenario.from_dict({"allocator": a})  # a bad name: one line naming the field
    name, t0, t1 = W.log_span(base.get("db"), base.get("log"))
    ws = W.window_set(t0, t1, hours, stride, count=k, seed=int(base["seed"]))
    workers = int(_number(args.workers, "workers", int)) if args.workers is not None else (os.cpu_count() or 1)

    def prog(done, total):
        if args.progress:
            print(f"\r{done}/{total} replays", end="", file=sys.stderr, flush=True)

    out = W.run_windows(base, ws, allocs, baseline=args.baseline, executor=args.executor, workers=workers,
                        scheduler=args.scheduler, progress=prog)
    if args.progress:
        print(file=sys.stderr)
    span_h = (t1 - t0) / 3600.0
    covered = (ws[-1][1] - ws[0][0]) / 3600.0 if ws and k is None else None
    out.update(log=name, log_span_h=span_h, window_hours=hours, stride_hours=stride if k is None else None,
               random_windows=k, uncovered_h=(span_h - covered) if covered is not None else None)
    return out


def _out_dir(path: str, sc) -> Path:
    """--out made (or found) as a writable directory that is not the input database; InputError
    (one line naming the field) otherwise."""
    out = Path(path).expanduser()
    if out.exists() and not out.is_dir():
        raise InputError(f"{path} exists and is not a directory (the CSV files go into a directory)",
                         field="out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".planner-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise InputError(f"cannot write there ({os_error_text(e)})", field="out") from None
    return out
