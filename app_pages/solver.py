"""Solver: the allocator benchmark grid (Trainers J x pool size) live, build and solve times.

The grid runs in a worker process (progress, Cancel, a memory and time budget); its table is kept
in the workspace, so a refresh or the workspace's link shows it again."""

import streamlit as st

from appkit import charts, session, uploads
from appkit import solver as sv
from planner.errors import InputError

st.title("Solver")
st.caption("One allocation decision as in BFTrainer's Fig. 5: J ShuffleNet Trainers (Nmin 1, Nmax 64, "
           "Rup 18 s, Rdw 12 s) with random current maps on a pool of idle nodes, T_fwd 120 s. Every "
           "allocator solves the same instances; `dp` gives the exact optimum the others are measured against. "
           "The same grid, larger, is `planner bench allocators`.")

from planner import allocators  # noqa: E402

with st.container(border=True):
    c = st.columns(3)
    jobs = c[0].multiselect("Trainers J", [5, 10, 20, 30, 50, 100], default=list(sv.DEFAULT_JOBS), key="sv_jobs")
    pools = c[1].multiselect("Pool size (nodes)", [50, 100, 200, 400, 800, 1600], default=list(sv.DEFAULT_POOLS),
                             key="sv_pools")
    reps = c[2].number_input("Instances per cell", min_value=1, max_value=20, value=3, key="sv_reps")
    # a row of its own: every chosen allocator's name shows (four did not fit a quarter of the row)
    algs = st.multiselect("Allocators", allocators.names(), default=list(sv.DEFAULT_ALLOCATORS), key="sv_algs",
                          help="milp-node (BFTrainer's node-level MILP) is slow on big cells")
    time_limit = st.slider("Solver time limit per decision (s)", 1, 60, 10, key="sv_tl")

n = sv.decisions(jobs, pools, algs, int(reps))
worst = sv.worst_case_s(jobs, pools, algs, int(reps), float(time_limit))
st.caption(f"{n:,} decisions. " + (f"At most ~{worst:,.0f} s of solver time: each MILP decision may use its whole "
                                   "time limit; the others take milliseconds." if worst else
                                   "No MILP in the grid: seconds at most."))
busy = session.active_job("solver") is not None
if st.button("Run benchmark", type="primary", key="sv_run", disabled=n == 0 or busy):
    try:
        session.start_job("solver", "solver", {"jobs": [int(j) for j in jobs], "pools": [int(p) for p in pools],
                                              "allocators": list(algs), "reps": int(reps),
                                              "time_limit_s": float(time_limit), "ws_dir": str(session.ws_dir())})
    except InputError as e:
        st.error(uploads.form_error(str(e)))

outcome = session.follow_job("solver", "benchmark")
if outcome is not None:
    session.show_failure(outcome, "benchmark")

df = sv.load_result(session.ws_dir())
if df is None or df.empty:
    st.info(f"Press Run benchmark ({n} decisions on the chosen grid).")
    st.stop()

def _listed(col: str) -> str:
    return ", ".join(str(v) for v in sorted(df[col].unique()))


st.caption(f"Last benchmark of this workspace: {len(df):,} decisions (J {_listed('jobs')}; pools "
           f"{_listed('pool')}; {', '.join(df['allocator'].unique())}).")
summary = sv.summarize(df)
c1, c2 = st.columns(2)
c1.plotly_chart(charts.lines(df.assign(e2e_ms=df["e2e_s"] * 1000), "pool", "e2e_ms", "allocator",
                             "Time per decision vs pool size (mean over J and instances)", "pool size (nodes)",
                             "time per decision (ms)", "ms", log_y=True), key="sv_lines", width="stretch")
c2.plotly_chart(charts.lines(df.assign(e2e_ms=df["e2e_s"] * 1000), "jobs", "e2e_ms", "allocator",
                             "Time per decision vs Trainers J", "Trainers J", "time per decision (ms)", "ms",
                             log_y=True), key="sv_lines_j", width="stretch")
c1, c2 = st.columns(2)
c1.plotly_chart(charts.histograms({a: g["solve_s"] * 1000 for a, g in df.groupby("allocator", sort=False)},
                                  "Solve time histogram", "solve time (ms)", "ms", log_x=True),
                key="sv_hist_solve", width="stretch")
c2.plotly_chart(charts.histograms({a: g["build_s"] * 1000 for a, g in df.groupby("allocator", sort=False)},
                                  "Model build time histogram", "build time (ms)", "ms", log_x=True),
                key="sv_hist_build", width="stretch")
pick = st.selectbox("Heatmap of", sorted(df["allocator"].unique()), key="sv_heat_alloc")
st.plotly_chart(charts.heatmap(df[df["allocator"] == pick].assign(e2e_ms=lambda d: d["e2e_s"] * 1000),
                               "pool", "jobs", "e2e_ms", f"{pick}: mean time per decision", "pool size (nodes)",
                               "Trainers J", "time (ms)", "ms"), key="sv_heat", width="stretch")
st.subheader("Medians per cell")
st.dataframe(sv.summary_view(summary), hide_index=True, width="stretch")
