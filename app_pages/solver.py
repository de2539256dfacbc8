"""Solver: the allocator benchmark grid (Trainers J x pool size) live, build and solve times."""

import streamlit as st

from appkit import charts
from appkit.solver import DEFAULT_ALLOCATORS, DEFAULT_JOBS, DEFAULT_POOLS, run_grid, summarize

st.title("Solver")
st.caption("One allocation decision as in BFTrainer's Fig. 5: J ShuffleNet Trainers (Nmin 1, Nmax 64, "
           "Rup 18 s, Rdw 12 s) with random current maps on a pool of idle nodes, T_fwd 120 s. Every "
           "allocator solves the same instances; `dp` gives the exact optimum the others are measured against. "
           "The same grid, larger, is `planner bench allocators`.")

from planner import allocators  # noqa: E402

with st.container(border=True):
    c = st.columns(4)
    jobs = c[0].multiselect("Trainers J", [5, 10, 20, 30, 50, 100], default=list(DEFAULT_JOBS), key="sv_jobs")
    pools = c[1].multiselect("Pool size (nodes)", [50, 100, 200, 400, 800, 1600], default=list(DEFAULT_POOLS),
                             key="sv_pools")
    algs = c[2].multiselect("Allocators", allocators.names(), default=list(DEFAULT_ALLOCATORS), key="sv_algs",
                            help="milp-node (BFTrainer's node-level MILP) is slow on big cells")
    reps = c[3].number_input("Instances per cell", min_value=1, max_value=20, value=3, key="sv_reps")
    time_limit = st.slider("Solver time limit per decision (s)", 1, 60, 10, key="sv_tl")

n = len(jobs) * len(pools) * len(algs) * int(reps)
if st.button("Run benchmark", type="primary", key="sv_run", disabled=n == 0):
    bar = st.progress(0.0, text="warming up (imports, first solves) ...")
    df = run_grid(jobs, pools, algs, int(reps), float(time_limit),
                  progress=lambda f, text: bar.progress(min(f, 1.0), text=text))
    bar.progress(1.0, text=f"done: {len(df)} decisions")
    st.session_state["sv_result"] = df

df = st.session_state.get("sv_result")
if df is None or df.empty:
    st.info(f"Press Run benchmark ({n} decisions on the chosen grid).")
    st.stop()

summary = summarize(df)
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
st.dataframe(summary, hide_index=True, width="stretch")
