"""Benchmark: first load of every page, and Run to charts for the default run on Summit, in real
headless Chromium; where the time of a Run goes (issue 25's speed targets: first load of any page
under 1.5 s, Run to charts under 2 s, on a quiet machine). Figures, not a test.

    python benchmarks/bench_pages.py [--reps 3] [--no-browser] [--no-parts] [--no-run] [--pages home,idle]
    python benchmarks/bench_pages.py --ab DIR --pages home,idle --no-parts   # A/B against DIR's app

1. In Chromium against `streamlit run app.py` (a fresh server on a free port; its database holds
   the shipped logs already, as after the first start). Every time is read on the page's own
   clock (PERF_JS: performance.now() from the navigation start or the click), not Playwright's:
   - each page's FIRST LOAD in a new browser profile (empty HTTP cache, new Streamlit session):
     navigation start to the measured moment (PERF_JS: title drawn, running indicator gone, no
     stale element or skeleton, every Plotly chart drawn), `reps` profiles per page, median; with where it
     went (HTML, the JavaScript files, the websocket, the first message, the title);
   - the same page for a returning operator (the profile loaded the app before: Streamlit's
     hashed static files come from the HTTP cache; a new tab, a new session);
   - in-app navigation: from Home, a click on the page's sidebar link (no page load);
   - each first load's and navigation's renderer main-thread CPU (CDP threadTicks, until settled);
   - the Idle page: its overview's "Interactive charts" click to the three Plotly figures drawn;
   - the Planner's Run click (its pointerdown) to its six result charts drawn, default scenario (one day of Summit
     from 2021-02-10 20:21:15, 1024 nodes, HPO, dp against equal share), median; split at the
     capacity answer (the first result element); the CPU seconds of the Chromium renderer, the
     rest of Chromium, the server and the workers meanwhile; websocket messages in and out
     (out: the script runs the page asked for);
   - a blank Streamlit page (only a title), cold and warm: Streamlit's own floor.
2. Where a Run's time goes, in process (the worker runs the same library calls), wall and CPU
   seconds: a cold worker's start (spawn and imports; the Planner keeps a spare worker started
   ahead, appkit.worker.ensure_spare), the pool, the workload, each replay and each cost-free
   twin alone, then as the worker runs them (both replays at once by fork, the run saved, both
   twins at once after it: planner.scenario.pair.Pair), loading the run and building the charts.
   Plus the functions with most cumulative time in a cProfile of one run_pair.
Writes artifacts/bench_pages.json and prints the medians.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from appkit.server import CHROMIUM, CHROMIUM_ARGS, AppServer  # noqa: E402

OUT = ROOT / "artifacts" / "bench_pages.json"
PAGES = ("", "logs", "idle", "planner", "compare", "solver", "live", "papers", "downloads")


def _prepare_db(path: Path) -> float:
    from planner.store import catalog, db

    t0 = time.perf_counter()
    con = db.connect(path)
    catalog.ensure_default(con)
    catalog.ensure_shipped(con)
    con.close()
    return time.perf_counter() - t0


# Installed in every page before its own scripts (Playwright add_init_script): in-page timestamps
# (performance.now(): ms since the navigation started) and websocket counts, so a figure does not
# include Playwright's polling or Python's clock. `W.drawnAt` is THE MEASURED MOMENT of a load:
# the last time the page became "drawn": its title (h1) is there, Streamlit's running indicator
# is gone, no element is stale (an old run's) or a skeleton (its code, such as Plotly's 4.7 MB
# chunk, still loading), and every Plotly chart of the page has its SVG.
PERF_JS = r"""(() => {
  const W = window.__perf = {msgs: 0, bytes: 0, sent: 0, wsOpen: null, firstMsg: null, h1At: null,
                             drawn: false, drawnAt: null, capAt: null, plotsAt: {}, mark: 0};
  const Orig = window.WebSocket;
  function PerfWS(...a) {
    const ws = new Orig(...a);
    ws.addEventListener('open', () => { if (W.wsOpen === null) W.wsOpen = performance.now(); });
    ws.addEventListener('message', e => {
      if (W.firstMsg === null) W.firstMsg = performance.now();
      W.msgs++; W.bytes += (e.data && (e.data.byteLength ?? e.data.size ?? e.data.length)) || 0; });
    const send = ws.send.bind(ws);
    ws.send = d => { W.sent++; send(d); };
    return ws;
  }
  PerfWS.prototype = Orig.prototype;
  Object.assign(PerfWS, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  window.WebSocket = PerfWS;
  const check = () => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const h1 = main && main.querySelector('h1');
    if (h1 && W.h1At === null) W.h1At = performance.now();
    const charts = main ? main.querySelectorAll('[data-testid="stPlotlyChart"]') : [];
    let drawnCharts = 0;
    charts.forEach(c => { if (c.querySelector('.main-svg')) drawnCharts++; });
    const ok = !!h1 && !document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')
      && !document.querySelector('[data-stale="true"]') && drawnCharts === charts.length
      && !main.querySelector('[data-testid="stSkeleton"]');  // an element whose code (a chunk) still loads
    if (ok && !W.drawn) W.drawnAt = performance.now();
    W.drawn = ok;
    if (W.capAt === null && main
        && Array.from(main.querySelectorAll('h3')).some(h => h.textContent.includes('Capacity answer')))
      W.capAt = performance.now();
    const n = main ? main.querySelectorAll('.js-plotly-plot .cartesianlayer').length : 0;
    if (W.plotsAt[n] === undefined) W.plotsAt[n] = performance.now();
  };
  // the moment the operator's click begins (a Run is timed from it, not from Playwright's call, which
  // first waits for the button to be stable and scrolls it into view: 20-50 ms more)
  document.addEventListener('pointerdown', () => { W.downAt = performance.now(); }, true);
  let queued = false;  // one check per task, not per mutation
  const start = () => new MutationObserver(() => {
    if (!queued) { queued = true; setTimeout(() => { queued = false; check(); }, 0); }
  }).observe(document.documentElement, {subtree: true, childList: true, attributes: true});
  if (document.documentElement) start(); else document.addEventListener('readystatechange', start, {once: true});
})();"""

SETTLED_MS = 1000  # a load is over once the page stayed drawn this long (W.drawnAt is read then)


def _settled(pg, timeout_ms: int = 180_000) -> None:
    pg.wait_for_function(f"() => window.__perf && window.__perf.drawn && "
                         f"performance.now() - window.__perf.drawnAt > {SETTLED_MS}", timeout=timeout_ms, polling=100)


def _load_breakdown(pg) -> dict:
    """Where a load's time went, from the page's own Performance API (ms since navigation start)."""
    return pg.evaluate(r"""() => {
      const W = window.__perf, nav = performance.getEntriesByType('navigation')[0] || {};
      const res = performance.getEntriesByType('resource');
      const js = res.filter(r => r.name.endsWith('.js')), plotly = res.filter(r => r.name.includes('PlotlyChart'));
      const fcp = performance.getEntriesByType('paint').find(p => p.name === 'first-contentful-paint');
      const end = a => a.length ? Math.max(...a.map(r => r.responseEnd)) : null;
      return {html_ms: nav.responseEnd, dom_content_loaded_ms: nav.domContentLoadedEventEnd,
              js_files: js.length, js_bytes_transferred: js.reduce((a, r) => a + (r.transferSize || 0), 0),
              js_from_cache: js.filter(r => r.transferSize === 0).length, js_last_response_end_ms: end(js),
              plotly_chunk_end_ms: end(plotly),
              plotly_chunk_bytes_transferred: plotly.reduce((a, r) => a + (r.transferSize || 0), 0),
              first_contentful_paint_ms: fcp ? fcp.startTime : null, websocket_open_ms: W.wsOpen,
              first_message_ms: W.firstMsg, title_drawn_ms: W.h1At, drawn_ms: W.drawnAt,
              messages: W.msgs, message_bytes: W.bytes,
              // each JavaScript file by its name without the content hash, with its size (kB, decoded)
              js_chunks: Object.fromEntries(js.map(r => [r.name.split('/').pop().replace(/\.[^.]+\.js$/, ''),
                                                         Math.round((r.decodedBodySize || 0) / 1000)]))};
    }""")


def _new_page(ctx):
    pg = ctx.new_page()
    pg.add_init_script(PERF_JS)
    return pg


def _main_thread(cdp) -> dict:
    """The renderer's main thread so far, in thread CPU seconds (CDP Performance metrics read with
    timeDomain threadTicks: what a loaded machine changes least): TaskDuration (every task, microtasks
    included) and ScriptDuration (JavaScript run as tasks; not microtasks)."""
    m = {x["name"]: x["value"] for x in cdp.send("Performance.getMetrics")["metrics"]}
    return {k: m.get(k, 0.0) for k in ("TaskDuration", "ScriptDuration")}


def _cdp(ctx, pg):
    cdp = ctx.new_cdp_session(pg)
    cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
    return cdp


def _page_load(browser, url: str, warm: bool = False) -> dict:
    """First load in a NEW browser context (a new profile: empty HTTP cache, no Streamlit session):
    navigation start to the measured moment (PERF_JS). `warm`: a returning operator, the same
    profile loaded the app before (Streamlit's hashed static files are in its HTTP cache), then a
    new tab, a new Streamlit session. With the renderer main thread's CPU until the page settled
    (`renderer_task_s`, `renderer_script_s`)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        if warm:
            first = _new_page(ctx)
            first.goto(url)
            _settled(first)
            first.close()
        pg = _new_page(ctx)
        cdp = _cdp(ctx, pg)
        pg.goto(url)
        _settled(pg)
        m = _main_thread(cdp)
        return {**_load_breakdown(pg), "renderer_task_s": m["TaskDuration"], "renderer_script_s": m["ScriptDuration"]}
    finally:
        ctx.close()


def _page_nav(browser, base: str, title: str, detail: bool = False):
    """In-app navigation: from Home (drawn), a click on the page's sidebar link to the measured
    moment (no page load, the same session and websocket), s. `detail`: a dict with it (`s`) and the
    renderer main thread's CPU from the click until the page settled (`renderer_task_s`)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        pg = _new_page(ctx)
        pg.goto(base + "/")
        _settled(pg)
        link = pg.locator('[data-testid="stSidebarNav"] a', has_text=title).first
        link.wait_for(timeout=60_000)
        cdp = _cdp(ctx, pg)
        m0 = _main_thread(cdp)
        t0 = pg.evaluate("() => { const W = window.__perf; W.drawn = false; W.drawnAt = null; "
                         "return performance.now(); }")
        link.click()
        pg.wait_for_timeout(200)  # the old page may still read as drawn until the rerun starts
        _settled(pg)
        s = (pg.evaluate("() => window.__perf.drawnAt") - t0) / 1000.0
        m1 = _main_thread(cdp)
        return {"s": s, "renderer_task_s": m1["TaskDuration"] - m0["TaskDuration"]} if detail else s
    finally:
        ctx.close()


def _idle_interactive(browser, base: str) -> dict:
    """The Idle page's overview (its static first draw), then a click on "Interactive charts" to its
    three Plotly figures drawn (the measured moment), s, with the renderer main thread's CPU; 3 s after
    the load, as an operator would look before clicking (Plotly's chunk is fetched once the page is drawn)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        pg = _new_page(ctx)
        pg.goto(base + "/idle")
        _settled(pg)
        pg.wait_for_timeout(3000)
        cdp = _cdp(ctx, pg)
        m0 = _main_thread(cdp)
        t0 = pg.evaluate("() => { const W = window.__perf; W.drawn = false; W.drawnAt = null; "
                         "return performance.now(); }")
        pg.get_by_text("Interactive charts", exact=True).click()
        pg.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3",
                             timeout=120_000, polling=50)
        _settled(pg)
        s = (pg.evaluate("() => window.__perf.drawnAt") - t0) / 1000.0
        return {"s": s, "renderer_task_s": _main_thread(cdp)["TaskDuration"] - m0["TaskDuration"]}
    finally:
        ctx.close()


class _CpuOfChildren:
    """CPU seconds of this process's descendants by role (the Chromium renderer, the rest of
    Chromium, the Streamlit server, the app's workers), sampled every 0.1 s (a worker that ends
    between two samples loses at most 0.1 s)."""

    def __init__(self):
        import threading

        import psutil

        self.psutil, self.last, self.total = psutil, {}, {}
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def role(cmd: str, name: str) -> str | None:
        if "chromium" in name:
            return "chromium renderer" if "--type=renderer" in cmd else "chromium other"
        if "streamlit" in cmd:
            return "server"
        if "appkit.jobs" in cmd:
            return "worker"
        return None

    def sample(self) -> None:
        for q in self.psutil.Process().children(recursive=True):
            try:
                role = self.role(" ".join(q.cmdline()), q.name())
                if role is None:
                    continue
                c = q.cpu_times()
                key = (q.pid, q.create_time())
                self.last[key] = (role, c.user + c.system)
            except self.psutil.Error:
                pass

    def _run(self):
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(0.1)

    def __enter__(self):
        self.sample()
        self.start = dict(self.last)
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join(5)
        self.sample()
        for key, (role, cpu) in self.last.items():
            self.total[role] = self.total.get(role, 0.0) + cpu - self.start.get(key, (role, 0.0))[1]


def _run_to_charts(browser, url: str) -> dict:
    """The Planner's Run click (default scenario) to its six result charts drawn, in-page clock;
    `click_to_capacity_s`: to the first result element (the capacity answer: the replays saved and
    read); CPU seconds of the browser, server and workers meanwhile; websocket counts."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        pg = _new_page(ctx)
        pg.goto(f"{url}/planner")
        run = pg.get_by_role("button", name="Run", exact=True)
        run.wait_for(timeout=120_000)
        _settled(pg)
        pg.wait_for_timeout(1500)  # the spare worker's imports (it waits 1 s before them) are done
        # the renderer's main thread, in thread CPU seconds (what a loaded machine changes least):
        # Chromium's own task and script durations, read at the click, the capacity answer, the charts
        cdp = _cdp(ctx, pg)

        def main_thread() -> dict:
            return _main_thread(cdp)

        with _CpuOfChildren() as cpu:
            t0 = pg.evaluate("() => { const W = window.__perf; W.capAt = null; W.plotsAt = {}; W.msgs = 0; "
                             "W.downAt = null; W.bytes = 0; W.sent = 0; return performance.now(); }")
            m0 = main_thread()
            run.click()
            pg.wait_for_function("() => window.__perf.capAt !== null", timeout=300_000, polling=50)
            mc = main_thread()
            pg.wait_for_function("() => { const p = window.__perf.plotsAt; return Object.keys(p).some(n => +n >= 6); }",
                                 timeout=300_000, polling=100)
            m1 = main_thread()
        r = pg.evaluate("""() => {
          const W = window.__perf, n = Object.keys(W.plotsAt).map(Number).filter(k => k >= 6);
          const done = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
            .map(e => e.textContent).find(t => t.startsWith('Done in'));
          return {cap: W.capAt, charts: W.plotsAt[Math.min(...n)], msgs: W.msgs, bytes: W.bytes, sent: W.sent,
                  done, down: W.downAt}; }""")
        click_lag_s = (r["down"] - t0) / 1000.0 if r["down"] is not None else None
        t0 = r["down"] if r["down"] is not None else t0  # the click's own moment
        # the page's caption: "Done in J s (the replay itself R s)": J from the job's start to its
        # announcement seen by the page, R the worker's inputs and replays (appkit.jobs.job_replay)
        import re
        job = re.findall(r"[0-9.]+", r["done"] or "")
        return {"s": (r["charts"] - t0) / 1000.0, "click_to_capacity_s": (r["cap"] - t0) / 1000.0,
                "capacity_to_charts_s": (r["charts"] - r["cap"]) / 1000.0,
                "playwright_click_lag_s": click_lag_s,
                "job_s": float(job[0]) if job else None, "job_replays_s": float(job[1]) if len(job) > 1 else None,
                "renderer_main_thread_cpu_s": {
                    "click_to_capacity": {k: round(mc[k] - m0[k], 3) for k in m0},
                    "capacity_to_charts": {k: round(m1[k] - mc[k], 3) for k in m0}},
                "cpu_s": {k: round(v, 3) for k, v in sorted(cpu.total.items())},
                "ws_messages_in": r["msgs"], "ws_bytes_in": r["bytes"], "ws_messages_out": r["sent"]}
    finally:
        ctx.close()


BLANK_APP = """import streamlit as st

st.set_page_config(page_title="blank", layout="wide")


def home():
    st.title("Blank")


st.navigation([st.Page(home, title="Home", default=True)]).run()
"""

NAV_TITLES = {"logs": "Logs", "idle": "Idle capacity", "planner": "Planner", "compare": "Compare",
              "solver": "Solver", "live": "Live", "papers": "Papers", "downloads": "Downloads"}


def _med(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def _summary(rows: list[dict]) -> dict:
    """Loads (_load_breakdown rows): the median and every time of the measured moment, in s, and the
    median of each part of the breakdown, in ms since the navigation started."""
    return {"median_s": _med(rows, "drawn_ms") / 1000.0, "all_s": [r["drawn_ms"] / 1000.0 for r in rows],
            "breakdown_median_ms": {k: statistics.median(r[k] for r in rows) for k in rows[0]
                                    if k != "js_chunks" and all(r[k] is not None for r in rows)},
            "js_chunks": rows[0]["js_chunks"]}


def beyond_blank(pages: dict, blank: dict) -> dict:
    """Per page: the JavaScript files its first load fetched that a blank Streamlit page does not
    (Streamlit's element chunks: a table, Plotly, markdown's math ...), {name: kB}, and their sum."""
    base = set(blank["js_chunks"])
    out = {}
    for name, v in pages.items():
        extra = {k: kb for k, kb in sorted(v["js_chunks"].items(), key=lambda kv: -kv[1]) if k not in base}
        out[name] = {"files": len(extra), "kB": sum(extra.values()), "chunks": extra}
    return out


def in_browser(db_path: Path, work: Path, reps: int, pages: tuple[str, ...] = PAGES, runs: bool = True) -> dict:
    from playwright.sync_api import sync_playwright

    out: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        with AppServer(work, db_path) as srv:
            out["server_startup_s"] = srv.startup_s
            out["server_first_session_home_s"] = _page_load(browser, srv.url + "/")["drawn_ms"] / 1000.0
            cold, warm, nav = {}, {}, {}
            for page in pages:
                name = page or "home"
                rows = [_page_load(browser, f"{srv.url}/{page}") for _ in range(reps)]
                cold[name] = _summary(rows)
                rows = [_page_load(browser, f"{srv.url}/{page}", warm=True) for _ in range(reps)]
                warm[name] = _summary(rows)
                if page in NAV_TITLES:
                    times = [_page_nav(browser, srv.url, NAV_TITLES[page]) for _ in range(reps)]
                    nav[name] = {"median_s": statistics.median(times), "all_s": times}
            if "idle" in pages:  # the overview's interactive figures, one click after its static first draw
                rows = [_idle_interactive(browser, srv.url) for _ in range(reps)]
                out["idle_interactive_click"] = {"median_s": _med(rows, "s"),
                                                 "renderer_task_median_s": _med(rows, "renderer_task_s"), "all": rows}
            out["first_load"] = cold  # THE figure of the target: a new browser profile (cold HTTP cache)
            out["load_warm_cache"] = warm
            out["in_app_navigation"] = nav
            runs = [_run_to_charts(browser, srv.url) for _ in range(reps)] if runs else None
            out["run_to_charts_default_s"] = None if not runs else {
                "median_s": _med(runs, "s"), "all_s": [r["s"] for r in runs],
                "click_to_capacity_median_s": _med(runs, "click_to_capacity_s"),
                "capacity_to_charts_median_s": _med(runs, "capacity_to_charts_s"),
                "playwright_click_lag_median_s": (_med(runs, "playwright_click_lag_s") if all(
                    r["playwright_click_lag_s"] is not None for r in runs) else None),
                "job_median_s": _med(runs, "job_s") if all(r["job_s"] is not None for r in runs) else None,
                "job_replays_median_s": (_med(runs, "job_replays_s")
                                         if all(r["job_replays_s"] is not None for r in runs) else None),
                "renderer_main_thread_cpu_s_median": {
                    part: {k: statistics.median(r["renderer_main_thread_cpu_s"][part][k] for r in runs)
                           for k in ("TaskDuration", "ScriptDuration")}
                    for part in ("click_to_capacity", "capacity_to_charts")},
                "cpu_s_median": {k: statistics.median(r["cpu_s"].get(k, 0.0) for r in runs) for k in runs[0]["cpu_s"]},
                "ws_messages_in_median": _med(runs, "ws_messages_in"), "ws_bytes_in_median": _med(runs, "ws_bytes_in"),
                "ws_messages_out_median": _med(runs, "ws_messages_out"), "all": runs}
        # the floor: Streamlit's own first load (its page, scripts and websocket in a new browser
        # session) of a page that only draws a title, on the same machine at the same time
        blank = work / "blank_app.py"
        blank.write_text(BLANK_APP)
        with AppServer(work, db_path, app=blank) as srv:
            _page_load(browser, srv.url + "/")
            rows = [_page_load(browser, srv.url + "/") for _ in range(reps)]
            out["blank_streamlit_page_s"] = _summary(rows)
            rows = [_page_load(browser, srv.url + "/", warm=True) for _ in range(reps)]
            out["blank_streamlit_page_warm_cache_s"] = _summary(rows)
        out["js_beyond_blank_page"] = beyond_blank(out["first_load"], out["blank_streamlit_page_s"])
        browser.close()
    return out


def _server_cpu(srv) -> float:
    import psutil

    c = psutil.Process(srv.proc.pid).cpu_times()
    return c.user + c.system


def ab_pages(db_path: Path, work: Path, reps: int, pages: tuple[str, ...], other: Path) -> dict:
    """A/B of first loads and in-app navigations: this tree's app against `other`'s (another
    checkout's root, e.g. `git archive main | tar -x -C DIR`: the code before a change), two servers
    at once on copies of one database, the loads alternated (A, B, B, A, ...: the same load for
    both), each a new browser profile; on the Idle page also its "Interactive charts" click. Per load:
    the measured moment (s), the renderer main thread's CPU (thread CPU s) and the server's CPU (s);
    medians per side."""
    from playwright.sync_api import sync_playwright

    sides = {"this": (ROOT / "app.py", {}), "other": (Path(other).resolve() / "app.py",
                                                     {"PYTHONPATH": str(Path(other).resolve())})}
    rows: dict = {side: {} for side in sides}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        servers = {}
        try:
            for side, (app, env) in sides.items():
                d = work / side
                d.mkdir()
                shutil.copy(db_path, d / "planner.duckdb")
                servers[side] = AppServer(d, d / "planner.duckdb", app=app, extra_env=env).__enter__()
            for srv in servers.values():  # each server's first session, and each page's caches warm
                for page in ("", *pages):
                    _page_load(browser, f"{srv.url}/{page}")
            for i in range(reps):
                order = list(servers) if i % 2 == 0 else list(servers)[::-1]
                for page in pages:
                    kinds = ("cold", "nav") if page in NAV_TITLES else ("cold",)
                    for kind in kinds + (("click",) if page == "idle" else ()):
                        for side in order:
                            srv = servers[side]
                            c0 = _server_cpu(srv)
                            if kind == "cold":
                                r = _page_load(browser, f"{srv.url}/{page}")
                                r = {"s": r["drawn_ms"] / 1000.0, "renderer_task_s": r["renderer_task_s"]}
                            elif kind == "click":  # the overview's "Interactive charts" click
                                r = _idle_interactive(browser, srv.url)
                            else:
                                r = _page_nav(browser, srv.url, NAV_TITLES[page], detail=True)
                            r["server_cpu_s"] = _server_cpu(srv) - c0
                            r["load_avg"] = os.getloadavg()[0]
                            rows[side].setdefault(f"{page or 'home'} {kind}", []).append(r)
        finally:
            for srv in servers.values():
                srv.__exit__(None, None, None)
            browser.close()
    med = {side: {k: {m: statistics.median(r[m] for r in v) for m in ("s", "renderer_task_s", "server_cpu_s")}
                  for k, v in by.items()} for side, by in rows.items()}
    return {"other": str(other), "medians": med, "all": rows}


def _worker_start_s() -> tuple[float, float]:
    """(wall s, CPU s) of a cold worker's start: a Python process importing what a replay job
    needs (appkit.jobs._warm_imports), as `python -m appkit.jobs` does without a spare worker."""
    import resource
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import appkit.jobs as j; j._warm_imports()"], cwd=ROOT, check=True,
                   env=dict(os.environ, PYTHONPATH=str(ROOT)))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - t, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def where_the_time_goes(db_path: Path, reps: int) -> dict:
    """The default Run's parts, in process, median over reps: wall seconds (`parts_s_median`) and
    CPU seconds of this process (`parts_cpu_s_median`, time.process_time: what a busy machine
    changes least). Each replay and cost-free twin alone, then as the app's worker runs them
    (planner.scenario.pair.Pair: the two replays at once, the two twins at once, by fork); saving
    and loading the run (the workspace's Parquet files); the charts."""
    import plotly.io as pio

    from appkit import charts, state, workspace
    from planner.replay import bounds
    from planner.scenario.pair import Pair, labels_for, make_scenario
    from planner.scenario.record import build_pool, build_workload, replay_hooks, replay_scenario
    from planner.store import db

    con = db.connect(db_path, read_only=True)
    sc = dict(state.DEFAULTS)
    parts: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    ws = Path(tempfile.mkdtemp(prefix="bench_ws_"))

    class tick:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            self.t, self.c = time.perf_counter(), time.process_time()

        def __exit__(self, *exc):
            parts.setdefault(self.name, []).append(time.perf_counter() - self.t)
            cpu.setdefault(self.name, []).append(time.process_time() - self.c)

    try:
        for _ in range(reps):
            w, c = _worker_start_s()
            parts.setdefault("worker start, cold (spawn + imports)", []).append(w)
            cpu.setdefault("worker start, cold (spawn + imports)", []).append(c)
            for label in labels_for(sc):
                s = make_scenario(sc, label, str(db_path))
                with tick(f"{label}: pool"):
                    pool = build_pool(s, con)
                with tick(f"{label}: workload"):
                    specs = build_workload(s, pool, con)
                with tick(f"{label}: replay alone"):
                    res = replay_scenario(s, specs, pool, replay_hooks(s, pool, con))
                with tick(f"{label}: cost-free twin alone"):
                    bounds.cost_free(pool, specs, s.allocator, s.alloc_options(), s.replay_config(),
                                     replay_hooks(s, pool, con), res.summary.get("static_samples"))
            with tick("pair: inputs"):
                pair = Pair(sc, con=con, db_path=str(db_path))
            with tick("pair: both replays at once (fork)"):
                runs = pair.replay(parallel=True)
            with tick("pair: save the run (Parquet)"):
                workspace.save_run(ws, "0" * 16, sc, runs, 0.0)
            with tick("pair: both cost-free twins at once (fork, after the charts)"):
                limits = pair.limits(runs, parallel=True)
            workspace.save_limits(ws, "0" * 16, limits)
            with tick("page: load the run"):
                last = workspace.load_run(ws, "0" * 16)
            with tick("page: charts build"):
                figs = charts.planner_figures(last["runs"], window_h=float(sc["hours"]))
            with tick("page: charts to JSON"):
                for f in figs.values():
                    pio.to_json(f)
        prof = cProfile.Profile()
        from planner.scenario.pair import run_pair

        prof.enable()
        run_pair(sc, con=con, db_path=str(db_path))
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(25)
    finally:
        con.close()
        shutil.rmtree(ws, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in parts.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    alone = sum(v for k, v in med.items() if "alone" in k)
    twin = sum(v for k, v in med.items() if "twin alone" in k)
    # what the Planner waits for between its Run click and its charts (the twins come after them)
    path = ["pair: inputs", "pair: both replays at once (fork)", "pair: save the run (Parquet)",
            "page: load the run", "page: charts build", "page: charts to JSON"]
    return {"parts_s_median": med, "parts_cpu_s_median": med_cpu,
            "replays_and_twins_alone_s": alone, "twin_s": twin, "twin_share": twin / alone if alone else None,
            "run_to_charts_in_process_s": sum(med[k] for k in path),
            "run_to_charts_in_process_cold_worker_s": sum(med[k] for k in path)
            + med["worker start, cold (spawn + imports)"],
            "profile_top": [ln for ln in buf.getvalue().splitlines() if ln.strip()][:40]}


def run(reps: int = 3, browser: bool = True, pages: tuple[str, ...] = PAGES, parts: bool = True,
        runs: bool = True, ab: Path | None = None) -> dict:
    work = Path(tempfile.mkdtemp(prefix="bench_pages_"))
    try:
        db_path = work / "planner.duckdb"
        out = {"load_avg_before": os.getloadavg(), "cpus": os.cpu_count(), "db_prepare_s": _prepare_db(db_path)}
        out["run_parts"] = where_the_time_goes(db_path, reps) if parts else None
        if ab is not None:
            out["ab"] = ab_pages(db_path, work, reps, pages, ab)
            out["browser"] = None
        else:
            out["browser"] = (in_browser(db_path, work, reps, pages, runs)
                              if browser and Path(CHROMIUM).exists() else None)
        out["load_avg_after"] = os.getloadavg()
        out["targets"] = "first load of any page < 1.5 s; Run to charts < 2 s (quiet machine)"
        out["measured_moment"] = (
            "a load: navigation start to the last time the page became drawn (its title there, Streamlit's running "
            "indicator gone, no stale element or skeleton, every Plotly chart drawn), read after it stayed so for 1 s; "
            "a Run: the click to the sixth result chart drawn; both on the page's own clock (performance.now())")
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(out, indent=1) + "\n")
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--no-parts", action="store_true", help="skip the in-process parts of a Run")
    ap.add_argument("--pages", default=",".join(p or "home" for p in PAGES),
                    help="comma-separated pages to load (home, logs, idle, ...)")
    ap.add_argument("--no-run", action="store_true", help="skip the Planner's Run to charts")
    ap.add_argument("--ab", type=Path, default=None, metavar="DIR",
                    help="A/B the pages' cold loads and in-app navigations against another checkout's app (DIR: "
                         "its root), alternated; implies --no-run (renderer and server CPU per load)")
    a = ap.parse_args()
    r = run(a.reps, not a.no_browser, tuple("" if p == "home" else p for p in a.pages.split(",")), not a.no_parts,
            not a.no_run, a.ab)
    if r.get("ab"):
        med = r["ab"]["medians"]
        print(f"A/B, medians of {a.reps} alternated: this tree -> {a.ab} (wall s ; renderer main-thread CPU s ; "
              "server CPU s)")
        for k in med["this"]:
            t, o = med["this"][k], med["other"][k]
            print(f"  {k}: other {o['s']:.2f} ; {o['renderer_task_s']:.2f} ; {o['server_cpu_s']:.2f}   "
                  f"this {t['s']:.2f} ; {t['renderer_task_s']:.2f} ; {t['server_cpu_s']:.2f}")
    rp = r["run_parts"]
    if rp:
        print("Run parts (median wall s / CPU s):")
        for k, v in rp["parts_s_median"].items():
            print(f"  {k}: {v:.3f} / {rp['parts_cpu_s_median'][k]:.3f}")
        print(f"  Run to charts in process: {rp['run_to_charts_in_process_s']:.2f} s with the spare worker, "
              f"{rp['run_to_charts_in_process_cold_worker_s']:.2f} s with a cold one")
    if r["browser"]:
        b = r["browser"]
        for title, key in (("First load, new browser profile (THE target's figure)", "first_load"),
                           ("Load, returning browser (HTTP cache warm), new tab", "load_warm_cache"),
                           ("In-app navigation from Home (sidebar click)", "in_app_navigation")):
            print(f"{title}, median s: " + ", ".join(f"{k} {v['median_s']:.2f}" for k, v in b[key].items()))
        if b.get("idle_interactive_click"):
            ic = b["idle_interactive_click"]
            print(f"  Idle: the click on Interactive charts to its three Plotly figures drawn, median "
                  f"{ic['median_s']:.2f} s (renderer main-thread CPU {ic['renderer_task_median_s']:.2f} s)")
        bd = b["first_load"].get("home", next(iter(b["first_load"].values())))["breakdown_median_ms"]
        print("  first load of the first page measured, ms since navigation start (median): "
              + ", ".join(f"{k} {v:.0f}" for k, v in bd.items()))
        print("  renderer main-thread CPU of a first load, s (median): " + ", ".join(
            f"{k} {v['breakdown_median_ms'].get('renderer_task_s', float('nan')):.2f}"
            for k, v in b["first_load"].items()))
        rc = b["run_to_charts_default_s"] or {}
    if r["browser"] and rc:
        print(f"Run to charts, default run on Summit (median): {rc['median_s']:.2f} s (click to the capacity "
              f"answer {rc['click_to_capacity_median_s']:.2f} s, then to the six charts "
              f"{rc['capacity_to_charts_median_s']:.2f} s; timed from the click's pointerdown, which came "
              f"{(rc['playwright_click_lag_median_s'] or 0) * 1000:.0f} ms after Playwright's click call)")
        if rc["job_median_s"] is not None:
            print(f"  the job (start to its announcement seen) {rc['job_median_s']:.2f} s, of it the worker's inputs "
                  f"and replays {rc['job_replays_median_s']:.2f} s")
        print("  renderer main thread, thread CPU s (median): " + "; ".join(
            f"{part}: task {v['TaskDuration']:.2f}, script {v['ScriptDuration']:.2f}"
            for part, v in rc["renderer_main_thread_cpu_s_median"].items()))
        print("  CPU s meanwhile (median): " + ", ".join(f"{k} {v:.2f}" for k, v in rc["cpu_s_median"].items())
              + f"; websocket messages in {rc['ws_messages_in_median']:.0f} ({rc['ws_bytes_in_median'] / 1e3:.0f} kB), "
              f"out {rc['ws_messages_out_median']:.0f}")
    if r["browser"]:
        bl, bw = r["browser"]["blank_streamlit_page_s"], r["browser"]["blank_streamlit_page_warm_cache_s"]
        print(f"A blank Streamlit page (only a title), median: first load {bl['median_s']:.2f} s, "
              f"warm HTTP cache {bw['median_s']:.2f} s; ms: "
              + ", ".join(f"{k} {v:.0f}" for k, v in bl["breakdown_median_ms"].items()))
        print("JavaScript beyond a blank Streamlit page, first load: " + "; ".join(
            f"{k} {v['files']} files {v['kB']:,} kB" for k, v in r["browser"]["js_beyond_blank_page"].items()))
    print(f"load average before/after: {r['load_avg_before'][0]:.1f} / {r['load_avg_after'][0]:.1f}; wrote {OUT}")
