"""The Idle page's sections: headline numbers with tooltips, N(t) readable over weeks, and the
operator views of planner.idle.views (hour x weekday, calendar days, holes, partitions, idle while
waiting, logs side by side). The page stays thin: it picks the log and window and calls these.

Queries are cached per database file (appkit.data.cached_call: the shared database by path, an
uploaded log by path and modification time).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from appkit import charts, data, profile_charts, report, state
from appkit.charts import fmt_num
from appkit.tables import md_table
from appkit.uploads import md
from planner import times
from planner.errors import InputError
from planner.idle import fragments, job_views, views
from planner.idle.window import Window
from planner.report import glossary

U = glossary.in_units  # a label in the log's unit


def _chart(container, fig, key: str, unit: str) -> None:
    """A chart with its labels in the log's unit (a GPU trace: GPUs, GPU-hours)."""
    container.plotly_chart(charts.in_units(fig, unit), key=key, width="stretch")


def headline(s: dict, unit: str = "node") -> None:
    """The window's idle figures as metrics, each with its glossary definition as tooltip."""
    cells = [("idle_node_hours", fmt_num(s["idle_node_hours"])),
             ("eq_nodes", fmt_num(s["eq_nodes"])),
             ("idle_ratio", glossary.term("idle_ratio").show(s["idle_ratio"])),
             ("events_per_h", fmt_num(s["events"] / s["span_h"]) if s.get("span_h") else "-"),
             ("tfwd_suggestion_s", fmt_num(s.get("tfwd_suggestion_s")))]
    row = st.container(horizontal=True, gap="medium")  # wraps on a narrow screen: no label cut off
    for key, value in cells:
        metric(row, key, value, unit, width="content")


_VIEW_SEEN = state.view_seen_key("idle_view")  # the `view` the page last read from or wrote to the URL


def pick_view() -> str:
    """The Idle page's view (appkit.state.IDLE_VIEWS): one section drawn at a time, as an operator opens
    one row of a Grafana dashboard (ten figures at once took seconds to draw in the browser); "all"
    draws every section; the overview (split, N(t), events) by default; kept in the URL (state.pick_view)."""
    return state.pick_view(state.IDLE_VIEWS, "idle_view", "overview", "View",
                           "One section at a time (drawn faster); Everything: all of them. The view is in the URL: "
                           "a link opens it.")


def planned_view() -> str:
    """The view `pick_view` will draw, known before its widget (the page asks for Plotly's code at its
    top only when that view draws Plotly at once)."""
    url_view, _ = state.view_from_params(st.query_params.to_dict())
    if url_view is not None and url_view != st.session_state.get(_VIEW_SEEN):
        return url_view
    return st.session_state.get("idle_view") or "overview"


INTERACTIVE_KEY = "idle_interactive"
_INTERACTIVE_KEPT = "_idle_interactive_kept"  # the toggle's value, kept while another view (no toggle) is drawn


_CHARTS_SEEN = "_idle_charts_url"  # the `charts` value the page last read from or wrote to the URL


def _url_charts() -> tuple[bool | None, str | None]:
    """(the choice the URL's `charts` makes, or None when it makes none or the page made it itself; a
    one-line note when it names something else)."""
    raw = st.query_params.get(state.CHARTS_PARAM)
    if raw is None or raw == st.session_state.get(_CHARTS_SEEN):
        return None, None
    if raw == state.CHARTS_ON:
        return True, None
    return None, (f"URL parameter {state.CHARTS_PARAM}={raw[:40]!r} ignored: `{state.CHARTS_ON}` or none "
                  "(pictures).")


def _interactive() -> bool:
    url, _ = _url_charts()  # a link or a reload that names interactive charts: known before the page draws
    if url is not None:
        return url
    return bool(st.session_state.get(INTERACTIVE_KEY, st.session_state.get(_INTERACTIVE_KEPT, False)))


def static_first() -> bool:
    """Whether this run of the page draws its charts as static SVG (the overview, until the operator
    asks for the interactive charts): then no chart of it needs Plotly's 4.7 MB chunk."""
    return planned_view() == "overview" and not _interactive()


def interactive_toggle() -> bool:
    """The overview's charts as Plotly figures (hover, one drag zooms every time chart, PNG from the
    camera icon) or, by default, as static pictures drawn without Plotly (issue 25, speed: Plotly's
    chunk and three first draws were most of the page's first load). Kept for the session (Streamlit
    forgets a widget's value while it is not drawn: the other views)."""
    url, note = _url_charts()
    if INTERACTIVE_KEY not in st.session_state or url is not None:
        st.session_state[INTERACTIVE_KEY] = _interactive()
    on = st.toggle("Interactive charts", key=INTERACTIVE_KEY,
                   help="Hover for values, drag across a time chart to zoom every time chart, save a chart as "
                        f"PNG from its camera icon. Off: the same charts as pictures, drawn faster. Kept in the "
                        f"URL (`{state.CHARTS_PARAM}={state.CHARTS_ON}`): a reload or a link keeps it.")
    if note:
        st.warning(note)
    st.session_state[_INTERACTIVE_KEPT] = on
    want = state.CHARTS_ON if on else None
    if st.query_params.get(state.CHARTS_PARAM) != want:
        if want:
            st.query_params[state.CHARTS_PARAM] = want
        else:
            del st.query_params[state.CHARTS_PARAM]
    st.session_state[_CHARTS_SEEN] = want
    return on


def overview_pictures(c1, c2, series: pd.DataFrame, events: pd.DataFrame, win_h: float, unit: str,
                      x_range=None) -> None:
    """The overview's N(t) and events as static SVG (charts.svg_plot): the same data, titles and axes
    as the interactive figures (idle_series_chart, the events' bars), zoomed to x_range (epoch s)."""
    t = series["t_s"].to_numpy(dtype=float)
    if "min_nodes" in series:
        n_t = charts.svg_plot(U("Idle nodes N(t): mean per bin, shaded min to max", unit), "time (UTC)",
                              U("idle nodes", unit), steps=[(U("mean N(t)", unit), t, series["idle_nodes"], False)],
                              band=(t, series["min_nodes"], series["max_nodes"]), x_time=True, x_range=x_range,
                              width=480, height=300)
    else:
        n_t = charts.svg_plot(U("Idle nodes N(t)", unit), "time (UTC)", U("idle nodes", unit),
                              steps=[(None, t, series["idle_nodes"])], x_time=True, x_range=x_range,
                              width=480, height=300)
    c1.image(n_t, width="stretch")
    ev = charts.svg_plot(f"Events per {win_h:g} h", "window start (UTC)", "events",
                         bars=[("join events", events["t_s"], events["join_events"]),
                               ("leave events", events["t_s"], events["leave_events"])],
                         bar_width=3600.0 * float(win_h), x_time=True, x_range=x_range, width=480, height=300)
    c2.image(ev, width="stretch")


def metric(col, key: str, value: str, unit: str = "node", width="stretch") -> None:
    """st.metric with the glossary's label (unit in the label: the value is never cut off) and tooltip."""
    t = glossary.term(key)
    col.metric(U(f"{t.label} ({t.unit})", unit), value, help=U(glossary.help_for(key), unit), width=width)


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


_SUFFIX_UNITS = (("_per_h", " per hour"), ("_node_hours", " node-hours"), ("_hours", " (h)"), ("_s", " (s)"),
                 ("_h", " (h)"))
_WORDS = (("node_hours", "node-hours"), ("warmup", "warm-up"), ("lt_600s", "under 600 s"), ("frac_", "share_"),
          ("nodetime", "node-time"), ("min_hours", "minimum_hours"))


def _leaf(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def _is_time(key: str) -> bool:
    """An epoch-seconds field (a window's or warm-up's start/end): shown as a UTC time."""
    return _leaf(key) in ("start_s", "end_s")


def _is_share(key: str) -> bool:
    """A share in 0..1 (idle share, fraction of fragments): shown in %."""
    leaf = _leaf(key)
    return "share" in leaf or leaf.startswith("frac")


def figure_label(key: str) -> str:
    """A `planner fragments --json` key as people read it: the glossary's label and unit where it has
    one, else the key in words with its unit ("split.harvestable_node_hours" -> "split: harvestable
    node-hours", "warmup.start_s" -> "warm-up: start (UTC)", a share in %)."""
    t = glossary.term(key)
    if t is not None:
        return f"{t.label} ({t.unit})"
    words = key
    if _is_time(key):
        words = words[: -len("_s")] + " (UTC)"
    elif _is_share(key):
        words += " (%)"
    else:
        for suffix, text in _SUFFIX_UNITS:
            if words.endswith(suffix):
                words = words[: -len(suffix)] + text
                break
    for raw, text in _WORDS:
        words = words.replace(raw, text)
    return words.replace(".", ": ").replace("_", " ")


def _value_text(key: str, v) -> str:
    """One summary value for people: yes/no, a UTC time, a share in %, lists in words (no JSON)."""
    from planner.times import format_iso

    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        if not v:
            return "none"
        if all(isinstance(x, dict) for x in v):  # periods (outages): how many, the first ones
            def one(p):
                a, b = (format_iso(p[k], sep=" ", zone=" UTC", timespec="minutes") if isinstance(p.get(k), (int, float))
                        else str(p.get(k.removesuffix("_s"), "?")) for k in ("start_s", "end_s"))
                return f"{a} to {b} ({fmt_num(p.get('hours'))} h)" if "hours" in p else f"{a} to {b}"
            more = f"; {len(v) - 3} more (Outages CSV, above)" if len(v) > 3 else ""
            return f"{len(v)} period(s): " + "; ".join(one(p) for p in v[:3]) + more
        return ("; " if all(isinstance(x, str) for x in v) else ", ").join(
            _value_text(key, x) if not isinstance(x, (int, float)) else fmt_num(x) for x in v)
    if not isinstance(v, (int, float)):
        return str(v)
    t = glossary.term(key)
    if t is not None:
        return t.show(v)
    if _is_time(key):
        return format_iso(v, sep=" ", zone=" UTC", timespec="seconds")
    if _is_share(key) and 0 <= v <= 1:
        return fmt_num(100.0 * v, digits=3)
    return fmt_num(v, digits=4)


def numbers_table(s: dict, unit: str = "node") -> pd.DataFrame:
    """The summary flattened: a readable label (in the log's unit), the value printed for people (no raw
    floats, no JSON; a glossary figure scaled to its unit, e.g. a ratio in %; times in UTC) and the key
    of `planner fragments --json`, so the CLI's field is one look away."""
    import json

    flat = report.flatten(s)  # lists as JSON text: read back, then in words
    flat = {k: json.loads(v) if isinstance(v, str) and v[:1] == "[" else v for k, v in flat.items()}
    return pd.DataFrame({"figure": [U(figure_label(k), unit) for k in flat],
                         "value": [U(_value_text(k, v), unit) if isinstance(v, list) else _value_text(k, v)
                                   for k, v in flat.items()], "JSON key": list(flat)})


def operator_views(win: Window, kind: str = "jobs", unit: str = "node", time_zoom=None, tz: str = "UTC") -> None:
    """Hour x weekday, calendar days, holes, partitions, idle while waiting: whole machine, this window;
    the clock views on time zone `tz`'s wall clock (daylight saving time included)."""
    st.subheader("When and where the machine is idle")
    st.caption(U("The whole machine (all nodes of the log) over the window above; definitions in docs/views.md. "
                 "Every view sums to the window's idle node-hours.", unit))
    try:
        hw = data.cached_call(views.by_hour_weekday, win, tz=tz)
        days = data.cached_call(views.by_day, win, tz=tz)
        hol = data.cached_call(views.holes, win)
        part = data.cached_call(job_views.by_partition, win)
        wait = data.cached_call(job_views.idle_while_waiting, win)
    except InputError as e:
        st.error(md(str(e)))
        return
    c1, c2 = st.columns(2)
    _chart(c1, profile_charts.weekhour_heatmap(hw, tz), "idle_heat", unit)
    day_fig = charts.in_units(profile_charts.day_bars(days, tz), unit)
    if time_zoom is not None:  # calendar days on the chosen clock: the shared UTC range shifted to it
        t0 = time_zoom.lo if time_zoom.kind == "utc" else None  # (by the offset at the window's start)
        time_zoom.show(c2, day_fig, key="idle_days", offset_h=tz_offset_h(tz, t0))
    else:
        c2.plotly_chart(day_fig, key="idle_days", width="stretch")
    c1, c2 = st.columns(2)
    _chart(c1, profile_charts.holes_heatmap(hol), "idle_holes", unit)
    c1.caption(U("A hole of size k: a maximal interval with at least k nodes idle at once. A cell: the idle "
                 "node-hours a k-node job of that length could have used.", unit))
    if part is not None:
        _chart(c2, profile_charts.partition_bars(part), "idle_part", unit)
    elif kind == "node":
        c2.info("By partition or queue: a node-state log names no partitions (job logs do: SWF fields 15/16, "
                "sacct Partition, a job CSV's partition column).")
    else:
        c2.info("By partition or queue: this log names none (SWF fields 15/16 are -1, no sacct Partition or "
                "partition column), or its jobs lack the submit times the count-level split needs.")
    waiting_section(wait, kind, unit)
    by_label_section(win, unit)


BY_NAMES = {"user": "user", "group": "group (account)", "queue": "queue", "partition": "partition"}


def by_label_section(win: Window, unit: str = "node") -> None:
    """Idle and wait per user, group, queue or partition (planner.idle.job_views.by_label), where the
    log names them: a table (every row, CSV) and bars of the 20 largest."""
    offered = data.cached_call(job_views.labels_of, win.log)
    if not offered:
        return
    st.subheader("Idle and wait per " + ", ".join(BY_NAMES[b] for b in offered))
    by = st.radio("Group by", offered, horizontal=True, key="idle_by", format_func=BY_NAMES.get)
    try:
        df = data.cached_call(job_views.by_label, win, by=by)
    except InputError as e:
        st.error(md(str(e)))
        return
    if df is None:
        st.info(f"Per {BY_NAMES[by]}: this log's jobs lack the submit times the view needs.")
        return
    st.caption(U(f"Idle node-hours: each moment's idle nodes shared among the {BY_NAMES[by]}s of the jobs "
                 "waiting then, by requested nodes (harvestable capacity only; moments with no job waiting are "
                 "their own row). Used: the node-hours of their jobs in the window. Wait: submit to start of the "
                 "jobs that started in the window. The names are the log's (SWF: numbers).", unit))
    top = df[df["name"] != job_views.NO_WAIT].head(20)
    _chart(st, profile_charts.label_bars(top, BY_NAMES[by]), "idle_by_bars", unit)
    show = pd.DataFrame({
        BY_NAMES[by]: df["name"], "idle node-hours": df["idle_node_hours"].map(fmt_num),
        "share of idle": df["share"].map(lambda v: f"{100 * v:.1f} %"),
        "used node-hours": df["used_node_hours"].map(fmt_num), "jobs started": df["jobs_started"],
        "wait median (h)": df["wait_median_h"].map(fmt_num), "wait p95 (h)": df["wait_p95_h"].map(fmt_num),
        "wait mean (h)": df["wait_mean_h"].map(fmt_num)})
    st.dataframe(show.rename(columns=lambda c: U(c, unit)), hide_index=True, width="stretch", height=260,
                 column_config={BY_NAMES[by]: st.column_config.TextColumn(width="medium")})  # "(no job waiting)" whole
    st.download_button(f"Per {BY_NAMES[by]} (CSV)", df.to_csv(index=False).encode(), file_name=f"{win.log}-by-{by}.csv",
                       mime="text/csv", key="idle_dl_by", on_click="ignore")


def waiting_section(wait: dict | None, kind: str = "jobs", unit: str = "node") -> None:
    if wait is None:
        st.info("Idle while jobs waited: needs a job log with submit times ("
                + ("a node-state log has no jobs)." if kind == "node" else "this log has none)."))
        return
    cols = st.columns(3)
    for col, key in zip(cols, ("idle_while_waiting_node_hours", "idle_no_wait_node_hours")):
        metric(col, key, fmt_num(wait[key]), unit)
    cols[2].metric("hours with a job waiting (h)", fmt_num(wait["hours_with_jobs_waiting_h"]),
                   help="Hours of the window during which at least one job was submitted but not started.")
    _chart(st, profile_charts.waiting_bars(wait), "idle_wait", unit)


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
            v = data.cached_call(fragments.views, Window(name))
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


SPLIT_COLORS = {"allocated": "#4c78a8", "idle": "#54a24b", "down": "#e45756", "planned_down": "#f58518",
                "reserved": "#b279a2", "drained": "#9d755d", "warmup": "#bab0ac"}


def split_section(sp: dict, unit: str = "node", interactive: bool = True) -> None:
    """The idle split (planner.idle.split), as sreport splits a machine: a stacked bar of where the
    window's node-hours went (a Plotly figure, or `interactive` False a static SVG), the table of
    node-hours and shares, the outages and the warm-up."""
    import plotly.graph_objects as go

    from planner.idle import split as split_mod

    nh = sp["node_hours"]
    total = sp["total_node_hours"] or 1.0
    labels = {**split_mod.LABEL, split_mod.WARMUP: split_mod.LABEL_WARMUP}
    title = "Where the window's node-hours went (sreport's split), node-hours"
    if interactive:
        fig = go.Figure()
        for k in (*split_mod.STATES, split_mod.WARMUP):
            v = float(nh.get(k, 0.0))
            if v <= 0:
                continue
            fig.add_trace(go.Bar(y=["node-hours"], x=[v], name=labels[k], orientation="h",
                                 marker_color=SPLIT_COLORS[k],
                                 hovertemplate=f"{labels[k]}: %{{x:,.0f}} node-hours ({100 * v / total:.1f} %)"
                                               "<extra></extra>"))
        fig.update_layout(barmode="stack", height=190, margin=dict(l=10, r=10, t=40, b=10), title=title,
                          legend=dict(orientation="h", y=-0.35, traceorder="normal"))
        fig.update_yaxes(showticklabels=False)
        _chart(st, fig, "idle_split_bar", unit)
    else:  # the same bar as a static picture (no Plotly on the overview's first draw)
        st.image(charts.svg_share_bar([(U(labels[k], unit), float(nh.get(k, 0.0)), SPLIT_COLORS[k])
                                       for k in (*split_mod.STATES, split_mod.WARMUP)], U(title, unit),
                                      U("node-hours", unit)), width="stretch")
    rows = [{"category": labels[k], U("node-hours", unit): fmt_num(nh.get(k, 0.0)),
             "share (%)": f"{100 * float(nh.get(k, 0.0)) / total:.1f}",
             "harvestable": "yes" if (k == "idle" or (k == "planned_down" and sp["include_outages"])
                                      or (k == "warmup" and sp["include_warmup"])) else "no"}
            for k in (*split_mod.STATES, split_mod.WARMUP)]
    c1, c2 = st.columns([3, 2])
    # seven rows as a Markdown table: no table widget, whose code (Streamlit's DataFrame chunk and its
    # Arrow code, 1.2 MB) the overview's first load would otherwise fetch and compile (issue 25, speed)
    c1.markdown(md_table(rows))
    c1.caption("share: of the window's node-hours")
    src = {"states": "from the log's node states",
           "detected": f"outages detected: machine-wide periods of {sp['outage_min_hours']:g} h or more with no "
                       "job running"}.get(sp["source"], "a node log without states: no outage detection")
    share = sp.get("harvestable_share_of_idle")
    c2.markdown(U(
        f"**Harvestable: {fmt_num(sp['harvestable_node_hours'])} node-hours**"
        + (f" ({100 * share:.0f} % of the {fmt_num(sp['idle_node_hours'])} idle node-hours)"
           if share is not None else "")
        + f"  \nOutages: {fmt_num(sp['outage_node_hours'])} node-hours in {len(sp['outages'])} period(s), "
          f"{sp['outage_hours']:.1f} h ({src})."
        + (f"  \nWarm-up: the log's first {sp['warmup']['hours']:.1f} h "
           f"({100 * sp['warmup']['idle_share_during']:.0f} % "
           f"idle against {100 * sp['warmup']['idle_share_after']:.0f} % after), "
           f"{fmt_num(sp['warmup_node_hours'])} idle node-hours in this window."
           if sp.get("warmup") and sp["warmup"].get("detected") else "")
        + "".join(f"  \n_{n}_" for n in sp.get("notes", [])), unit))
    if sp["outages"]:
        od = pd.DataFrame([{"start (UTC)": o["start"], "end (UTC)": o["end"], "hours": f"{o['hours']:.1f}",
                            "reason": o["reason"], "jobs waiting through it": o["waiting_jobs"]}
                           for o in sp["outages"]])
        with st.expander(f"The {len(od)} outage(s) in this window"):
            st.dataframe(od, hide_index=True, width="stretch")
    po = sp.get("partition_outages") or []
    if po:
        pd_ = pd.DataFrame([{"partition": o["partition"], "start (UTC)": o["start"], "end (UTC)": o["end"],
                             "hours": f"{o['hours']:.1f}", "reason": o["reason"],
                             "its jobs waiting through it": o["waiting_jobs"]} for o in po])
        st.markdown(f"Partition-wide outages: {len(po)} period(s) of {sp['outage_min_hours']:g} h or more in "
                    "which a partition ran no job while the rest of the machine ran. Excluded from that "
                    "partition's harvestable node-hours (By partition, below); not from the machine's split "
                    "(a job log does not say how many nodes a partition has).")
        with st.expander(f"The {len(po)} partition-wide outage(s) in this window"):
            st.dataframe(pd_, hide_index=True, width="stretch")


def tz_offset_h(tz: str, t_s: float | None = None) -> float:
    """The offset of time zone `tz` from UTC in hours at epoch second t_s (now when None); 0 for an
    unknown zone; clipped to the clock's -12..14."""
    import time

    try:
        off = times.utc_offsets_s([time.time() if t_s is None else float(t_s)], tz)[0] / 3600.0
    except (InputError, ValueError, OverflowError):  # an unknown zone name, a time out of range
        return 0.0
    return float(min(max(off, -12.0), 14.0))


def viewer_tz() -> str:
    """The viewer's time zone (the browser's), else UTC."""
    try:
        tz = st.context.timezone
    except Exception:  # noqa: BLE001  (older Streamlit, or no browser: AppTest)
        tz = None
    return tz or "UTC"


def time_zone_select(container) -> str:
    """The page's clock: one time zone (IANA name) for every clock view of the Idle page (by day,
    week or month; hour x weekday; calendar days), the viewer's (the browser's) by default."""
    import zoneinfo

    zones = list(dict.fromkeys([viewer_tz(), "UTC", *sorted(zoneinfo.available_timezones())]))
    url_tz = st.query_params.get(state.TZ_PARAM)  # a reload or a shared link keeps the clock
    if url_tz and url_tz != st.session_state.get("_idle_tz_seen"):
        if url_tz in zones:
            st.session_state["idle_tz"] = url_tz
        else:
            st.warning(f"URL parameter {state.TZ_PARAM}={url_tz[:40]!r} ignored: not a time zone name "
                       "(e.g. Europe/Stockholm).")
    tz = container.selectbox("Time zone", zones, key="idle_tz",
                             help="The clock of the day, week, month and hour x weekday views: your browser's "
                                  "time zone by default; pick the machine's (e.g. America/Chicago) to read "
                                  "its local hours. Daylight saving time included. Kept in the URL (`tz`).")
    if st.query_params.get(state.TZ_PARAM) != tz:
        st.query_params[state.TZ_PARAM] = tz
    st.session_state["_idle_tz_seen"] = tz
    return tz


def period_section(win: Window, opts: dict, unit: str = "node", tz: str = "UTC") -> None:
    """Idle node-hours per day, week or month in time zone `tz` (planner.idle.split.by_period),
    harvestable against excluded, with a CSV download."""
    import plotly.graph_objects as go

    st.subheader("Idle by day, week or month")
    c = st.columns([2, 2, 3])
    period = c[0].radio("Group by", ["day", "week", "month"], index=1, horizontal=True, key="idle_period")
    try:
        from planner.idle import split

        d = data.cached_call(split.by_period, win, period=period, tz=tz, **opts)
    except InputError as e:
        st.error(md(str(e)))
        return
    # a date axis on the chosen clock (its ticks stay horizontal; a category axis of 50 weeks turned
    # its labels upright, under the legend), each bar at its period's start
    x = d["period"].dt.tz_localize(None)
    hover = "%{x|%Y-%m-%d}: %{y:,.1f} node-h<extra>%{fullData.name}</extra>"
    fig = go.Figure([go.Bar(x=x, y=d["harvestable_node_hours"], name="harvestable", marker_color="#54a24b",
                            hovertemplate=hover),
                     go.Bar(x=x, y=d["excluded_node_hours"], name="outages and warm-up (excluded)",
                            marker_color="#f58518", hovertemplate=hover)])
    fig.update_layout(barmode="stack", legend=dict(orientation="h", y=-0.25))
    fig = charts._layout(fig, f"Idle node-hours per {period} ({tz}; a {period} starts at its first day 00:00)",
                         f"{period} starting", "idle node-hours")
    fig.update_yaxes(tickformat=",")
    _chart(st, fig, "idle_period_bars", unit)
    out = d.assign(period=d["period"].astype(str))
    c[2].download_button(f"Download per {period} (CSV)", out.to_csv(index=False).encode(),
                         file_name=f"{win.log}-idle-per-{period}.csv", mime="text/csv", key="idle_period_csv",
                         on_click="ignore")


def downloads(log: str, series: pd.DataFrame, sp: dict | None, unit: str = "node", interactive: bool = True) -> None:
    """The Idle page's figures as CSV (every chart also saves as PNG from its camera icon)."""
    c = st.columns(3)
    csv = series.drop(columns=["time"], errors="ignore").to_csv(index=False).encode()
    c[0].download_button(U("N(t) idle nodes (CSV)", unit), csv, file_name=f"{log}-idle-series.csv", mime="text/csv",
                         key="idle_dl_series", on_click="ignore")
    if sp:
        rows = [{"category": k, "node_hours": v} for k, v in sp["node_hours"].items()]
        c[1].download_button("Idle split (CSV)", pd.DataFrame(rows).to_csv(index=False).encode(),
                             file_name=f"{log}-idle-split.csv", mime="text/csv", key="idle_dl_split", on_click="ignore")
        if sp["outages"]:
            c[2].download_button("Outages (CSV)", pd.DataFrame(sp["outages"]).to_csv(index=False).encode(),
                                 file_name=f"{log}-outages.csv", mime="text/csv", key="idle_dl_outages",
                                 on_click="ignore")
    st.caption("Each chart saves as PNG from the camera icon at its top right." if interactive else
               "Interactive charts (the toggle above): hover for values, drag to zoom, each chart saves as PNG "
               "from its camera icon.")


def show_log_warnings(log: str) -> None:
    """The warnings of the log's stored load report (busy nodes above the machine size, skipped
    rows, notes), wherever the log is used: they are stored with the log, so a refresh keeps them."""
    from appkit.uploads import report_view

    try:
        from planner import logs as planner_logs

        rep = data.cached_call(planner_logs.load_report, log)
    except (InputError, OSError):
        return
    view = report_view({**rep, "already_loaded": False, "warmup": None})
    w = view["skipped"] + view["warnings"]
    if w:
        with st.expander(f"{len(w)} warning(s) from loading {log}", icon=":material/warning:"):
            for x in w:
                st.markdown(f"- {x}")
