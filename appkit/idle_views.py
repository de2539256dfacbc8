"""The Idle page's sections: headline numbers with tooltips, N(t) readable over weeks, and the
operator views of planner.idle.views (hour x weekday, calendar days, holes, partitions, idle while
waiting, logs side by side). The page stays thin: it picks the log and window and calls these.

Queries are cached per database file (appkit.data.cached_call: the shared database by path, an
uploaded log by path and modification time).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from appkit import charts, data, profile_charts, report
from appkit.charts import fmt_num
from appkit.uploads import md
from planner.errors import InputError
from planner.idle import fragments, job_views, views, warmup
from planner.report import glossary


def headline(s: dict) -> None:
    """The window's idle figures as metrics, each with its glossary definition as tooltip."""
    cells = [("idle_node_hours", fmt_num(s["idle_node_hours"])),
             ("eq_nodes", fmt_num(s["eq_nodes"])),
             ("idle_ratio", glossary.term("idle_ratio").show(s["idle_ratio"])),
             ("events_per_h", fmt_num(s["events"] / s["span_h"]) if s.get("span_h") else "-"),
             ("tfwd_suggestion_s", fmt_num(s.get("tfwd_suggestion_s")))]
    for col, (key, value) in zip(st.columns(len(cells)), cells):
        metric(col, key, value)


def metric(col, key: str, value: str) -> None:
    """st.metric with the glossary's label (unit in the label: the value is never cut off) and tooltip."""
    t = glossary.term(key)
    col.metric(f"{t.label} ({t.unit})", value, help=glossary.help_for(key))


def idle_series_chart(series: pd.DataFrame):
    """N(t): a min/mean/max band when binned (long windows), else the exact step line."""
    if "min_nodes" in series:
        fig = charts.band(series["t_s"], series["idle_nodes"], series["min_nodes"], series["max_nodes"],
                          "Idle nodes N(t): mean per bin, shaded min to max", "idle nodes", "nodes",
                          name="mean N(t)")
    else:
        fig = charts.zero_based(charts.step_lines({"N(t) idle nodes": (series["t_s"], series["idle_nodes"])},
                                                  "Idle nodes N(t)", "idle nodes", "nodes"))
    fig.update_yaxes(tickformat=",.0f")
    return fig


def numbers_table(s: dict) -> pd.DataFrame:
    """The summary flattened, numbers printed for people (no raw floats)."""
    flat = report.flatten(s)

    def show(v):
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return "-" if v is None else str(v)
        return fmt_num(v, digits=4)

    return pd.DataFrame({"figure": list(flat), "value": [show(v) for v in flat.values()]})


def operator_views(log: str, start, hours, kind: str = "jobs") -> None:
    """Hour x weekday, calendar days, holes, partitions, idle while waiting: whole machine, this window."""
    st.subheader("When and where the machine is idle")
    st.caption("The whole machine (all nodes of the log) over the window above; definitions in docs/views.md. "
               "Every view sums to the window's idle node-hours.")
    off = st.columns(4)[0].number_input("Clock: hours from UTC", min_value=-12.0, max_value=14.0, value=0.0,
                                        step=1.0, key="idle_utc_offset", help="e.g. -5 for US Eastern standard time")
    clock = "UTC" if off == 0 else f"UTC{off:+g} h"
    kw = dict(start=start, hours=hours)
    try:
        hw = data.cached_call(views.by_hour_weekday, log, utc_offset_h=float(off), **kw)
        days = data.cached_call(views.by_day, log, utc_offset_h=float(off), **kw)
        hol = data.cached_call(views.holes, log, **kw)
        part = data.cached_call(job_views.by_partition, log, **kw)
        wait = data.cached_call(job_views.idle_while_waiting, log, **kw)
    except InputError as e:
        st.error(md(str(e)))
        return
    c1, c2 = st.columns(2)
    c1.plotly_chart(profile_charts.weekhour_heatmap(hw, clock), key="idle_heat", width="stretch")
    c2.plotly_chart(profile_charts.day_bars(days, clock), key="idle_days", width="stretch")
    c1, c2 = st.columns(2)
    c1.plotly_chart(profile_charts.holes_heatmap(hol), key="idle_holes", width="stretch")
    c1.caption("A hole of size k: a maximal interval with at least k nodes idle at once. A cell: the idle "
               "node-hours a k-node job of that length could have used.")
    if part is not None:
        c2.plotly_chart(profile_charts.partition_bars(part), key="idle_part", width="stretch")
    elif kind == "node":
        c2.info("By partition or queue: a node-state log names no partitions (job logs do: SWF fields 15/16, "
                "sacct Partition, a job CSV's partition column).")
    else:
        c2.info("By partition or queue: this log names none (SWF fields 15/16 are -1, no sacct Partition or "
                "partition column), or its jobs lack the submit times the count-level split needs.")
    waiting_section(wait, kind)


def waiting_section(wait: dict | None, kind: str = "jobs") -> None:
    if wait is None:
        st.info("Idle while jobs waited: needs a job log with submit times ("
                + ("a node-state log has no jobs)." if kind == "node" else "this log has none)."))
        return
    cols = st.columns(3)
    for col, key in zip(cols, ("idle_while_waiting_node_hours", "idle_no_wait_node_hours")):
        metric(col, key, fmt_num(wait[key]))
    cols[2].metric("hours with a job waiting (h)", fmt_num(wait["hours_with_jobs_waiting_h"]),
                   help="Hours of the window during which at least one job was submitted but not started.")
    st.plotly_chart(profile_charts.waiting_bars(wait), key="idle_wait", width="stretch")


def compare_section(log: str, names: list[str]) -> None:
    """Several logs side by side (whole logs, whole machines; an excluded warm-up left out)."""
    st.subheader("Logs side by side")
    picked = st.multiselect("Logs to compare (whole logs)", names, default=[log], key=f"idle_cmp_{log}")
    if not picked:
        st.info("Pick at least one log.")
        return
    rows, cdfs = [], []
    try:
        for name in picked:
            # the Idle page's own call for a whole log: cached once
            v = data.cached_call(fragments.views, name, **warmup.whole_log(name, data.warmup_exclusions()))
            rows.append(views.compare_row(name, v["summary"]))
            cdfs.append(views.compare_cdf(name, v["fragment_lengths"]))
    except InputError as e:
        st.error(md(str(e)))
        return
    df = pd.DataFrame(rows)
    show = pd.DataFrame({"log": df["log"], "nodes": [fmt_num(v) for v in df["nodes"]],
                         "span": [fmt_num(v, "h") for v in df["span_h"]],
                         "idle node-hours": [fmt_num(v, "node-h") for v in df["idle_node_hours"]],
                         "equivalent nodes": [fmt_num(v) for v in df["eq_nodes"]],
                         "idle ratio": [f"{100 * v:.1f} %" for v in df["idle_ratio"]],
                         "fragments": [fmt_num(v) for v in df["fragments"]],
                         "median fragment": [fmt_num(v, "s") for v in df["fragment_median_s"]]})
    st.dataframe(show, hide_index=True, width="stretch", key="idle_cmp_table")
    weight = st.radio("CDF weight", ["cdf_nodetime", "cdf_count"], horizontal=True, key="idle_cmp_weight",
                      format_func=lambda w: "by idle node-time" if w == "cdf_nodetime" else "by count")
    st.plotly_chart(profile_charts.compare_cdfs(pd.concat(cdfs, ignore_index=True), weight),
                    key="idle_cmp_cdf", width="stretch")
