"""Home: what the tool does, the loaded logs, links to each page."""

import streamlit as st

from appkit import data, tables

st.title("Harvest planner")
st.markdown(
    "Plan elastic deep-learning training (**Trainers**) on the compute nodes a cluster's "
    "scheduler leaves idle. Load a real scheduler log, see how much idle capacity it has and "
    "in what fragments, then replay a window of it with an allocator (BFTrainer's MILP, an "
    "exact dynamic program, ModelArts' rolling-horizon MILP, greedy rules, equal share ...) "
    "and watch queueing time, utilization and solver time change."
)

cols = st.columns(2)  # two columns: each link's label whole at 1,280 px
with cols[0]:
    st.page_link("app_pages/logs.py", label="Logs: pick or upload a log", icon=":material/upload_file:")
    st.page_link("app_pages/idle.py", label="Idle capacity: N(t), fragments, T_fwd", icon=":material/area_chart:")
    st.page_link("app_pages/planner.py", label="Planner: replay a window with an allocator",
                 icon=":material/play_circle:")
with cols[1]:
    st.page_link("app_pages/compare.py", label="Compare: sweep grids", icon=":material/grid_on:")
    st.page_link("app_pages/solver.py", label="Solver: allocator benchmark", icon=":material/speed:")
    st.page_link("app_pages/downloads.py", label="Downloads: CSV, Parquet, HTML report", icon=":material/download:")

st.subheader("Loaded logs")
logs = data.list_all_logs()
if logs.empty:
    st.info("No logs loaded yet.")
else:
    show = [c for c in ("origin", "name", "kind", "format", "nodes", "unit", "rows", "start", "end",
                        "span_h", "node_identity") if c in logs.columns]
    # a few rows: a Markdown table, no table widget (its code is 1.7 MB of a first load: appkit.tables)
    tables.scroll_wide()
    st.markdown(tables.md_table(tables.log_rows(logs, show)))
st.caption("Shipped logs are shared read-only. Your uploads and runs are kept on the server in your workspace: "
           "the `ws=` part of this page's address names it, so a refresh keeps them and whoever you send the "
           "address to sees the same (details and limits on the Logs page).")
