"""Logs: pick the log of every page, upload one (preview, options, Load), the load report,
the workspace (link, limits, remove a log), the schema's tables."""

from pathlib import Path

import streamlit as st

from appkit import data, session, state, tables, uploads, workspace
from appkit.uploads import md, show_upload_limit
from planner.errors import InputError

st.title("Logs")

sc, _ = state.current_scenario()
logs = data.list_all_logs()
wsd = session.ws_dir()
meta = workspace.read_meta(wsd)

st.subheader("Pick a log")
names = list(logs["name"]) if not logs.empty else []
if "_logs_pick_next" in st.session_state:  # set by a load or a removal (before the widget exists)
    st.session_state["logs_pick"] = st.session_state.pop("_logs_pick_next")
if names:
    if st.session_state.get("logs_pick") not in names:
        st.session_state["logs_pick"] = sc["log"] if sc["log"] in names else names[0]
    pick = st.selectbox("Log used by every page (Idle capacity, Planner, Compare)", names, key="logs_pick")
    if pick != sc["log"]:
        state.store_scenario(state.fit_to_log(sc, pick, prev_log=sc["log"]), write_url=False)
        sc, _ = state.current_scenario()
    # one rule for a job log's warm-up, the library's (planner.idle.split): excluded from harvestable
    # capacity on every page, windows start after it by default; the Idle page and the Planner
    # have the switch that counts it
    try:
        from planner.idle import split as _split

        wu = data.cached_call(_split.calendar, sc["log"]).warmup
    except (InputError, OSError):
        wu = None
    if wu is not None and wu.detected:
        st.info(f"{sc['log']} starts with a warm-up: its first {wu.hours:,.1f} h are "
                f"{100 * wu.idle_share_during:.0f} % idle only because the log does not know the jobs already "
                "running. Every page leaves it out of harvestable capacity and starts its windows after it; "
                "count it with \"Count the warm-up as harvestable\" (Idle capacity) or \"Include outages and "
                "warm-up\" (Planner).")
show = [c for c in ("origin", "name", "kind", "format", "nodes", "unit", "machine_nodes_from", "rows",
                    "skipped", "start", "end", "node_identity") if c in logs.columns]
# a few rows: a Markdown table, no table widget (its code is 1.7 MB of a first load: appkit.tables)
tables.scroll_wide()
st.markdown(tables.md_table(tables.log_rows(logs, show)))
mine = list(logs.loc[logs["origin"] == "uploaded", "name"]) if not logs.empty else []
st.markdown("Your uploads in this workspace: " + (", ".join(f"`{n}`" for n in mine) if mine else "none yet."))

st.subheader("Upload a log")
st.caption("SWF job logs, node-state event logs (time,node,idle), Slurm `sacct -P` dumps or a job CSV; "
           f"plain or .gz, up to {data.MAX_UPLOAD_BYTES / 2**20:,.0f} MiB. Choose the file, check the preview and "
           "the options, then press Load. Read by the same readers as `planner ingest`, in a worker process "
           "with a memory and time budget. The log is kept in this workspace (see below).")
up = st.file_uploader("Log file", key="up_file")
show_upload_limit("up_file", f"{data.MAX_UPLOAD_BYTES / 2**20:,.0f} MiB per file")
staged = st.session_state.get("_staged")
if staged is not None and not staged.get("loaded") and not Path(staged["path"]).exists():
    # removed meanwhile ("Remove staged uploads" in another tab of the link): not silent
    st.session_state["_up_refused"] = (staged["file_id"], f"The staged copy of {md(staged['name'])} was removed "
                                       "(\"Remove staged uploads\"): choose the file again.")
    staged = st.session_state["_staged"] = None
if up is None:
    uploads.drop_staged(staged)  # cleared or abandoned: its copy must not hold the workspace quota
    staged = st.session_state["_staged"] = None
elif st.session_state.get("_up_refused", (None,))[0] == up.file_id:  # refused before: its bytes are gone
    st.error(st.session_state["_up_refused"][1])
elif staged is None or staged["file_id"] != up.file_id:
    uploads.drop_staged(staged)
    try:
        path = data.stage_upload(up, wsd)  # written to disk while it arrived (appkit.upload_route)
        staged = st.session_state["_staged"] = {"file_id": up.file_id, "path": str(path), "name": up.name}
    except InputError as e:
        staged = st.session_state["_staged"] = None
        st.session_state["_up_refused"] = (up.file_id, uploads.form_error(str(e)))
        st.error(st.session_state["_up_refused"][1])
    finally:
        data.release_upload(up, "up_file")  # the server keeps no copy in memory: the page reads the staged file

if staged is not None and not staged.get("loaded"):
    from planner.logs import limits as _limits
    from planner.logs import registry as _registry

    probe = staged.get("probe")
    if probe is None:  # the preview and the format guess run in a worker, under a small budget
        if session.active_job("probe") is None:
            try:
                session.start_job("probe", "probe", {"upload": staged["path"], "user_filename": staged["name"]},
                                  mem_mb=uploads.PROBE_MEM_MB, time_s=uploads.PROBE_TIME_S, writes=False)
            except InputError as e:
                st.error(uploads.form_error(str(e)))
                probe = uploads.NO_PROBE
        out = session.follow_job("probe", "preview")
        if out is not None:
            if out.get("status") == "ok":
                probe = out["result"]
            else:
                session.show_failure(out, "preview")
                probe = uploads.NO_PROBE
        if probe is not None:
            staged = st.session_state["_staged"] = {**staged, "probe": probe}
    probe = probe or uploads.NO_PROBE
    lines, detected = probe["lines"], probe["detected"]
    st.caption(f"First lines of {md(staged['name'])}:")
    shown = "\n".join(lines)
    st.code(shown if shown.strip() else f"(no text in the first {uploads.PREVIEW_BYTES // 1024} KiB: blank lines only)",
            language=None)
    if probe.get("note"):
        st.warning(uploads.form_error(probe["note"]))
    c1, c2 = st.columns(2)
    fmts = ["auto", *_registry.FORMATS]
    fmt = c1.selectbox("Format", fmts, key="up_format",
                       format_func=lambda f: f"auto (detected: {detected or 'unknown'})" if f == "auto" else f)
    m1, m2 = c2.columns([2, 1])
    machine = m1.number_input("Machine size (nodes or GPUs; 0 = from the header, the node set or the most in use)",
                              min_value=0, max_value=_limits.MAX_MACHINE_NODES, value=0, step=1, key="up_machine")
    unit = m2.selectbox("Unit", ["node", "GPU"], key="up_unit",
                        format_func=lambda u: {"node": "nodes", "GPU": "GPUs (a GPU trace)"}[u],
                        help="What the job sizes and the machine size count. A GPU trace's node-hours are GPU-hours.")
    mapping = None
    if (detected if fmt == "auto" else fmt) == "csv":
        cols = uploads.csv_columns(lines)
        guess = uploads.guess_mapping(cols)
        st.caption("Job CSV: which of the file's columns hold what (optional ones may stay empty).")
        labels = {"start": "Start column", "end": "End column", "duration": "Duration column (s, instead of end)",
                  "nodes": "Nodes column", "node_list": "Node list column", "submit": "Submit column",
                  "job_id": "Job id column", "partition": "Partition / queue column"}
        mc = st.columns(len(labels))
        choice = {}
        for col, (k, label) in zip(mc, labels.items()):
            opts = [""] + cols
            default = "" if (k == "duration" and guess["end"]) else guess.get(k, "")
            choice[k] = col.selectbox(label, opts, index=opts.index(default) if default in opts else 0,
                                      key=f"up_map_{k}", format_func=lambda c: c or "(none)")
        if choice["end"] and choice["duration"]:
            choice["duration"] = ""
        t1, t2, t3 = st.columns([2, 2, 2])
        mode = t1.radio("Time columns", list(uploads.TIME_MODES), key="up_time_mode")
        origin = (t2.text_input("Time origin (UTC, ISO)", "", key="up_origin", placeholder="2020-07-01T00:00:00")
                  if "origin" in mode else "")
        skip = t3.checkbox("Skip rows with an empty start, end or nodes (counted per reason)", key="up_skip")
        mapping = uploads.csv_mapping(choice, mode, origin, skip)
    if st.button("Load", type="primary", key="up_load", disabled=session.active_job("ingest") is not None):
        taken = set(names)
        name = data.log_name_for(staged["name"], taken)
        try:
            session.start_job("ingest", "ingest", {
                "upload": staged["path"], "user_filename": staged["name"], "log_name": name,
                "quota_left_bytes": workspace.quota_left_bytes(wsd, Path(staged["path"]).stat().st_size),
                "out": str(workspace.log_file(wsd, name)), "format": None if fmt == "auto" else fmt,
                "machine_nodes": int(machine) or None, "mapping": mapping, "unit": unit})
        except InputError as e:
            st.error(uploads.form_error(str(e)))

outcome = session.follow_job("ingest", "load")
if outcome is not None:
    if outcome.get("status") == "ok":
        rep = outcome["result"]
        rep["source"] = staged["name"] if staged else None  # the user's file name, never a server path
        if staged:  # the log now lives in its DuckDB file: the uploaded copy goes (workspace quota)
            uploads.drop_staged(staged)
            st.session_state["_staged"] = {**staged, "loaded": True}
        if rep.get("warmup"):
            workspace.update_meta(wsd, warmup={**(meta.get("warmup") or {}), rep["log"]: rep["warmup"]})
        st.session_state["_load_report"] = rep
        logs = data.list_all_logs()
        state.store_scenario(state.fit_to_log(sc, rep["log"], prev_log=sc["log"]), write_url=False)
        st.session_state["_logs_pick_next"] = rep["log"]
        st.rerun()  # the table and the pick above show the new log
    st.session_state["_load_report"] = None
    if outcome.get("status") == "error":
        outcome = {**outcome, "message": uploads.form_error(outcome["message"])}
    session.show_failure(outcome, "load")
    # a failed load keeps the staged copy while the same file stays chosen, so that an option can be
    # fixed and Load pressed again (the server holds no other copy of its bytes); it is listed below,
    # counts against the quota, and goes when the file is cleared or replaced, or with "Remove staged
    # uploads", or once old at the next session
    if outcome.get("status") != "ok":
        out = workspace.log_file(wsd, data.log_name_for(staged["name"], set(names))) if staged else None
        if out is not None:  # a stopped worker's partial file
            (out.parent / f".{out.name}.loading").unlink(missing_ok=True)

rep = st.session_state.get("_load_report")
if rep:
    view = uploads.report_view(rep)
    st.success(view["headline"])
    for line in view["skipped"]:
        st.info(line, icon=":material/filter_alt:")
    for w in view["warnings"]:
        st.warning(w)
    with st.expander("Load report (raw)"):
        st.json(view["details"], expanded=False)

st.subheader("This workspace")
used = workspace.usage_bytes(wsd)
st.markdown(f"Everything you load or run is kept on the server in this workspace, named by the `ws=` part "
            f"of the page's address: **share the address** and a colleague sees the same logs and results. "
            f"Used {used / 2**20:,.1f} of {workspace.quota_bytes() / 2**20:,.0f} MiB; a workspace unused for "
            f"{workspace.idle_days():g} days is removed.")
if mine:
    c1, c2 = st.columns([3, 1])
    gone = c1.selectbox("Remove an uploaded log", mine, key="logs_remove_pick")
    if c2.button("Remove", key="logs_remove"):
        workspace.remove_log(wsd, gone)
        if sc["log"] == gone:
            state.store_scenario({**sc, "log": state.DEFAULTS["log"]}, write_url=False)
            st.session_state["_logs_pick_next"] = state.DEFAULTS["log"]
        st.rerun()

staged_now = workspace.staged_files(wsd)
if staged_now:
    c1, c2 = st.columns([3, 1])
    c1.caption(f"Staged uploads (received, not loaded): {len(staged_now)} file(s), "
               f"{sum(s for _, s, _ in staged_now) / 2**20:,.1f} MiB; they count against the quota and go when "
               "loaded, when the load fails, or after a refresh once they are "
               f"{workspace.staged_max_age_s() / 60:,.0f} min old.")
    if c2.button("Remove staged uploads", key="logs_drop_staged"):
        workspace.drop_staged_files(wsd)
        st.session_state["_staged"] = None
        st.rerun()

st.subheader("Database tables")
try:
    from planner.store import db as _db

    con, _key = data.con_for_log(sc["log"])
    row = _db.log_row(con, sc["log"])
    counts = _db.table_counts(con, row["log_id"] if row else None)
    st.caption(f"Rows per table for log {sc['log']!r} (schema: docs/schema.md).")
    st.markdown(tables.md_table([{"table": k, "rows": f"{v:,}"} for k, v in counts.items()]))
except InputError as e:
    st.error(md(str(e)))
