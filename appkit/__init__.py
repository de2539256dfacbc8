"""Helpers shared by the Streamlit pages (the library, planner/, imports no Streamlit).

state   scenario <-> URL query parameters and session state
data    shared database, per-session uploads, cached queries
charts  Plotly figure builders: pure functions DataFrame -> go.Figure
report  CSV/Parquet exports (CSV-injection safe) and the self-contained HTML report
"""
