"""Harvest planner: the Streamlit entry point (`streamlit run app.py`).

Navigation, and the session's workspace around every page: appkit.session.bind() before the
page (the URL's workspace token, scenario and result; warnings for what a link names but the
server does not have) and persist() after it. Each page is a thin file under app_pages/ that
reads session state, calls the planner library and draws with appkit.charts. (Not pages/: a
folder of that name next to app.py switches Streamlit to its old file-based navigation.)
"""

import streamlit as st

from appkit import nodelay, upload_route

upload_route.install()  # uploads go to disk as they arrive: first, before the heavy imports below
nodelay.install()  # the server's connections without Nagle's algorithm (a page's chunks ~45 ms each without)

from appkit import session  # noqa: E402

st.set_page_config(page_title="Harvest planner", page_icon=":material/grid_view:", layout="wide")

PAGES = [
    st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("app_pages/logs.py", title="Logs", icon=":material/upload_file:"),
    st.Page("app_pages/idle.py", title="Idle capacity", icon=":material/area_chart:"),
    st.Page("app_pages/planner.py", title="Planner", icon=":material/play_circle:"),
    st.Page("app_pages/compare.py", title="Compare", icon=":material/grid_on:"),
    st.Page("app_pages/solver.py", title="Solver", icon=":material/speed:"),
    st.Page("app_pages/live.py", title="Live", icon=":material/sensors:"),
    st.Page("app_pages/papers.py", title="Papers", icon=":material/menu_book:"),
    st.Page("app_pages/downloads.py", title="Downloads", icon=":material/download:"),
]

page = st.navigation(PAGES)
session.bind()
try:
    page.run()
finally:
    session.persist()
