"""Start loading Plotly's code at a page's first output (issue 25, speed): Streamlit fetches its
4.7 MB Plotly chunk only when the first chart element arrives, after the page's script has
computed it; a page that draws charts asks for it at its top instead, so the chunk's download,
compile and start-up overlap the script run. The same module (the same URL) Streamlit imports
later: its import then resolves at once. Nothing when the chunk is not found (another Streamlit)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import streamlit as st


@functools.cache
def plotly_chunk() -> str | None:
    """The file name of Streamlit's Plotly chunk (static/js/PlotlyChart.<hash>.js), or None."""
    js = Path(st.__file__).parent / "static" / "static" / "js"
    found = sorted(p.name for p in js.glob("PlotlyChart.*.js")) if js.is_dir() else []
    return found[0] if len(found) == 1 else None


_JS = """<script>(() => {{
  if (window.__plotlyPreload) return;
  const idx = [...document.scripts].map(s => s.src).find(s => /static\\/js\\/index\\.[^/]*\\.js/.test(s));
  if (!idx) return;
  window.__plotlyPreload = import(new URL("./{name}", idx).href).catch(() => null);
}})();</script>"""


def start_plotly() -> None:
    """Ask the browser for Plotly's chunk now (once per browser tab)."""
    name = plotly_chunk()
    if name is None or os.environ.get("PLANNER_NO_PRELOAD"):  # (the env var: the benchmark's A/B only)
        return
    st.html(_JS.format(name=name), unsafe_allow_javascript=True)
