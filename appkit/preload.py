"""Start loading Plotly's code at a page's first output (issue 25, speed): Streamlit fetches its
4.7 MB Plotly chunk only when the first chart element arrives, after the page's script has
computed it; a page that draws charts asks for it at its top instead, so the chunk's download,
compile and start-up overlap the script run. The same module (the same URL) Streamlit imports
later: its import then resolves at once. Nothing when the chunk is not found (another Streamlit)."""

from __future__ import annotations

import functools
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
  const go = () => {{ window.__plotlyPreload = window.__plotlyPreload
    || import(new URL("./{name}", idx).href).catch(() => null); }};
  if (!{when_drawn}) return go();
  let quiet = 0;  // after the page is drawn: no running script, no element whose code still loads, 0.5 s
  const t = setInterval(() => {{
    const busy = document.querySelector('[data-testid="stStatusWidgetRunningIcon"], [data-testid="stSkeleton"]');
    quiet = busy ? 0 : quiet + 1;
    if (quiet >= 2 || window.__plotlyPreload) {{ clearInterval(t); go(); }}
  }}, 250);
}})();</script>"""


def start_plotly(when_drawn: bool = False) -> None:
    """Ask the browser for Plotly's chunk now (once per browser tab); `when_drawn`: once the page is
    drawn (a page with no chart yet, whose later charts, e.g. a Run's, should not wait for it)."""
    name = plotly_chunk()
    if name is None:
        return
    st.html(_JS.format(name=name, when_drawn="true" if when_drawn else "false"), unsafe_allow_javascript=True)
