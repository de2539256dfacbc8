"""Compare: a scenario grid (allocators x T_fwd x pool size x objective) from the sweep engine,
on any loaded log, in a worker process with a memory and time budget."""

import math

import streamlit as st

from appkit import charts, data, session, state, windows_view
from appkit.compare import last_grid, remember_grid, results_path
from appkit.uploads import md
from planner.errors import InputError
from planner.idle import fragments, warmup
from planner.idle.window import Window
from planner.replay import estimate
from planner.report import glossary
from planner.sweep import MAX_CELLS
from planner.sweep.compare import (
    AXIS,
    GRID_OPTIONS,
    METRICS,
    TFWD_CHOICES,
    averaged_over,
    cell_text,
    column_titles,
    default_hours,
    default_pool_sizes,
    failed_cells,
    grid_from_choices,
    ok_cells,
    pool_choices,
    result_frame,
)

st.title("Compare")
st.caption("Runs a grid of Planner scenarios with the sweep engine (`planner sweep`, one process per "
           "cell) and shows each metric over the grid, in the Planner's units. Pick a cell to open it in the Planner.")

sc, _ = state.current_scenario()
from planner import allocators  # noqa: E402
from planner.allocators.base import OBJECTIVES  # noqa: E402
from planner.workload import generators

logs = data.list_all_logs()
names = list(logs["name"]) if not logs.empty else [sc["log"]]
with st.container(border=True):
    c = st.columns(4)
    log = c[0].selectbox("Log", names, index=names.index(sc["log"]) if sc["log"] in names else 0, key="cmp_log")
    row = logs[logs["name"] == log].iloc[0] if not logs.empty and (logs["name"] == log).any() else None
    nodes = int(row["nodes"]) if row is not None else int(sc["pool_size"])
    unit = data.unit_of(row)  # a GPU trace: labels read GPUs
    span_h = float(row["span_h"]) if row is not None else 24.0
    # the grid's defaults follow the log (keys per log: choosing another log resets them)
    # another log's grid starts after its warm-up (planner.idle.split): a window in the warm-up has
    # nothing to compete for, and outages give no idle nodes (harvestable capacity only)
    start_default = sc["start"] if log == sc["log"] else (
        state.iso_utc(row["start_s"]) if row is not None else sc["start"])
    if log != sc["log"] and row is not None:  # after a detected warm-up: it has nothing to compete for
        start_default = state.iso_utc(warmup.default_start_s(row["start_s"], data.warmup_detections().get(log)))
    if log != sc["log"] and row is not None and "harvest_start_s" in row:  # after the warm-up (planner.idle.split)
        start_default = state.iso_utc(max(float(row["harvest_start_s"]), float(state.parse_time(start_default))))
    start = c[1].text_input("Window start (UTC, ISO)", start_default, key=f"cmp_start_{log}")
    hours = c[2].number_input("Horizon (h)", min_value=0.25, max_value=24.0 * 31, value=default_hours(span_h),
                              step=1.0, key=f"cmp_hours_{log}")
    # built-in workloads only: a free-text workload is a file path read on the server (e.g. /dev/zero)
    wl_names = generators.names()
    workload = c[3].selectbox("Workload", wl_names, index=wl_names.index(sc["workload"]) if sc["workload"] in wl_names
                              else 0, key="cmp_workload")
    c = st.columns(4)
    allocs = c[0].multiselect("Allocators", allocators.names(), default=["dp", "equal-share"], key="cmp_allocs")
    tfwds = c[1].multiselect(AXIS["tfwd"].title, list(TFWD_CHOICES), default=[60, 120, 600], key="cmp_tfwd")
    sizes = c[2].multiselect(glossary.in_units(AXIS["pool_size"].title.capitalize(), unit), pool_choices(nodes),
                             default=default_pool_sizes(nodes), key=f"cmp_sizes_{log}",
                             help=glossary.in_units(f"{log} has {nodes:,} nodes", unit))
    objs = c[3].multiselect("Objective", list(OBJECTIVES), default=["throughput"], key="cmp_obj")
    workers = st.slider("Worker processes", 1, 4, 2, key="cmp_workers",
                        help="Asked for: the grid gets what the server's and your process caps leave free "
                             "(at least 1), and they count against those caps while it runs")

from appkit import idle_views  # noqa: E402

idle_views.show_log_warnings(log)
grid = grid_from_choices(dict(log=log, start=start, hours=float(hours), workload=workload,
                              pj_max=int(sc["pj_max"]), seed=int(sc["seed"]), db=data.db_path_for_log(log)),
                         allocator=allocs, tfwd=tfwds, pool_size=sizes, objective=objs)
ncells = math.prod(len(v) for v in grid["grid"].values())  # an empty choice: no cells (the sweep refuses it)
cells = [{"allocator": a, "pool_size": p} for a in allocs for p in sizes for _ in tfwds for _ in objs]
try:
    summary = data.cached_call(fragments.summary, Window(log, start=start, hours=float(hours)))
except InputError:
    summary = None
est = (estimate.sweep_estimate(cells, float(hours), summary["events"] if summary else None, int(workers),
                               int(sc["pj_max"]), window_summary=summary) if ncells else None)
st.write((f"{ncells} cells. " + est.text) if ncells else "No cells: pick at least one value in each box.")
if ncells > MAX_CELLS:
    st.warning(f"{ncells} cells is more than the {MAX_CELLS} a grid may have here (the sweep engine's cap): "
               "pick fewer values, or run the grid with `planner sweep --max-cells`.")



def many_windows() -> None:
    """The grid's allocators over many windows of the log, paired per window (the Planner's
    many-window component, appkit.windows_view), at one T_fwd and pool size of the grid."""
    st.divider()
    c = st.columns(3)
    tf = c[0].selectbox("T_fwd for the windows (s)", tfwds or [sc["tfwd"]], key="cw_tfwd")
    ps = c[1].selectbox("Pool size for the windows", sizes or [sc["pool_size"]], key=f"cw_size_{log}")
    ob = c[2].selectbox("Objective for the windows", objs or [sc["objective"]], key="cw_obj")
    wsc = {**sc, "log": log, "start": start, "hours": float(hours), "workload": workload, "pool": "log",
           "tfwd": float(tf), "pool_size": int(ps), "objective": ob}
    windows_view.render(wsc, allocators=allocs, name="compare", key="cw",
                        where=glossary.in_units(f"the grid's; T_fwd {float(tf):g} s, {int(ps):,} nodes, {ob}", unit))


wsd = session.ws_dir()
out = results_path(wsd)
if st.button("Run grid", type="primary", key="cmp_run",
             disabled=ncells == 0 or ncells > MAX_CELLS or session.active_job("sweep") is not None):
    try:
        out.unlink(missing_ok=True)  # a new grid: the old cells do not mix in
        # the grid's worker processes count against the server's and the user's process caps (appkit.worker)
        session.start_job("sweep", "sweep", {"grid": grid, "out": str(out)}, procs=int(workers))
        remember_grid(wsd, grid)
    except InputError as e:
        st.error(md(str(e)))
outcome = session.follow_job("sweep", "grid")
if outcome is not None and not session.show_failure(outcome, "grid"):
    rep = outcome.get("result") or {}
    st.caption(f"Done in {outcome['wall_s']:.1f} s: {rep.get('ok', 0)} cells ran, {rep.get('errors', 0)} failed.")

saved = last_grid(wsd)
if saved is not None:
    from planner import sweep

    try:
        df = result_frame(sweep.load_results(out, saved))
    except InputError as e:
        st.error(md(str(e)))
        df = None
    if df is not None and not df.empty:
        base = saved["base"]
        st.subheader(f"Results on {base['log']}, {float(base['hours']):g} h from {base['start']} UTC")
        bad = failed_cells(df)
        if len(bad):
            st.warning(f"{len(bad)} of {len(df)} cell(s) failed or had nothing to replay; their reasons:")
            st.dataframe(bad, hide_index=True, width="stretch")
        ok = ok_cells(df)
        shown = [m for m in METRICS if m in ok.columns]
        if ok.empty or not shown:
            st.info("No cell produced numbers to draw.")
            many_windows()
            st.stop()
        metric = st.selectbox("Metric", shown, key="cmp_metric",
                              format_func=lambda m: f"{glossary.term(m).label} ({glossary.term(m).unit})")
        label, unit = glossary.term(metric).label, glossary.term(metric).unit
        st.caption(f"{label} ({unit}): {glossary.definition(metric)}")
        gunit = data.log_unit(base["log"])  # the grid's log (may differ from the form's)
        tf, ps = AXIS["tfwd"].title, glossary.in_units(AXIS["pool_size"].title, gunit)
        # one heatmap per allocator (never averaged across allocators), all on one colour scale:
        # a colour is the same value in each
        zs = ok.groupby(["allocator", "tfwd", "pool_size"])[metric].mean()
        zrange = (float(zs.min()), float(zs.max())) if len(zs) else None
        groups = list(ok.groupby("allocator", sort=False))
        for i in range(0, len(groups), 2):
            cols = st.columns(2)
            for col, (alloc, g) in zip(cols, groups[i:i + 2]):
                col.plotly_chart(charts.in_units(charts.heatmap(
                    g, "tfwd", "pool_size", metric,
                    f"{label}: {alloc} ({averaged_over(g, ('tfwd', 'pool_size', 'allocator'))})",
                    tf, ps, label, unit, zrange=zrange), gunit),
                    key=f"cmp_heat_{alloc}", width="stretch")
        st.caption(f"One colour scale for every allocator: {charts.fmt_num(zrange[0]) if zrange else ''} to "
                   f"{charts.fmt_num(zrange[1]) if zrange else ''} {unit}.")
        st.plotly_chart(charts.in_units(charts.lines(
            ok, "tfwd", metric, "allocator", f"{label} vs T_fwd ({averaged_over(ok, ('tfwd', 'allocator'))})", tf,
            f"{label} ({unit})", unit, log_x=True), gunit), key="cmp_lines", width="stretch")
        show = list(dict.fromkeys([*GRID_OPTIONS] + [
            m for m in ("utilization_efficiency", metric, "wall_s") if m in ok.columns]))
        titles = {c: glossary.in_units(column_titles(show).get(c, c), gunit) for c in show}
        fmts = {titles[m]: (lambda v, f=glossary.term(m).fmt: "-" if v is None or math.isnan(v) else f"{v:{f}}")
                for m in show if glossary.term(m) is not None}  # as the glossary prints each metric
        st.dataframe(ok[show].rename(columns=titles).style.format(fmts), hide_index=True, width="stretch")
        opts = list(range(len(ok)))
        pick = st.selectbox("Cell to open in the Planner", opts, key="cmp_pick",
                            format_func=lambda i: cell_text(ok.iloc[i]))
        if st.button("Open in Planner", key="cmp_open"):
            row = ok.iloc[int(pick)]
            state.open_in_planner({"log": base["log"], "start": base["start"], "hours": float(base["hours"]),
                                   "workload": base["workload"], "allocator": row["allocator"],
                                   "tfwd": float(row["tfwd"]), "pool_size": int(row["pool_size"]),
                                   "objective": row["objective"]})
else:
    st.info("Choose the grid and press Run grid (the default grid: dp and equal share, three T_fwd, pool sizes "
            "where Trainers compete on this log).")
many_windows()
