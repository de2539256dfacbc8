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

from appkit import nav, session  # noqa: E402

st.set_page_config(page_title="Harvest planner", page_icon=":material/grid_view:", layout="wide")

PAGES = [st.Page(p.path, title=p.title, icon=p.icon, default=p.path.endswith("home.py")) for p in nav.PAGES]

page = st.navigation(PAGES)
session.bind()
try:
    page.run()
finally:
    session.persist()
