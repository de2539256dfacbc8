"""Start loading Plotly's code at a page's first output (issue 25, speed): Streamlit fetches its
4.7 MB Plotly chunk only when the first chart element arrives, after the page's script has
computed it; a page that draws charts asks for it at its top instead, so the chunk's download,
compile and start-up overlap the script run. The same module (the same URL) Streamlit imports
later: its import then resolves at once. Nothing when the chunk is not found (another Streamlit).

A page whose charts come later (the Planner's, after a Run) also draws one small figure off screen
once the chunk is in and the browser is idle, then removes it: Plotly's first draw in a page pays
its one-time set-up (compiling its drawing code on first use, its style rules and text-measuring
nodes); paid here, not between the Run's click and its charts. Such a page can ask for the table
chunk the same way (its results' tables would otherwise fetch and compile it inside the Run)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st


@functools.cache
def chunk(name: str) -> str | None:
    """The file name of one of Streamlit's element chunks (static/js/<name>.<hash>.js), or None."""
    js = Path(st.__file__).parent / "static" / "static" / "js"
    found = sorted(p.name for p in js.glob(f"{name}.*.js")) if js.is_dir() else []
    return found[0] if len(found) == 1 else None


def plotly_chunk() -> str | None:
    """The file name of Streamlit's Plotly chunk (static/js/PlotlyChart.<hash>.js), or None."""
    return chunk("PlotlyChart")


_JS = """<script>(() => {{
  if (window.__plotlyPreload) return;
  const idx = [...document.scripts].map(s => s.src).find(s => /static\\/js\\/index\\.[^/]*\\.js/.test(s));
  if (!idx) return;
  const go = () => {{ window.__plotlyPreload = window.__plotlyPreload
    || import(new URL("./{name}", idx).href).catch(() => null);
    for (const more of {more}) import(new URL("./" + more, idx).href).catch(() => null);
    if ({when_drawn}) window.__plotlyPreload.then(() => (window.requestIdleCallback || setTimeout)(warm)); }};
  // the trace and axis kinds of the Planner's charts (step lines with a fill, bars, boxes, a log axis),
  // drawn once off screen and removed: Plotly's first-draw set-up before a Run, not in it
  const warm = () => {{
    const P = window.Plotly;
    if (!P || window.__plotlyWarm) return;
    window.__plotlyWarm = true;
    const d = document.createElement("div");
    d.setAttribute("aria-hidden", "true");
    d.style.cssText = "position:fixed;left:-10000px;top:0;width:600px;height:300px;visibility:hidden";
    document.body.appendChild(d);
    const x = [0, 1, 2, 3];
    P.newPlot(d, [{{x, y: [1, 3, 2, 4], mode: "lines", line: {{shape: "hv"}}, fill: "tozeroy", name: "a"}},
                  {{x, y: [2, 1, 3, 1], mode: "lines", line: {{shape: "hv", dash: "dash"}}, name: "b"}},
                  {{x: [1, 2, 3], y: [2, 1, 3], type: "bar", xaxis: "x2", yaxis: "y2", name: "c"}},
                  {{y: [1, 2, 3, 4, 5], type: "box", xaxis: "x3", yaxis: "y3", name: "d"}}],
              {{grid: {{rows: 1, columns: 3, pattern: "independent"}}, xaxis2: {{type: "log"}},
               yaxis: {{title: {{text: "n"}}, automargin: true}}, hovermode: "x unified", barmode: "group",
               annotations: [{{text: "a", x: 0, y: 0, xref: "paper", yref: "paper", showarrow: false}}]}},
              {{displaylogo: false, responsive: true}})
      .catch(() => null).finally(() => {{ try {{ P.purge(d); }} catch (e) {{}} d.remove(); }});
  }};
  if (!{when_drawn}) return go();
  let quiet = 0;  // after the page is drawn: no running script, no element whose code still loads, 0.5 s
  const t = setInterval(() => {{
    const busy = document.querySelector('[data-testid="stStatusWidgetRunningIcon"], [data-testid="stSkeleton"]');
    quiet = busy ? 0 : quiet + 1;
    if (quiet >= 2 || window.__plotlyPreload) {{ clearInterval(t); go(); }}
  }}, 250);
}})();</script>"""


def start_plotly(when_drawn: bool = False, tables: bool = False) -> None:
    """Ask the browser for Plotly's chunk now (once per browser tab); `when_drawn`: once the page is
    drawn (a page with no chart yet, whose later charts, e.g. a Run's, should not wait for it), and
    then one small figure drawn off screen (Plotly's first-draw set-up paid before those charts).
    `tables`: Streamlit's table chunk (DataFrame.<hash>.js, with its Arrow code ~1.2 MB) as well, for
    a page whose first table comes later (the Planner's, with a Run's results)."""
    name = plotly_chunk()
    if name is None:
        return
    flag = "true" if when_drawn else "false"
    more = [c for c in ([chunk("DataFrame")] if tables else []) if c]
    st.html(_JS.format(name=name, when_drawn=flag, more=json.dumps(more)), unsafe_allow_javascript=True)
