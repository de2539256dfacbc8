"""Compare: a scenario grid (allocators x T_fwd x pool size x objective) from the sweep engine."""

import math

import streamlit as st

from appkit import charts, data, glossary, state
from appkit.compare import METRICS, grid_from_choices, result_frame
from planner.errors import InputError
from planner.sweep import MAX_CELLS

st.title("Compare")
st.caption("Runs a grid of Planner scenarios with the sweep engine (`planner sweep`, one process per "
           "cell) and shows each metric over the grid. Pick a cell to open it in the Planner.")

sc, _ = state.current_scenario()
from planner import allocators, workloads  # noqa: E402
from planner.allocators.base import OBJECTIVES  # noqa: E402

logs = data.list_all_logs()
shipped = list(logs.loc[logs["origin"] == "shipped", "name"]) if not logs.empty else []
with st.container(border=True):
    c = st.columns(4)
    log = c[0].selectbox("Log (shipped logs)", shipped or [sc["log"]],
                         index=(shipped.index(sc["log"]) if sc["log"] in shipped else 0), key="cmp_log")
    start = c[1].text_input("Window start (UTC, ISO)", sc["start"], key="cmp_start")
    hours = c[2].number_input("Horizon (h)", min_value=0.25, max_value=24.0 * 31, value=6.0, step=1.0, key="cmp_hours")
    # built-in workloads only: a free-text workload is a file path read on the server (e.g. /dev/zero)
    wl_names = workloads.names()
    workload = c[3].selectbox("Workload", wl_names, index=wl_names.index(sc["workload"]) if sc["workload"] in wl_names
                              else 0, key="cmp_workload")
    c = st.columns(4)
    allocs = c[0].multiselect("Allocators", allocators.names(), default=["dp", "equal-share"], key="cmp_allocs")
    tfwds = c[1].multiselect("T_fwd (s)", [30, 60, 120, 300, 600, 1800], default=[60, 120, 600], key="cmp_tfwd")
    sizes = c[2].multiselect("Pool size (nodes)", [128, 256, 512, 1024, 2048, 4608], default=[512, 1024],
                             key="cmp_sizes")
    objs = c[3].multiselect("Objective", list(OBJECTIVES), default=["throughput"], key="cmp_obj")
    workers = st.slider("Worker processes", 1, 4, 2, key="cmp_workers")

grid = grid_from_choices(dict(log=log, start=start, hours=float(hours), workload=workload,
                              pj_max=int(sc["pj_max"]), seed=int(sc["seed"]), db=data.shared_db_path()),
                         allocator=allocs, tfwd=tfwds, pool_size=sizes, objective=objs)
ncells = math.prod(len(v) for v in grid["grid"].values())  # an empty choice: no cells (the sweep refuses it)
st.write(f"{ncells} cells." if ncells else "No cells: pick at least one value in each box.")

out = data.session_dir() / "sweep.duckdb"
if st.button("Run grid", type="primary", key="cmp_run", disabled=ncells == 0 or ncells > MAX_CELLS):
    from planner import sweep

    bar = st.progress(0.0, text="starting workers ...")

    def cb(done, total, row):
        bar.progress(done / max(total, 1), text=f"{done} of {total} cells")

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        report = sweep.run_sweep(grid, out=out, executor="local", workers=int(workers), progress=cb)
        st.session_state["cmp_grid"] = grid
        bar.progress(1.0, text=f"done in {report.get('wall_s', 0):.1f} s: {report.get('ok', 0)} cells ran, "
                               f"{report.get('skipped', 0)} already in the results, {report.get('errors', 0)} failed")
    except InputError as e:
        bar.empty()
        st.error(str(e))

if "cmp_grid" in st.session_state and out.exists():
    from planner import sweep

    try:
        df = result_frame(sweep.load_results(out, st.session_state["cmp_grid"]))
    except InputError as e:
        st.error(str(e))
        df = None
    if df is not None and not df.empty:
        errors = df[df["status"] != "ok"]
        if len(errors):
            st.warning(f"{len(errors)} cell(s) failed: " + "; ".join(errors["error"].astype(str).head(3)))
        ok = df[df["status"] == "ok"]
        metric = st.selectbox("Metric", [m for m in METRICS if m in ok.columns],
                              format_func=lambda m: f"{METRICS[m][0]} ({METRICS[m][1]})", key="cmp_metric")
        label, unit = METRICS[metric]
        st.caption(f"{label} ({unit}): {glossary.definition(metric)}")
        c1, c2 = st.columns(2)
        c1.plotly_chart(charts.heatmap(ok, "tfwd", "pool_size", metric, f"{label}: mean over allocators/objectives",
                                       "T_fwd (s)", "pool size (nodes)", label, unit), key="cmp_heat", width="stretch")
        c2.plotly_chart(charts.lines(ok, "tfwd", metric, "allocator", f"{label} vs T_fwd", "T_fwd (s)",
                                     f"{label} ({unit})", unit, log_x=True), key="cmp_lines", width="stretch")
        for alloc, g in ok.groupby("allocator"):
            st.plotly_chart(charts.heatmap(g, "tfwd", "pool_size", metric, f"{label}: {alloc}", "T_fwd (s)",
                                           "pool size (nodes)", label, unit), key=f"cmp_heat_{alloc}", width="stretch")
        show = ["allocator", "tfwd", "pool_size", "objective", metric, "wall_s"]
        st.dataframe(ok[[c for c in show if c in ok.columns]], hide_index=True, width="stretch")
        opts = list(range(len(ok)))
        pick = st.selectbox("Cell to open in the Planner", opts, key="cmp_pick",
                            format_func=lambda i: ", ".join(f"{k}={ok.iloc[i][k]}" for k in
                                                            ("allocator", "tfwd", "pool_size", "objective")))
        if st.button("Open in Planner", key="cmp_open"):
            row = ok.iloc[int(pick)]
            state.open_in_planner({"log": log, "start": start, "hours": float(hours), "workload": workload,
                                   "allocator": row["allocator"], "tfwd": float(row["tfwd"]),
                                   "pool_size": int(row["pool_size"]), "objective": row["objective"]})
else:
    st.info("Choose the grid and press Run grid (the default grid has 12 cells of 6 h each).")
