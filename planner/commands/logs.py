"""`planner logs`: list the logs loaded in the database."""

from __future__ import annotations

NAME = "logs"
HELP = "list the logs loaded in the database"


def add_arguments(p):
    p.add_argument("--db", default=None, help="database file (default: $PLANNER_DB or data/planner.duckdb)")


def run(args):
    from planner import db, logs

    con = db.connect(args.db)
    try:
        df = logs.list_logs(con)
    finally:
        con.close()
    cols = ["name", "kind", "format", "nodes", "start", "end", "span_h", "rows", "skipped",
            "node_identity", "oversub_intervals", "oversub_s", "source"]
    return [{c: r[c] for c in cols} for r in df.to_dict("records")]
