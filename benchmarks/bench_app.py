"""Benchmark: the app's response times (targets from issue 6; figures, not a test).

    python benchmarks/bench_app.py [--reps 5] [--no-browser]

1. Run to charts in process: the Planner's work for the default scenario (one day of the
   Summit log from 2021-02-10 20:21:15, 1024 nodes, HPO workload, dp), i.e. the replay plus
   building and serializing the six Plotly figures. Target <= 3 s. Also with the equal-share
   baseline beside it (what the Planner runs by default).
2. In real headless Chromium against `streamlit run app.py` (a fresh server on a free port,
   the shipped Summit log already in its database, as in the Docker image):
   - first page load: navigation start to the Home page rendered (loaded-logs table shown,
     script run over), for the server's first session and for later ones. Target <= 5 s.
   - also the cold case: an empty database, so the first session loads the Summit log.
   - Planner Run click to all six charts drawn, dp only and dp + baseline.
3. The default run (dp + equal share) as the page runs it since issue 12: in a worker process with
   a memory and time budget (appkit.worker), start to results saved in a workspace; the worker's
   overhead (spawn, imports, saving) is that minus the replay time it reports.
Writes artifacts/bench_app.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from appkit.server import CHROMIUM, CHROMIUM_ARGS, AppServer  # noqa: E402

OUT = ROOT / "artifacts" / "bench_app.json"


def _db_with_summit(path: Path) -> float:
    from planner.store import catalog, db

    t0 = time.perf_counter()
    con = db.connect(path)
    catalog.ensure_default(con)
    con.close()
    return time.perf_counter() - t0


def in_process(db_path: Path, reps: int) -> dict:
    import plotly.io as pio

    from appkit import charts, runs, state
    from planner.store import db

    con = db.connect(db_path, read_only=True)
    out = {}
    for label, baseline in (("dp", "none"), ("dp_and_equal_share", "equal-share")):
        sc = dict(state.DEFAULTS, baseline=baseline)
        times, replay = [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            res = runs.run_pair(sc, con=con, db_path=str(db_path))
            t1 = time.perf_counter()
            figs = charts.planner_figures(res, window_h=float(sc["hours"]))
            for f in figs.values():
                pio.to_json(f)
            times.append(time.perf_counter() - t0)
            replay.append(t1 - t0)
        out[label] = {"run_to_charts_s_median": statistics.median(times), "run_to_charts_s_all": times,
                      "replay_s_median": statistics.median(replay)}
    con.close()
    return out


class Server(AppServer):
    """Started on construction (startup_s = spawn to healthy), stopped by stop()."""

    def __init__(self, db_path: Path, workdir: Path):
        super().__init__(workdir, db_path)
        self.__enter__()

    def stop(self):
        self.__exit__(None, None, None)


def _settle(pg):
    pg.wait_for_timeout(500)  # the script run may not have started yet
    pg.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')",
                         timeout=180_000)


def _home_load(browser, url) -> float:
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    t0 = time.perf_counter()
    pg.goto(url + "/")
    pg.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=180_000)
    _settle(pg)
    dt = time.perf_counter() - t0
    ctx.close()
    return dt


def _planner_run(browser, url, query: str, reps: int) -> list[float]:
    """Run click to six drawn charts, each rep in a fresh session (no earlier charts on the page)."""
    out = []
    for _ in range(reps):
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        pg = ctx.new_page()
        pg.goto(f"{url}/planner?{query}")
        pg.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
        _settle(pg)
        t0 = time.perf_counter()
        pg.get_by_role("button", name="Run", exact=True).click()
        # six result charts drawn (axes in place; the pre-run preview chart does not count)
        pg.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot')).filter(e => "
                             "e.querySelector('.cartesianlayer') && !((e.querySelector('.gtitle') || {}).textContent"
                             " || '').startsWith('The pool of this window')).length >= 6", timeout=180_000)
        out.append(time.perf_counter() - t0)
        _settle(pg)
        ctx.close()
    return out


def in_browser(db_path: Path, workdir: Path, reps: int) -> dict:
    from playwright.sync_api import sync_playwright

    res = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        # warm database (as in the Docker image)
        srv = Server(db_path, workdir)
        try:
            first = _home_load(browser, srv.url)
            later = [_home_load(browser, srv.url) for _ in range(reps)]
            res["server_startup_s"] = srv.startup_s
            res["first_page_load_s"] = first
            res["later_page_load_s_median"] = statistics.median(later)
            dp = _planner_run(browser, srv.url, "baseline=none", reps)
            both = _planner_run(browser, srv.url, "baseline=equal-share", reps)
            res["run_click_to_charts_dp_s_median"] = statistics.median(dp)
            res["run_click_to_charts_dp_s_all"] = dp
            res["run_click_to_charts_dp_and_baseline_s_median"] = statistics.median(both)
        finally:
            srv.stop()
        # another session busy with a long replay (7 days, dp): does a new session still load?
        srv = Server(db_path, workdir)
        try:
            busy = browser.new_context(viewport={"width": 1400, "height": 1000})
            bp = busy.new_page()
            bp.goto(f"{srv.url}/planner?hours=168&baseline=none")
            bp.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
            _settle(bp)
            bp.get_by_role("button", name="Run", exact=True).click()
            bp.get_by_text("simulated").first.wait_for(timeout=60_000)  # the long run is under way
            res["page_load_while_other_session_runs_s"] = _home_load(browser, srv.url)
            res["other_session_still_running"] = bp.locator(
                '[data-testid="stStatusWidgetRunningIcon"]').count() > 0
            busy.close()
        finally:
            srv.stop()
        # cold database: the first session loads the shipped Summit log
        cold_db = workdir / "cold.duckdb"
        srv = Server(cold_db, workdir)
        try:
            res["cold_db_first_page_load_s"] = _home_load(browser, srv.url)
        finally:
            srv.stop()
        browser.close()
    return res


def via_worker(db_path: Path, reps: int) -> dict:
    """The same default run (dp + equal share) as the page runs it: in a budgeted worker process
    (appkit.worker: spawn, imports, replay, results saved in a workspace), start to saved."""
    from appkit import state, worker, workspace

    root = Path(tempfile.mkdtemp(prefix="bench_ws_"))
    try:
        d = workspace.path(root, workspace.create(root))
        sc = dict(state.DEFAULTS)
        times, replay = [], []
        for i in range(reps):
            t0 = time.perf_counter()
            job = worker.start(d, "replay", {"scenario": sc, "db": str(db_path), "rid": f"{i:016x}",
                                             "ws_dir": str(d)})
            outcome = worker.run_to_end(job, poll_s=0.05)
            times.append(time.perf_counter() - t0)
            assert outcome["status"] == "ok", outcome
            replay.append(outcome["result"]["wall_s"])
            workspace.load_run(d, f"{i:016x}")
        return {"start_to_saved_s_median": statistics.median(times), "start_to_saved_s_all": times,
                "replay_in_worker_s_median": statistics.median(replay),
                "worker_overhead_s_median": statistics.median(t - r for t, r in zip(times, replay))}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(reps: int = 5, browser: bool = True) -> dict:
    work = Path(tempfile.mkdtemp(prefix="bench_app_"))
    try:
        db_path = work / "planner.duckdb"
        out = {"load_avg_before": os.getloadavg(), "cpus": os.cpu_count(),
               "summit_ingest_s": _db_with_summit(db_path)}
        out["in_process"] = in_process(db_path, reps)
        out["worker"] = via_worker(db_path, reps)
        if browser and Path(CHROMIUM).exists():
            out["browser"] = in_browser(db_path, work, max(3, reps // 2 + 1))
        else:
            out["browser"] = None
        ip = out["in_process"]
        br = out["browser"] or {}
        out["headline"] = {
            "run_to_charts_dp_s": ip["dp"]["run_to_charts_s_median"],
            "run_to_charts_dp_and_baseline_s": ip["dp_and_equal_share"]["run_to_charts_s_median"],
            "worker_start_to_saved_dp_and_baseline_s": out["worker"]["start_to_saved_s_median"],
            "worker_overhead_s": out["worker"]["worker_overhead_s_median"],
            "browser_run_click_to_charts_dp_s": br.get("run_click_to_charts_dp_s_median"),
            "first_page_load_s": br.get("first_page_load_s"),
            "cold_db_first_page_load_s": br.get("cold_db_first_page_load_s"),
            "targets": "run to charts (dp) <= 3 s; first page load <= 5 s",
            "load_avg_1min_before": out["load_avg_before"][0],
        }
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(out, indent=1) + "\n")
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-browser", action="store_true")
    a = ap.parse_args()
    r = run(a.reps, not a.no_browser)
    print(json.dumps(r["headline"], indent=2))
    if r["browser"]:
        print(json.dumps(r["browser"], indent=2))
    print(f"wrote {OUT}")
