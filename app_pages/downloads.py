"""Downloads: the last Planner run as CSV and Parquet, and a self-contained HTML report."""

import streamlit as st

from appkit import charts, report
from appkit.runs import headline_table

st.title("Downloads")


def _table_row(name, df, key):
    c = st.columns([3, 1, 1])
    c[0].write(f"**{name}**: {len(df):,} rows x {len(df.columns)} columns")
    c[1].download_button("CSV", report.to_csv_bytes(df), file_name=f"{name}.csv", mime="text/csv",
                         key=f"dl_csv_{key}")
    c[2].download_button("Parquet", report.to_parquet_bytes(df), file_name=f"{name}.parquet",
                         mime="application/vnd.apache.parquet", key=f"dl_pq_{key}")


# the Compare and Solver pages' results of this session, if any
extra = {}
if st.session_state.get("cmp_grid") is not None:
    from appkit import data
    from planner import sweep

    out = data.session_dir() / "sweep.duckdb"
    if out.exists():
        extra["compare-grid"] = sweep.load_results(out, st.session_state["cmp_grid"]).drop(
            columns=["traceback"], errors="ignore")
if st.session_state.get("sv_result") is not None:
    extra["solver-benchmark"] = st.session_state["sv_result"]
if extra:
    st.subheader("Compare and Solver results")
    for name, df in extra.items():
        _table_row(name, df, name)

last = st.session_state.get("last_run")
if not last:
    st.info("No Planner run yet: run a scenario on the Planner page for its tables and the HTML report.")
    st.page_link("app_pages/planner.py", label="Go to the Planner", icon=":material/play_circle:")
    st.stop()

runs = last["runs"]
sc = last["scenario"]
st.write("Scenario of the last run: " + ", ".join(f"{k}={v}" for k, v in sc.items()))


def _html(runs) -> str:
    figs = charts.planner_figures(runs, window_h=float(sc["hours"]))
    heads = headline_table({k: r.summary for k, r in runs.items()})
    return report.html_report(f"Harvest planner: {sc['log']}, {sc['hours']:g} h from {sc['start']}", sc,
                              {k: r.summary for k, r in runs.items()}, figs,
                              tables={"Headline numbers (scaled)": heads})


# built once per run and kept in this session only
if st.session_state.get("_report_for") is not last:
    with st.spinner("Building the HTML report ..."):
        st.session_state["_report_html"] = _html(runs)
    st.session_state["_report_for"] = last
html = st.session_state["_report_html"]
st.download_button("HTML report (self-contained, works offline)", html.encode("utf-8"),
                   file_name="harvest-planner-report.html", mime="text/html", key="dl_html", type="primary")

st.subheader("Planner run: tables")
summaries = report.summary_frame({k: r.summary for k, r in runs.items()})
tables = {"summary": summaries}
for label, r in runs.items():
    for name in ("timeline", "trainers", "decisions", "preemptions"):
        df = getattr(r, name, None)
        if df is not None:
            tables[f"{name}-{label}"] = df
for name, df in tables.items():
    _table_row(name, df, name)
st.caption("CSV cells that start with = + - @ get a leading apostrophe so spreadsheets do not run "
           "them as formulas; Parquet keeps values as they are.")
