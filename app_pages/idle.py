"""Idle capacity: N(t), fragment-length CDFs, events per 12 h, the numbers, the T_fwd suggestion."""

import numpy as np
import pandas as pd
import streamlit as st

from appkit import charts, data, report, state
from planner.errors import InputError

st.title("Idle capacity")

sc, _ = state.current_scenario()
logs = data.list_all_logs()
names = list(logs["name"]) if not logs.empty else [sc["log"]]

c = st.columns(4)
log = c[0].selectbox("Log", names, index=names.index(sc["log"]) if sc["log"] in names else 0, key="idle_log")
row = logs[logs["name"] == log].iloc[0] if not logs.empty and (logs["name"] == log).any() else None
whole = c[1].toggle("Whole log", value=False, key="idle_whole",
                    help="Characterize the whole log instead of the Planner's window")
start = c[2].text_input("Window start (UTC, ISO)", sc["start"] if log == sc["log"] else
                        (str(row["start"]) if row is not None else ""), key=f"idle_start_{log}", disabled=whole)
hours = c[3].number_input("Window length (h)", min_value=0.05, value=float(sc["hours"]), step=6.0,
                          key="idle_hours", disabled=whole)
max_nodes = int(row["nodes"]) if row is not None else 100_000
pool_size = st.slider("Pool size (nodes harvested: the first K nodes of the log)", 1, max_nodes,
                      min(int(sc["pool_size"]), max_nodes) if log == sc["log"] else max_nodes, key=f"idle_k_{log}")
if row is not None:
    st.caption(f"{log}: {row['kind']} log, {row['start']} to {row['end']} ({row['span_h']:.1f} h), "
               f"{max_nodes} nodes, node identity {row['node_identity']}.")

kw = dict(start=None if whole else start, hours=None if whole else float(hours), pool_size=int(pool_size))
try:
    s = data.log_query("summary", log, **kw)
    series = data.log_query("idle_series", log, max_points=3000, **kw)
    frags = data.log_query("fragment_lengths", log, **kw)
    events = data.log_query("events_per_window", log, **kw)
    tfwd = data.log_query("tfwd_distribution", log, **kw)
except InputError as e:
    st.error(str(e))
    st.stop()

if log == sc["log"] and not whole and (pool_size != sc["pool_size"] or start != sc["start"]
                                       or float(hours) != float(sc["hours"])):
    if st.button("Use this window and pool size in the Planner", key="idle_to_planner"):
        sc.update(start=start, hours=float(hours), pool_size=int(pool_size))
        state.store_scenario(sc, write_url=False)
        st.rerun()

fr = s.get("fragments", {})
m = st.columns(5)
m[0].metric("idle node-hours", f"{s['idle_node_hours']:,.0f} node-h")
m[1].metric("equivalent nodes (mean N)", f"{s['eq_nodes']:,.1f}")
m[2].metric("idle ratio", f"{100 * s['idle_ratio']:.1f} %")
m[3].metric("events per hour", f"{s['events'] / s['span_h']:,.1f}" if s.get("span_h") else "-")
m[4].metric("T_fwd suggestion", f"{s['tfwd_suggestion_s']:,.0f} s" if s.get("tfwd_suggestion_s") is not None else "-")

c1, c2 = st.columns(2)
band = {}
if "min_nodes" in series:
    band = {"min in bin": (series["t_s"], series["min_nodes"]), "max in bin": (series["t_s"], series["max_nodes"])}
fig = charts.step_lines({"N(t) idle nodes": (series["t_s"], series["idle_nodes"]), **band},
                        "Idle nodes N(t)", "idle nodes", "nodes",
                        dash={"min in bin": "dot", "max in bin": "dot"})
c1.plotly_chart(fig, key="idle_n", width="stretch")
fig = charts.cdf_lines({"by count": (frags["length_s"], frags["cdf_count"]),
                        "by node-time": (frags["length_s"], frags["cdf_nodetime"])},
                       "Fragment length CDF" + (" (derived node identity)" if fr.get("derived") else ""),
                       "fragment length (s)", "s", vline=600, vline_label="600 s")
c2.plotly_chart(fig, key="idle_cdf", width="stretch")
c1, c2 = st.columns(2)
fig = charts.bars(events["t_s"], {"join events": events["join_events"], "leave events": events["leave_events"]},
                  "Events per 12 h", "window start (UTC)", "events", "events", x_is_time=True)
c1.plotly_chart(fig, key="idle_ev", width="stretch")
vals = tfwd["tfwd_s"].to_numpy(dtype=float) if len(tfwd) else np.array([])
fig = charts.histograms({"time to next leave event": vals}, "T_fwd method: time from an event to the next leave event",
                        "time to next leave event (s)", "s", log_x=True)
if s.get("tfwd_suggestion_s"):
    fig.add_vline(x=float(np.log10(s["tfwd_suggestion_s"])), line_dash="dash", line_color="gray",
                  annotation_text="suggestion")
c2.plotly_chart(fig, key="idle_tfwd", width="stretch")

st.subheader("The numbers")
flat = report.flatten(s)
st.dataframe(pd.DataFrame({"figure": list(flat), "value": [str(v) for v in flat.values()]}),
             hide_index=True, width="stretch")
st.caption("T_fwd suggestion: from the distribution above, how long idle nodes stay before the next "
           "leave event (method in docs/data-formats.md).")

from appkit import survival_view  # noqa: E402  (issue 15: predicted idle time)

survival_view.render(log, int(pool_size))
