"""Helpers shared by the Streamlit pages (the library, planner/, imports no Streamlit).

state    scenario <-> URL query parameters and session state
data     shared read-only database, per-session uploads and upload database, cached queries
charts   Plotly figure builders: pure functions DataFrame -> go.Figure
runs     running a Planner scenario (allocator and baseline), headline numbers
compare  the Compare page's grid and result shaping
solver   the Solver page's live allocator benchmark (one row per decision)
report   CSV/Parquet exports (CSV-injection safe) and the self-contained HTML report
"""
