"""`planner ingest FILE`: load a scheduler log into the DuckDB store and print the load report."""

from __future__ import annotations

from planner import logs
from planner.errors import InputError
from planner.logs.limits import parse_bytes
from planner.store import db

NAME = "ingest"
HELP = "load a scheduler log (SWF, time,node,idle events, sacct -P or --json, job CSV) into the database"
# job CSV mapping keys (planner.logs.csvjobs.KEYS; not imported here to keep start-up light)
MAP_KEYS = ("start", "end", "duration", "nodes", "node_list", "submit", "job_id", "partition")


def add_arguments(p):
    p.add_argument("file", help="log file, plain or .gz")
    p.add_argument("--format", choices=["swf", "nodestate", "slurm", "slurm_json", "csv"], default=None,
                   help="override format detection")
    p.add_argument("--db", default=None, help="database file (default: $PLANNER_DB, else the per-user planner.duckdb)")
    p.add_argument("--name", default=None, help="log name (default: file name without .gz)")
    p.add_argument("--machine-nodes", type=int, default=None,
                   help="machine size in nodes (default: log header, else node set or most in use)")
    p.add_argument("--unit", choices=["node", "GPU"], default="node",
                   help="what the log's job sizes and machine size count: node (default) or GPU (a GPU trace: "
                        "its node-hours are GPU-hours)")
    p.add_argument("--max-bytes", default=None, metavar="SIZE",
                   help="refuse an input larger than this once decompressed, e.g. 500M, 20G "
                        "(default: planner.logs.limits.MAX_INPUT_BYTES, 8G); checked while reading")
    p.add_argument("--tz", default=None, metavar="ZONE",
                   help="sacct times are local times of this IANA zone, e.g. America/Chicago "
                        "(default: UTC); the repeated hour of a DST change is resolved per job")
    for key in MAP_KEYS:
        p.add_argument(f"--map-{key.replace('_', '-')}", default=None, metavar="COL",
                       help=f"job CSV: column holding the job's {key.replace('_', ' ')}")
    p.add_argument("--time-unit", choices=["s", "ms"], default=None,
                   help="job CSV: numeric times are seconds (default) or milliseconds")
    p.add_argument("--time-origin", default=None, metavar="ISO",
                   help="job CSV: numeric times count from this instant (e.g. 2020-07-01T00:00:00)")
    p.add_argument("--skip-incomplete", action="store_true",
                   help="job CSV: skip rows with an empty required field (counted per reason)")


def mapping_from_args(args) -> dict | None:
    m = {k: getattr(args, f"map_{k}") for k in MAP_KEYS if getattr(args, f"map_{k}", None)}
    # time options travel in the mapping (planner.logs.csvjobs.OPTION_KEYS)
    if getattr(args, "time_unit", None):
        m["time_unit"] = args.time_unit
    if getattr(args, "time_origin", None):
        m["time_origin"] = args.time_origin
    if getattr(args, "skip_incomplete", False):
        m["skip_incomplete"] = "1"
    return m or None


def max_bytes_from_args(args) -> int | None:
    if getattr(args, "max_bytes", None) is None:
        return None
    try:
        return parse_bytes(args.max_bytes)
    except ValueError:
        raise InputError(f"not a size: {args.max_bytes!r} (e.g. 500M, 2G)", field="max-bytes") from None


def run(args):
    max_bytes = max_bytes_from_args(args)
    con = db.connect(args.db)
    try:
        rep = logs.ingest(con, args.file, format=args.format, name=args.name,
                          machine_nodes=args.machine_nodes, mapping=mapping_from_args(args),
                          tz=getattr(args, "tz", None), max_bytes=max_bytes)
        unit = getattr(args, "unit", "node") or "node"
        if unit != "node" and rep.get("log"):
            logs.set_unit(con, rep["log"], unit)
        rep["unit"] = unit
        return rep
    finally:
        con.close()
