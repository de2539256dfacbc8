"""`planner fragments`: idle capacity of a log window (events, node-hours, fragments, T_fwd)."""

from __future__ import annotations

NAME = "fragments"
HELP = "characterize the idle capacity of a loaded log over a window and pool size"


def add_arguments(p):
    p.add_argument("--db", default=None, help="database file (default: $PLANNER_DB, else the per-user planner.duckdb)")
    p.add_argument("--log", default=None,
                   help="log name (default: the shipped Summit log, summit-2021, loaded if missing)")
    p.add_argument("--start", default=None,
                   help="window start: ISO time (naive = UTC) or epoch seconds; default log start")
    p.add_argument("--hours", type=float, default=None, help="window length in hours; default to log end")
    p.add_argument("--pool-size", type=int, default=None, help="pool size K (default: all machine nodes)")
    p.add_argument("--subset", choices=["first", "random"], default="first",
                   help="which K nodes of a node-level log (default: the first K)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random subset")


def run(args):
    from planner import db, fragments

    con, log = db.open_log(args.db, args.log)
    try:
        return fragments.summary(con, log, start=args.start, hours=args.hours,
                                 pool_size=args.pool_size, subset=args.subset, seed=args.seed)
    finally:
        con.close()
