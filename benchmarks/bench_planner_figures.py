"""Benchmark: the Planner's result screen part by part, and its six result figures, in Chromium: drawn
as six `st.plotly_chart` elements (as the page draws them) against ONE figure with six subplots
(`combine_figures`: the two time charts on one shared x axis, the four distributions two by two
below), the same data (issue 25 item 6, the charts' part of Run to charts). Figures, not a test; a
small Streamlit app, not the Planner.

    python benchmarks/bench_planner_figures.py [--reps 4] [--modes six,one,none] [--trace six]
    python benchmarks/bench_planner_figures.py --reps 5 --modes page,page-none,page-capacity,page-headline,\
        page-figures,page-table,page-limits

The app (written to a temporary directory, served by `streamlit run` with a database of the shipped
logs) draws one small figure first (Plotly's code loaded and warmed, as the Planner's
`appkit.preload` does), then on a button click the default Summit run's figures (replayed once,
saved and loaded as the page does: `workspace.save_run` / `load_run`, `charts.planner_figures`,
`report.style_runs`, `charts.in_units`). Modes: six (the page's six, the time charts with box
selection as `zoom.TimeZoom.show` draws them), one (`combine_figures`), time (only the two time
charts), dist (only the four distributions), nodash (the six with solid lines), none (the click's
rerun without figures: the fixed part). The Planner's whole result screen, as the page draws it
(`appkit.planner_results.show`): page (every part), page-PART (that part alone: page-capacity, the
six tiles; page-headline, the headline metrics and the Trainer flow; page-figures, the zoom and the
six charts; page-table, all headline numbers as a table and the link to Downloads; page-limits, the
run's limits), page-none (the run loaded, nothing drawn); a mode whose page shows an exception is an
error. Each rep is a new browser context (a new session); the modes alternate, reversed every other
rep. Per click, the renderer's main-thread CPU (CDP `Performance.getMetrics`, `timeDomain:
"threadTicks"`: TaskDuration, ScriptDuration, ...) from the click to the page quiet for 1.5 s (no
mutation in the main block), and the wall time to the last mutation. `--trace MODE`: one Chromium
trace of a click, the renderer main thread's self time per trace event (ScriptDuration does not
count JavaScript run as microtasks: `RunMicrotasks`, where Plotly's and React's promise-chained
drawing runs, shows it). Writes artifacts/bench_planner_figures.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import plotly.graph_objects as go

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from appkit.charts import LEFT_MARGIN, PLANNER_TIME_CHARTS  # noqa: E402

OUT = ROOT / "artifacts" / "bench_planner_figures.json"
CHARTS = {"six": 6, "one": 1, "time": 2, "dist": 4, "nodash": 6, "none": 0}
# the Planner's whole result screen and each of its parts alone (appkit.planner_results.show(parts=...)):
# "page" all of it, "page-PART" that part only; "page-none" the click's rerun with the run loaded, nothing drawn
PAGE_PARTS = ("capacity", "headline", "figures", "table", "limits")
CHARTS.update({"page": 6, "page-none": 0, **{f"page-{p}": 6 if p == "figures" else 0 for p in PAGE_PARTS}})

# ---------------------------------------------------------------------------
# one figure with the six as subplots (measured here; the Planner does not use it: docs/benchmarks.md)

PLANNER_GRID = (("Allocated nodes vs N(t)",), ("Utilization over time",),
                ("Queueing time", "Runtime per model"), ("Rescaling and preemption cost", "Solve time"))
_TIME_PX, _DIST_PX, _TITLE_PX, _TICKS_PX = 250, 260, 34, 62  # plot heights; a title above, ticks below


def combine_figures(figs: Mapping[str, go.Figure], grid: Sequence[Sequence[str]] = PLANNER_GRID,
                    shared_x: Sequence[str] = PLANNER_TIME_CHARTS) -> go.Figure:
    """`figs` (styled, in units) as the subplots of one figure, a row of `grid` per row (one name: full
    width; two: side by side). Traces, axis settings, titles (above each subplot) and annotations
    (anchored to their subplot) kept; the `shared_x` charts on one x axis (the last shows its ticks);
    one legend entry per trace name (its legend group: that run in every subplot); bars overlaid, the
    grouped ones with explicit offsets. layout.meta["time_axes"]: the shared axis' ids."""
    rows = [r for r in ([n for n in row if n in figs] for row in grid) if r]
    shared = [n for n in shared_x if any(n in r for r in rows)]
    spans, y = [], 0.0
    for row in rows:
        top = y + _TITLE_PX
        bottom = top + (_TIME_PX if row[0] in shared else _DIST_PX)
        spans.append((top, bottom))
        y = bottom + (8 if row[0] in shared and row[0] != shared[-1] else _TICKS_PX)
    plot_h, legend_px = y - _TICKS_PX, 30
    layout: dict = {"height": int(plot_h + 16 + _TICKS_PX + legend_px),
                    "margin": dict(l=LEFT_MARGIN, r=20, t=16, b=_TICKS_PX + legend_px),
                    "hovermode": "x unified", "barmode": "overlay", "bargap": 0, "boxmode": "group",
                    "legend": dict(orientation="h", yanchor="top", xanchor="left", x=0.0, y=-(_TICKS_PX - 4) / plot_h),
                    "annotations": []}
    data, seen, shared_id, time_axes, k = [], set(), None, [], 0
    for (y0, y1), row in zip(spans, rows):
        dom_y = [max(0.0, 1 - y1 / plot_h), min(1.0, 1 - y0 / plot_h)]
        for name, dom_x in zip(row, [[0.0, 1.0]] if len(row) == 1 else [[0.0, 0.44], [0.56, 1.0]]):
            k += 1
            s = "" if k == 1 else str(k)
            fj = figs[name].to_plotly_json()
            fl = fj.get("layout", {})
            xa = {key: v for key, v in fl.get("xaxis", {}).items() if key not in ("domain", "anchor", "matches")}
            ya = {key: v for key, v in fl.get("yaxis", {}).items() if key not in ("domain", "anchor", "matches")}
            xa.update(domain=dom_x, anchor=f"y{s}")
            ya.update(domain=dom_y, anchor=f"x{s}")
            if name in shared:
                time_axes.append(f"x{s}")
                if shared_id is None:
                    shared_id = f"x{s}"
                else:
                    xa["matches"] = shared_id
                if name != shared[-1]:
                    xa["showticklabels"] = False
                    xa.pop("title", None)
            if xa.get("type") == "log" or "tickvals" in xa:
                xa["unifiedhovertitle"] = dict(text=" ")  # not the log10 position as the hover's header
            layout[f"xaxis{s}"], layout[f"yaxis{s}"] = xa, ya
            if (title := (fl.get("title") or {}).get("text")):
                layout["annotations"].append(dict(text=title, xref=f"x{s} domain", yref=f"y{s} domain", x=0.0, y=1.0,
                                                  yshift=8, xanchor="left", yanchor="bottom", showarrow=False,
                                                  font=dict(size=15)))
            for a in fl.get("annotations", []) or []:
                a = dict(a)
                a["xref"] = f"x{s} domain" if a.get("xref") == "paper" else a.get("xref", f"x{s}")
                a["yref"] = f"y{s} domain" if a.get("yref") == "paper" else a.get("yref", f"y{s}")
                layout["annotations"].append(a)
            traces = fj.get("data", [])
            grouped = [t for t in traces if t.get("type") == "bar" and "width" not in t]
            for i, t in enumerate(grouped):  # grouped bars (categories on x) placed as their own figure did
                t.update(width=0.8 / len(grouped), offset=-0.4 + i * 0.8 / len(grouped))
            for t in traces:
                t = dict(t, xaxis=f"x{s}", yaxis=f"y{s}", legendgroup=t.get("name"))
                if t.get("name") in seen or fl.get("showlegend") is False:
                    t["showlegend"] = False
                seen.add(t.get("name"))
                data.append(t)
    layout["meta"] = {"time_axes": time_axes}
    return go.Figure({"data": data, "layout": layout})


# ---------------------------------------------------------------------------
# the small app and the browser

APP = r'''import sys
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

sys.path.insert(0, {bench_dir!r})
from appkit import charts, planner_results, preload, report, workspace  # noqa: E402
from bench_planner_figures import PAGE_PARTS, combine_figures  # noqa: E402

st.set_page_config(page_title="figures", layout="wide")


def figures_page():
    mode = st.query_params.get("mode", "six")
    st.title(f"figures: {{mode}}")
    preload.start_plotly(tables=True)  # as the Planner: Plotly's and the table's code asked for at once
    tiny = go.Figure(go.Scatter(x=[0, 1, 2], y=[1, 3, 2], mode="lines", line=dict(shape="hv"), fill="tozeroy"))
    tiny.update_layout(height=120, margin=dict(l=20, r=20, t=20, b=20))
    st.plotly_chart(tiny, key="tiny")
    if mode.startswith("page") and st.button("Draw", key="draw"):  # the Planner's own result screen
        last = workspace.load_run(Path({ws!r}), "0" * 16)
        part = mode.removeprefix("page").removeprefix("-")
        planner_results.show(last, last["scenario"], parts=PAGE_PARTS if not part else (part,))
    elif not mode.startswith("page") and st.button("Draw", key="draw"):
        last = workspace.load_run(Path({ws!r}), "0" * 16)
        runs = last["runs"]
        figs = {{n: charts.in_units(report.style_runs(f, list(runs)), "node")
                for n, f in charts.planner_figures(runs, window_h={hours!r}).items()}}
        if mode == "nodash":
            for n in charts.PLANNER_TIME_CHARTS:
                for t in figs[n].data:
                    t.line.dash = None
        if mode == "one":
            one = combine_figures(figs)
            one.update_layout(dragmode="select", selectdirection="h")
            st.plotly_chart(one, key="one", width="stretch", selection_mode="box", on_select=lambda: None)
        elif mode != "none":
            names = [n for n in figs
                     if mode in ("six", "nodash") or (n in charts.PLANNER_TIME_CHARTS) == (mode == "time")]
            for i in range(0, len(names), 2):
                for col, name in zip(st.columns(2), names[i:i + 2]):
                    if name in charts.PLANNER_TIME_CHARTS:  # as zoom.TimeZoom.show draws them
                        figs[name].update_layout(dragmode="select", selectdirection="h")
                        col.plotly_chart(figs[name], key=name, width="stretch", selection_mode="box",
                                         on_select=lambda: None)
                    else:
                        col.plotly_chart(figs[name], key=name, width="stretch")
        else:
            st.write("no figures")


# a navigation with the Downloads page: the result screen links to it (app_pages: a link beside this file)
st.navigation([st.Page(figures_page, title="figures", default=True), st.Page("app_pages/downloads.py")],
              position="hidden").run()
'''

QUIET = r"""() => { window.__h = {last: performance.now()};
  new MutationObserver(() => { window.__h.last = performance.now(); })
    .observe(document.querySelector('[data-testid="stMain"]') || document.body,
             {subtree: true, childList: true, attributes: true}); }"""


def _drawn_js(n: int) -> str:
    return (f"""() => {{ const c = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
      return c.length === {n + 1} && c.every(e => e.querySelector('.main-svg'))
        && !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]'); }}""")


def _open(browser, url: str, mode: str):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.goto(f"{url}/?mode={mode}")
    pg.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=120_000)
    pg.wait_for_timeout(2500)  # Plotly's chunk compiled and its first draw done
    return ctx, pg


def _click(browser, url: str, mode: str, shot: Path | None = None) -> dict:
    ctx, pg = _open(browser, url, mode)
    try:
        cdp = ctx.new_cdp_session(pg)
        cdp.send("Performance.enable", {"timeDomain": "threadTicks"})

        def metrics() -> dict:
            return {x["name"]: x["value"] for x in cdp.send("Performance.getMetrics")["metrics"]}

        pg.evaluate(QUIET)
        m0, t0 = metrics(), pg.evaluate("performance.now()")
        pg.get_by_role("button", name="Draw").click()
        pg.wait_for_function(_drawn_js(CHARTS[mode]), timeout=120_000, polling=50)
        pg.wait_for_timeout(500)
        pg.wait_for_function("() => performance.now() - window.__h.last > 1500", timeout=60_000, polling=100)
        m1, last = metrics(), pg.evaluate("window.__h.last")
        if (errors := pg.locator('[data-testid="stException"]').all_inner_texts()):
            raise RuntimeError(f"mode {mode}: the page shows an exception: {errors[0][:300]}")
        if shot is not None:
            pg.screenshot(path=str(shot), full_page=True)
        out = {k: round(m1[k] - m0[k], 4) for k in ("TaskDuration", "ScriptDuration", "LayoutDuration",
                                                      "RecalcStyleDuration")}
        out["wall_to_last_mutation_s"] = round((last - t0) / 1000.0, 3)
        return out
    finally:
        ctx.close()


def _trace(browser, url: str, mode: str) -> dict:
    """The renderer main thread's self time per trace event (ms of the thread's CPU clock, `tdur`;
    wall `dur` where an event has none) over one click and 2.5 s after."""
    ctx, pg = _open(browser, url, mode)
    try:
        browser.start_tracing(page=pg, categories=["devtools.timeline", "disabled-by-default-devtools.timeline",
                                                   "v8.execute", "v8"])
        pg.get_by_role("button", name="Draw").click()
        pg.wait_for_function(_drawn_js(CHARTS[mode]), timeout=120_000, polling=50)
        pg.wait_for_timeout(2500)
        events = json.loads(browser.stop_tracing())["traceEvents"]
    finally:
        ctx.close()
    threads = {(e["pid"], e["tid"]) for e in events
               if e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    own, total = Counter(), 0.0
    for key in threads:
        stack = []
        for e in sorted((e for e in events if (e["pid"], e["tid"]) == key and e.get("ph") == "X" and "dur" in e),
                        key=lambda e: (e["ts"], -e["dur"])):
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
                stack.pop()
            cpu = e.get("tdur", e["dur"])
            if stack:
                own[stack[-1]["name"]] -= cpu
            else:
                total += cpu
            own[e["name"]] += cpu
            stack.append(e)
    return {"total_ms": round(total / 1000.0, 1),
            "self_ms": {k: round(v / 1000.0, 1) for k, v in own.most_common(15)}}


def _prepare(work: Path) -> tuple[Path, Path]:
    """A database of the shipped logs and the default Summit run saved as the worker saves it."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_pages import _prepare_db

    from appkit import state, workspace
    from planner.scenario.pair import Pair
    from planner.store import db

    db_path, ws = work / "planner.duckdb", work / "ws"
    _prepare_db(db_path)
    con = db.connect(db_path, read_only=True)
    try:
        sc = dict(state.DEFAULTS)
        runs = Pair(sc, con=con, db_path=str(db_path)).replay(parallel=True)
    finally:
        con.close()
    ws.mkdir()
    workspace.save_run(ws, "0" * 16, sc, runs, 0.0)
    return db_path, ws


def run(reps: int, modes: list[str], trace: list[str], shots: Path | None = None) -> dict:
    from playwright.sync_api import sync_playwright

    from appkit import state
    from appkit.server import CHROMIUM, CHROMIUM_ARGS, AppServer

    work = Path(tempfile.mkdtemp(prefix="bench_figs_"))
    try:
        db_path, ws = _prepare(work)
        app = work / "figures_app.py"
        (work / "app_pages").symlink_to(ROOT / "app_pages")
        app.write_text(APP.format(bench_dir=str(ROOT / "benchmarks"), ws=str(ws), hours=float(state.DEFAULTS["hours"])))
        out: dict = {"load_avg_before": os.getloadavg(), "modes": modes, "reps": reps}
        rows: dict[str, list[dict]] = {m: [] for m in modes}
        with sync_playwright() as p, AppServer(work, db_path, app=app) as srv:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            for r in range(reps):
                for mode in (modes if r % 2 == 0 else modes[::-1]):
                    shot = shots / f"figures_{mode}.png" if shots is not None and r == 0 else None
                    rows[mode].append(_click(browser, srv.url, mode, shot))
            out["traces"] = {m: _trace(browser, srv.url, m) for m in trace}
            browser.close()
        out["median"] = {m: {k: round(statistics.median(x[k] for x in v), 3) for k in v[0]} for m, v in rows.items()}
        out["all"] = rows
        out["load_avg_after"] = os.getloadavg()
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(out, indent=1) + "\n")
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--modes", default="six,one,none", help=f"comma-separated, of {', '.join(CHARTS)}")
    ap.add_argument("--trace", default="", help="modes to trace once each (comma-separated)")
    ap.add_argument("--screenshots", default="", help="a directory: each mode's page after its first click")
    a = ap.parse_args()
    modes = [m for m in a.modes.split(",") if m]
    bad = [m for m in modes + [m for m in a.trace.split(",") if m] if m not in CHARTS]
    if bad:
        sys.exit(f"--modes/--trace: unknown {bad}; use {', '.join(CHARTS)}")
    shots = Path(a.screenshots) if a.screenshots else None
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
    r = run(a.reps, modes, [m for m in a.trace.split(",") if m], shots)
    none = r["median"].get("none", {}).get("TaskDuration")
    print("Renderer main-thread CPU per click, median s (task ; script ; layout ; style), wall to the last mutation s:")
    for m, v in r["median"].items():
        extra = (f"; figures' part (minus none) {v['TaskDuration'] - none:.3f}"
                 if none is not None and m != "none" else "")
        print(f"  {m}: {v['TaskDuration']:.3f} ; {v['ScriptDuration']:.3f} ; {v['LayoutDuration']:.3f} ; "
              f"{v['RecalcStyleDuration']:.3f}, wall {v['wall_to_last_mutation_s']:.2f}{extra}")
    for m, t in r["traces"].items():
        print(f"trace {m}: main thread {t['total_ms']:.0f} ms; self: "
              + ", ".join(f"{k} {v:.0f}" for k, v in list(t["self_ms"].items())[:8]))
    print(f"load average before/after: {r['load_avg_before'][0]:.1f} / {r['load_avg_after'][0]:.1f}; wrote {OUT}")
