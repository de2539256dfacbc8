"""Logs: the shipped logs ready to pick, an uploader, the load report, the schema's tables."""

import streamlit as st

from appkit import data, state
from planner.errors import InputError

st.title("Logs")

sc, _ = state.current_scenario()
logs = data.list_all_logs()

st.subheader("Pick a log")
names = list(logs["name"]) if not logs.empty else []
if names:
    idx = names.index(sc["log"]) if sc["log"] in names else 0
    pick = st.selectbox("Log used by the Idle capacity and Planner pages", names, index=idx, key="logs_pick")
    if pick != sc["log"]:
        r = logs[logs["name"] == pick].iloc[0]
        state.store_scenario(state.adapt_to_log(sc, pick, r["start_s"], r["end_s"], int(r["nodes"])),
                             write_url=False)
show = [c for c in ("origin", "name", "kind", "format", "nodes", "machine_nodes_from", "rows",
                    "skipped", "start", "end", "node_identity") if c in logs.columns]
st.dataframe(logs[show] if show else logs, hide_index=True, width="stretch")
mine = list(logs.loc[logs["origin"] == "uploaded", "name"]) if not logs.empty else []
st.markdown("Your uploads in this session: " + (", ".join(f"`{n}`" for n in mine) if mine else "none yet."))

st.subheader("Upload a log")
st.caption("SWF job logs, node-state event logs (time,node,idle), Slurm `sacct -P` dumps or a job CSV "
           "with a column mapping; plain or .gz, up to 500 MB. Read by the same readers as the "
           "`planner ingest` command. Your upload is visible in your session only.")
c1, c2 = st.columns(2)
fmt = c1.selectbox("Format", ["auto", "swf", "nodestate", "slurm", "csv"], key="up_format")
machine = c2.number_input("Machine nodes (0 = from the header or the node set)", min_value=0, value=0,
                          step=1, key="up_machine")
mapping = None
if fmt == "csv":
    st.caption("Column names in your CSV (leave optional ones empty).")
    m1, m2, m3, m4, m5 = st.columns(5)
    mapping = {"start": m1.text_input("start", "start"), "end": m2.text_input("end", "end"),
               "nodes": m3.text_input("nodes", "nodes"), "node_list": m4.text_input("node list (optional)", ""),
               "submit": m5.text_input("submit (optional)", "")}
    mapping = {k: v.strip() for k, v in mapping.items() if v.strip()}
up = st.file_uploader("Log file", key="up_file")

done = st.session_state.setdefault("_uploads", {})  # file_id -> ("ok", report) | ("error", message)
if up is not None:
    key = f"{up.file_id}:{fmt}:{machine}:{sorted((mapping or {}).items())}"
    if key not in done:
        with st.spinner(f"Loading {up.name} ..."):
            try:
                report = data.upload(up.getvalue(), up.name, format=None if fmt == "auto" else fmt,
                                     machine_nodes=int(machine) or None, mapping=mapping)
                done[key] = ("ok", report)
            except InputError as e:
                done[key] = ("error", str(e))
        st.rerun()  # refresh the table above with the new log
    status, payload = done[key]
    if status == "error":
        st.error(payload)
    else:
        st.success(f"Loaded {payload.get('log')}: {payload.get('rows')} rows, {payload.get('nodes')} nodes.")
        st.json(payload, expanded=False)

st.subheader("Database tables")
try:
    from planner import db as _db

    con, _key = data.con_for_log(sc["log"])
    row = _db.log_row(con, sc["log"])
    counts = _db.table_counts(con, row["log_id"] if row else None)
    st.caption(f"Rows per table for log {sc['log']!r} (schema: docs/schema.md).")
    st.dataframe([{"table": k, "rows": v} for k, v in counts.items()], hide_index=True)
except InputError as e:
    st.error(str(e))
