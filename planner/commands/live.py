"""`planner live`: poll a running Slurm, record its harvestable nodes, advise elastic jobs."""

from __future__ import annotations

import json
import sys

from planner.allocators import names
from planner.errors import InputError
from planner.live.advisor import Advisor, load_jobs
from planner.scenario.schema import FIELD

NAME = "live"
HELP = ("poll a running Slurm (read-only): record harvestable nodes as a node log, and with --jobs print "
        "grow/shrink recommendations as JSON lines")
STREAMS_JSON = True  # prints JSON lines while it runs (planner.cli keeps stdout for them)


def add_arguments(p):
    p.add_argument(FIELD["db"].option, default=None, help=FIELD["db"].cli_help())
    p.add_argument("--log", default="live", help="name of the live log to record into (resumed when it exists; "
                                                   "default live)")
    p.add_argument("--interval", type=float, default=30.0, help="seconds between polls (default 30)")
    p.add_argument("--for", dest="for_s", type=float, default=None,
                   help="stop after this many seconds (default: until SIGINT/SIGTERM)")
    p.add_argument("--jobs", default=None, metavar="FILE",
                   help="elastic jobs to advise (JSON: trainers with id, slurm_job, model or curve, nmin, nmax, "
                        "rup_s, rdw_s; tfwd_s)")
    p.add_argument("--partitions", default=None, metavar="P,...",
                   help="partitions whose idle nodes may be harvested (default: all)")
    p.add_argument("--allocator", default="auto", help="allocator deciding the sizes (default auto)")
    p.add_argument("--history", default=None, metavar="LOG",
                   help="a loaded log to fit the idle-time model on until the live log has enough history")
    p.add_argument("--rest", default=None, metavar="URL",
                   help="read slurmrestd at URL (http(s)://host:port or unix:/path/to/socket) instead of the "
                        "client commands")
    p.add_argument("--webhook", default=None, metavar="URL", help="also POST every recommendation (JSON) to URL")
    p.add_argument("--execute", action="store_true",
                   help="RUN the recommended scontrol/sbatch commands (off by default: advisory only)")


def run(args):
    from planner.live import runner  # lazy: CLI start-up (ssl, http.client: ~0.1 s)
    from planner.live.source import CliSource, RestSource  # lazy: CLI start-up (ssl, http.client)

    if not (args.interval > 0) or args.interval > 86400:
        raise InputError(f"--interval must be in (0, 86400] seconds, got {args.interval}", field="interval")
    if args.for_s is not None and not (args.for_s >= 0):
        raise InputError(f"--for must be >= 0 seconds, got {args.for_s}", field="for")
    parts = [p.strip() for p in args.partitions.split(",") if p.strip()] if args.partitions else None
    advisor = None
    if args.jobs:
        if args.allocator not in names():
            raise InputError(f"unknown allocator {args.allocator!r}; use one of {', '.join(names())}",
                             field="allocator")
        jobs, opts = load_jobs(args.jobs)
        advisor = Advisor(jobs, args.allocator, opts)
    if args.rest and not args.rest.startswith(("http://", "https://", "unix:/")):
        raise InputError(f"--rest takes http(s)://host:port or unix:/path/to/socket, got {args.rest[:80]!r}",
                         field="rest")
    if args.webhook and not args.webhook.startswith(("http://", "https://")):
        raise InputError(f"--webhook takes an http(s):// URL, got {args.webhook[:80]!r}", field="webhook")
    if args.execute and args.rest:
        raise InputError("--execute runs Slurm commands: only with the client commands, not --rest", field="execute")
    source = RestSource(args.rest) if args.rest else CliSource()
    poller = runner.Poller(args.db, args.log, source, parts, advisor, history=args.history, execute=args.execute,
                           webhook=args.webhook)
    emit = (lambda obj: print(json.dumps(obj), flush=True)) if args.json else (
        lambda obj: print(_human(obj), flush=True))
    stats = runner.run(poller, args.interval, args.for_s, emit)
    print(f"planner live: stopped after {stats['polls']} polls ({stats['failed_polls']} failed), "
          f"{stats['node_events']} node events, {stats['recommendations']} recommendations", file=sys.stderr)
    return {"type": "summary", "log": args.log, **stats}


def _human(obj: dict) -> str:
    if obj.get("type") == "recommendation":
        return (f"{obj['job']}: {obj['from_nodes']} -> {obj['to_nodes']} nodes "
                f"(P(stay) {obj['p_stays_idle']}, gain {obj['expected_gain_samples']} samples): {obj['command']}")
    if obj.get("type") == "score":
        return (f"{obj['job']} @ {obj['time']:.0f}: {obj['stayed']}/{obj['nodes_added']} nodes stayed, "
                f"regret {obj['regret_samples']} samples")
    return str(obj)
