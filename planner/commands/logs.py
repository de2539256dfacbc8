"""`planner logs`: list the logs loaded in the database."""

from __future__ import annotations

from planner import logs
from planner.errors import InputError
from planner.scenario.schema import FIELD
from planner.store import db

NAME = "logs"
HELP = "list the logs loaded in the database (or remove one with --remove NAME)"


def add_arguments(p):
    p.add_argument("--db", default=None, help=FIELD["db"].cli_help())
    p.add_argument("--remove", metavar="NAME", default=None,
                   help="delete this log from the database first (to reload it with other options)")


def run(args):
    con = db.connect_for_reading(args.db, write=args.remove is not None)
    try:
        if args.remove is not None and not logs.remove_log(con, args.remove):
            raise InputError(f"no log named {args.remove!r} in the database", field="remove")
        df = logs.list_logs(con)
    finally:
        con.close()
    cols = ["name", "kind", "format", "nodes", "start", "end", "span_h", "rows", "skipped",
            "node_identity", "oversub_intervals", "oversub_s", "source"]
    return [{c: r[c] for c in cols} for r in df.to_dict("records")]
