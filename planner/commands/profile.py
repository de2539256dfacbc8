"""`planner profile`: the operator views of a log's idle capacity as JSON (docs/views.md)."""

from __future__ import annotations

from planner.errors import InputError
from planner.idle import job_views, views
from planner.idle.window import Window
from planner.logs import iso
from planner.scenario.schema import FIELD
from planner.store import catalog

NAME = "profile"
HELP = ("idle node-hours of a loaded log by hour x weekday, by day, holes (size x length), by partition, "
        "and idle while jobs waited")


def add_arguments(p):
    for name in ("db", "log", "start"):  # the same options as `planner simulate` and `fragments`
        p.add_argument(FIELD[name].option, default=None, help=FIELD[name].cli_help())
    p.add_argument("--hours", type=float, default=None, help="window length in hours; default to log end")
    p.add_argument("--utc-offset-h", type=float, default=0.0,
                   help="clock of the hour/weekday/day views: hours added to UTC (e.g. -5); default 0")
    p.add_argument("--tz", default=None, metavar="ZONE",
                   help="clock of the hour/weekday/day views: a time zone (IANA name, e.g. America/Chicago), "
                        "daylight saving time included; replaces --utc-offset-h")
    p.add_argument("--by", choices=("user", "group", "queue", "partition"), default=None,
                   help="also idle and wait per user, group (account), queue or partition, where the log has "
                        "that field (SWF fields 12, 13, 15, 16; sacct User, Account, Partition)")
    p.add_argument("--compare", nargs="+", metavar="NAME", default=None,
                   help="also compare these logs (idle ratio, equivalent nodes, fragment median) over their whole span")


def _records(df, cols):
    return [dict(zip(cols, r)) for r in df[cols].itertuples(index=False, name=None)] if df is not None else None


BY_COLUMNS = ["name", "idle_node_hours", "share", "used_node_hours", "jobs_started", "wait_mean_h", "wait_median_h",
              "wait_p95_h"]


def profile_summary(con, win: Window, utc_offset_h=0.0, compare=None, by=None, tz=None) -> dict:
    """The views as JSON; the clock is time zone `tz` (daylight saving time included) when given,
    else UTC shifted by utc_offset_h."""
    if tz is not None and utc_offset_h:
        raise InputError("give the clock as a time zone (--tz) or as hours from UTC (--utc-offset-h), not both",
                         field="tz")
    sp = views.span(con, win)
    hw = views.by_hour_weekday(con, win, utc_offset_h, tz)
    grid = hw.pivot(index="weekday", columns="hour", values="idle_node_hours").to_numpy()
    part = job_views.by_partition(con, win)
    out = {"log": sp.log, "start": iso(sp.t0), "end": iso(sp.t1),
           "span_h": (sp.t1 - sp.t0) / 3600.0, "machine_nodes": sp.machine_nodes,
           "idle_node_hours": views.q_idle_node_hours(con, sp), "utc_offset_h": float(utc_offset_h), "tz": tz,
           "weekdays": list(views.WEEKDAYS),
           "by_hour_weekday": [[float(v) for v in row] for row in grid],
           "by_day": _records(views.by_day(con, win, utc_offset_h, tz),
                              ["day", "idle_node_hours", "covered_h", "day_h", "mean_idle_nodes", "idle_ratio"]),
           "holes": _records(views.holes(con, win),
                             ["nodes_min", "nodes_max", "length_min_s", "length_max_s", "holes", "node_hours"]),
           "by_partition": _records(part, ["partition", "idle_node_hours", "share", "outage_node_hours",
                                           "harvestable_node_hours"]),
           "by_partition_basis": None if part is None else str(part["basis"].iloc[0]) if len(part) else None}
    wait = job_views.idle_while_waiting(con, win)
    keys = ("idle_while_waiting_node_hours", "idle_no_wait_node_hours", "idle_while_waiting_none_fit_node_hours",
            "idle_while_waiting_some_fit_node_hours", "hours_with_jobs_waiting_h")
    out.update({k: None if wait is None else wait[k] for k in keys})
    if by:
        df = job_views.by_label(con, win, by)
        out["by"] = by
        out["by_label"] = None if df is None else [
            {k: (None if v != v else v) for k, v in r.items()} for r in _records(df, BY_COLUMNS)]  # NaN -> null
        out["by_label_offered"] = job_views.labels_of(con, sp.log)
    if compare:
        rows, _ = views.compare_logs(con, [win.log] + [c for c in compare if c != win.log])
        out["compare"] = _records(rows, ["log", "nodes", "span_h", "idle_node_hours", "eq_nodes", "idle_ratio",
                                         "fragments", "fragment_median_s"])
    return out


def run(args):
    con, log = catalog.open_log(args.db, args.log)
    try:
        return profile_summary(con, Window(log, start=args.start, hours=args.hours), args.utc_offset_h,
                               args.compare, getattr(args, "by", None), getattr(args, "tz", None))
    finally:
        con.close()
