"""Downloads: everything in one archive; the last Planner run as CSV and Parquet tables; a
self-contained HTML report. No server paths in any export.

Files are built when their button is clicked (Streamlit's deferred `data`), not on every rerun:
a rerun reads the workspace's Compare and Solver tables and lists every table; the export
(private columns dropped, paths cut, CSV or Parquet encoding) happens on click, and a session
holds no export bytes it did not ask for.
"""

import json

import streamlit as st

from appkit import charts, compare, nav, report, session, solver, state
from planner.report.headline import headline_table

st.title("Downloads")


def _table_row(name, df, key):
    c = st.columns([3, 1, 1])
    cols = sum(1 for col in df.columns if col not in report.PRIVATE_COLUMNS)
    c[0].write(f"**{name}**: {len(df):,} rows x {cols} columns")
    c[1].download_button("CSV", lambda: report.to_csv_bytes(report.export_frame(df)), file_name=f"{name}.csv",
                         mime="text/csv", key=f"dl_csv_{key}", on_click="ignore")
    c[2].download_button("Parquet", lambda: report.to_parquet_bytes(report.export_frame(df)),
                         file_name=f"{name}.parquet",
                         mime="application/vnd.apache.parquet", key=f"dl_pq_{key}", on_click="ignore")


# the Compare and Solver pages' results of this session, if any
extra = {}
wsd = session.ws_dir()
if (grid := compare.last_grid(wsd)) is not None:
    from planner import sweep

    extra["compare-grid"] = sweep.load_results(compare.results_path(wsd), grid)
if (bench := solver.load_result(wsd)) is not None:
    extra["solver-benchmark"] = bench

last = st.session_state.get("last_run")
tables = {}
if last:
    runs = last["runs"]
    sc = {k: v for k, v in last["scenario"].items() if k in state.FIELDS}

    def _html() -> bytes:
        """The HTML report of the last run, built on first use and kept with the run."""
        if "report_html" not in last:
            figs = {name: report.style_runs(fig, list(runs))
                    for name, fig in charts.planner_figures(runs, window_h=float(sc["hours"])).items()}
            heads = headline_table({k: r.summary for k, r in runs.items()})
            # the metrics once: the headline table in the Planner's units (all raw metrics are in the archive)
            last["report_html"] = report.html_report(
                f"Harvest planner: {sc['log']}, {sc['hours']:g} h from {sc['start']}", sc, {}, figs,
                tables={"Headline numbers": heads}).encode("utf-8")
        return last["report_html"]

    tables["summary"] = report.summary_frame({k: r.summary for k, r in runs.items()})
    for label, r in runs.items():
        for name in ("timeline", "trainers", "decisions", "preemptions"):
            df = getattr(r, name, None)
            if df is not None:
                tables[f"{name}-{label}"] = df

if not last and not extra:
    st.info("Nothing to download yet: run a scenario on the Planner page (or a grid on Compare, a benchmark "
            "on Solver).")
    st.page_link("app_pages/planner.py", label="Go to the Planner", icon=nav.page("app_pages/planner.py").icon)
    st.stop()


def _archive() -> bytes:
    files = {"scenario.json": json.dumps(sc, indent=2).encode(), "harvest-planner-report.html": _html()} if last else {}
    return report.export_archive({**tables, **extra}, files)


st.download_button("Everything in one archive (zip: report, scenario, every table as CSV and Parquet)",
                   _archive, file_name="harvest-planner.zip", mime="application/zip",
                   key="dl_zip", type="primary", icon=":material/folder_zip:", on_click="ignore")

if last:
    st.markdown("Scenario of the last run (the fields of `scenario.json` in the archive; unset ones, which take the "
                "workload's own value, left out):")
    st.code("  ".join(f"{k}={v}" for k, v in sc.items() if v is not None), language=None, wrap_lines=True)
    st.download_button("HTML report (self-contained, works offline)", _html,
                       file_name="harvest-planner-report.html", mime="text/html", key="dl_html", on_click="ignore")
    st.subheader("Planner run: tables")
    for name, df in tables.items():
        _table_row(name, df, name)
if extra:
    st.subheader("Compare and Solver results")
    for name, df in extra.items():
        _table_row(name, df, name)
st.caption("CSV cells that start with = + - @ get a leading apostrophe so spreadsheets do not run "
           "them as formulas; Parquet keeps values as they are. No export holds a path of the server. "
           "Each file is built when you click its button.")
