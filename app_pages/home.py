"""Home: what the tool does, the loaded logs, links to each page."""

import streamlit as st

from appkit import data, nav, tables

st.title("Harvest planner")
st.markdown(
    "Plan elastic deep-learning training (**Trainers**) on the compute nodes a cluster's "
    "scheduler leaves idle. Load a real scheduler log, see how much idle capacity it has and "
    "in what fragments, then replay a window of it with an allocator (BFTrainer's MILP, an "
    "exact dynamic program, ModelArts' rolling-horizon MILP, greedy rules, equal share ...) "
    "and watch queueing time, utilization and solver time change."
)

links = [p for p in nav.PAGES if not p.path.endswith("home.py")]
cols = st.columns(2)  # two columns: each link's label whole at 1,280 px
for k, p in enumerate(links):
    cols[k * 2 // len(links)].page_link(p.path, label=f"{p.title}: {p.purpose}", icon=p.icon)

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
