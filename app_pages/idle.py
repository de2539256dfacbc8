"""Idle capacity: N(t), fragment-length CDFs, events per 12 h (weekly beyond two months), the
T_fwd suggestion; the operator views (hour x weekday, calendar days, holes, partitions, idle
while waiting, logs side by side); the numbers. Starts on the whole log and the whole machine.
The headline numbers on every view; the sections one view at a time (the URL's `view`, default the
overview: the idle split, N(t) and the events; "all" draws every section)."""

import numpy as np
import pandas as pd
import streamlit as st

from appkit import charts, data, idle_views, preload, state, survival_view, zoom
from appkit.uploads import md
from planner.errors import InputError
from planner.idle import fragments
from planner.idle.window import Window
from planner.report import glossary

st.title("Idle capacity")
# Plotly's chunk loads while the page computes; the overview's first draw is static SVG (no Plotly):
# then only once the page is drawn (an "Interactive charts" click finds it in)
preload.start_plotly(when_drawn=idle_views.static_first())

sc, _ = state.current_scenario()
logs = data.list_all_logs()
names = list(logs["name"]) if not logs.empty else [sc["log"]]

c = st.columns(4)
log = c[0].selectbox("Log", names, index=names.index(sc["log"]) if sc["log"] in names else 0, key="idle_log")
row = logs[logs["name"] == log].iloc[0] if not logs.empty and (logs["name"] == log).any() else None
if st.session_state.get("_idle_zoom_log", log) != log:
    zoom.clear("idle")  # another log starts on its whole window (and the URL's from/to go)
st.session_state["_idle_zoom_log"] = log
if row is not None and log != sc["log"]:  # the log of every page (Logs): into the scenario and the URL, so a
    sc = state.fit_to_log(sc, log, prev_log=sc["log"])  # reload or a shared link opens this log again
    state.store_scenario(sc)
    state.show_log_notes()  # the window start and pool size moved into this log, each with its note
unit = data.unit_of(row)  # a GPU trace: every label reads GPUs, GPU-hours
whole = c[1].toggle("Whole log", value=True, key="idle_whole",
                    help="Characterize the whole log; off: the window below (the Planner's by default)")
start = c[2].text_input("Window start (UTC, ISO)", sc["start"] if log == sc["log"] else
                        (str(row["start"]) if row is not None else ""), key=f"idle_start_{log}", disabled=whole)
hours = c[3].number_input("Window length (h)", min_value=0.05, value=float(sc["hours"]), step=6.0,
                          key="idle_hours", disabled=whole)
max_nodes = int(row["nodes"]) if row is not None else 100_000
c = st.columns(2)
inc_out = c[0].toggle("Count outages as harvestable", value=False, key="idle_inc_out",
                      help="Machine-wide periods with no job running (maintenance, outages) are excluded "
                           "from harvestable capacity by default")
inc_warm = c[1].toggle("Count the warm-up as harvestable", value=False, key="idle_inc_warm",
                       help="A job log's first hours look idle only because the log starts empty")
pool_size = st.slider(glossary.in_units("Pool size (nodes harvested: the first K nodes of the log; default the whole "
                                        "machine)", unit),
                      1, max_nodes, max_nodes, key=f"idle_k_{log}")
idle_views.show_log_warnings(log)
if row is not None:
    st.caption(f"{log}: {row['kind']} log, {row['start']} to {row['end']} ({row['span_h']:.1f} h), "
               f"{max_nodes:,} {data.unit_word(row)}, node identity {row['node_identity']}."
               + (" A GPU trace: every \"node\" on this page is one GPU, and node-hours are GPU-hours."
                  if data.unit_word(row) == "GPUs" else ""))

# only what differs from the defaults (whole log, whole machine): the side-by-side section below
# asks for the same views of the whole log, and shares the cached result. The whole log starts
# after a warm-up the user excluded (Logs page), as on every page.
window = {} if whole else {"start": start, "hours": float(hours)}
opts = {}
if inc_out:
    opts["include_outages"] = True
if inc_warm:
    opts["include_warmup"] = True
try:
    win = Window(log, **window, pool_size=int(pool_size) if int(pool_size) != max_nodes else None)
    v = data.cached_call(fragments.views, win, **opts)  # one characterization; N(t) in 600 bins: readable over weeks
except InputError as e:
    st.error(md(str(e)))
    st.stop()
s, series, frags, events, tfwd, win_h = (v[k] for k in ("summary", "idle_series", "fragment_lengths",
                                                         "events_per_window", "tfwd_distribution", "window_h"))

if log == sc["log"] and not whole and (pool_size != sc["pool_size"] or start != sc["start"]
                                       or float(hours) != float(sc["hours"])):
    if st.button("Use this window and pool size in the Planner", key="idle_to_planner"):
        sc.update(start=start, hours=float(hours), pool_size=int(pool_size))
        state.store_scenario(sc, write_url=False)
        st.rerun()

fr = s.get("fragments", {})
excluded = [w for w, on in (("outages", not inc_out), ("the warm-up", not inc_warm)) if on]
st.caption("Every figure and chart on this page counts harvestable capacity only"
           + (glossary.in_units(f": {' and '.join(excluded)} excluded (shown as 0 idle nodes).", unit) if excluded else
              ": outages and warm-up included, as you chose."))
idle_views.headline(s, unit)
# one view at a time (the URL's `view`): the headline numbers above on every view, the rest on demand
view = idle_views.pick_view()
every = view == "all"

interactive = every or (view == "overview" and idle_views.interactive_toggle())
if (view == "overview" or every) and s.get("split"):
    idle_views.split_section(s["split"], unit, interactive=interactive)

# N(t), the events and the calendar days share one zoom (drag across any of them)
t0 = float(series["t_s"].iloc[0]) if len(series) else 0.0
time_zoom = zoom.TimeZoom("idle", t0, t0 + 3600.0 * float(s["span_h"]), "utc", window=log)
if view in ("overview", "where") or every:
    time_zoom.control(drag=interactive or view == "where")
if view == "overview" or every:
    c1, c2 = st.columns(2)
    if interactive:
        time_zoom.show(c1, charts.in_units(idle_views.idle_series_chart(series), unit), key="idle_n")
        fig = charts.bars(events["t_s"], {"join events": events["join_events"],
                                          "leave events": events["leave_events"]},
                          f"Events per {win_h:g} h", "window start (UTC)", "events", "events", x_is_time=True)
        charts.integer_ticks(fig, max([0, *events["join_events"], *events["leave_events"]]))
        time_zoom.show(c2, fig, key="idle_ev")
    else:  # the same two charts as pictures, on the shared zoom's range (the slider above sets it)
        rng = [pd.Timestamp(v).timestamp() for v in time_zoom.current()] if time_zoom.zoomed() else None
        idle_views.overview_pictures(c1, c2, series, events, win_h, unit, rng)
    idle_views.downloads(log, series, s.get("split"), unit, interactive)
if view == "fragments" or every:
    c1, c2 = st.columns(2)
    fig = charts.cdf_lines({"by count": (frags["length_s"], frags["cdf_count"]),
                            "by node-time": (frags["length_s"], frags["cdf_nodetime"])},
                           "Fragment length CDF" + (" (derived node identity)" if fr.get("derived") else ""),
                           "fragment length (s)", "s", vline=600, vline_label="600 s")
    c1.plotly_chart(charts.in_units(fig, unit), key="idle_cdf", width="stretch")
    vals = tfwd["tfwd_s"].to_numpy(dtype=float) if len(tfwd) else np.array([])
    fig = charts.histograms({"time to next leave event": vals},
                            "T_fwd method: time from an event to the next leave event",
                            "time to next leave event (s)", "s", log_x=True)
    if s.get("tfwd_suggestion_s"):
        fig.add_vline(x=float(np.log10(s["tfwd_suggestion_s"])), line_dash="dash", line_color="gray",
                      annotation_text="suggestion")
    c2.plotly_chart(fig, key="idle_tfwd", width="stretch")
    st.caption(glossary.in_units("T_fwd suggestion: from the distribution above, how long idle nodes stay before "
                                 "the next leave event (method in docs/data-formats.md).", unit))

if view in ("periods", "where") or every:  # one clock for the page's clock views
    tz = idle_views.time_zone_select(st.columns(4)[0])
if view == "periods" or every:
    idle_views.period_section(win, opts, unit, tz)
if view == "where" or every:
    idle_views.operator_views(Window(log, **window), kind=str(row["kind"]) if row is not None else "jobs",
                              unit=unit, time_zoom=time_zoom, tz=tz)
if view == "logs" or every:
    idle_views.compare_section(log, names)
if view == "numbers" or every:
    st.subheader("The numbers")
    st.dataframe(idle_views.numbers_table(s, unit), hide_index=True, width="stretch")
if view == "survival" or every:
    survival_view.render(log, int(pool_size), unit)

    from appkit import calibration_view  # (issue 24: calibrated probabilities)

    calibration_view.render(log, int(pool_size), unit)
