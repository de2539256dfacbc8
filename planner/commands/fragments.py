"""`planner fragments`: idle capacity of a log window (events, node-hours, fragments, T_fwd)."""

from __future__ import annotations

from planner.idle import fragments
from planner.idle.window import Window
from planner.scenario.schema import FIELD
from planner.store import catalog

NAME = "fragments"
HELP = "characterize the idle capacity of a loaded log over a window and pool size"


def add_arguments(p):
    for name in ("db", "log", "start"):  # the same options as `planner simulate`
        p.add_argument(FIELD[name].option, default=None, help=FIELD[name].cli_help())
    p.add_argument("--hours", type=float, default=None, help="window length in hours; default to log end")
    p.add_argument("--pool-size", type=int, default=None, help="pool size K (default: all machine nodes)")
    p.add_argument("--subset", choices=["first", "random"], default="first",
                   help="which K nodes of a node-level log (default: the first K)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random subset")
    p.add_argument("--include-outages", action="store_true",
                   help="count machine-wide outages (no job running for --outage-hours or more) as "
                        "harvestable idle capacity (default: excluded; see planner.idle.split)")
    p.add_argument("--include-warmup", action="store_true",
                   help="count a job log's warm-up (its first hours, idle only because the log starts "
                        "empty) as harvestable (default: excluded)")


def run(args):
    con, log = catalog.open_log(args.db, args.log)
    try:
        win = Window(log, start=args.start, hours=args.hours, pool_size=args.pool_size, subset=args.subset,
                     seed=args.seed)
        return fragments.summary(con, win, include_outages=args.include_outages, include_warmup=args.include_warmup)
    finally:
        con.close()
