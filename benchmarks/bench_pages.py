"""Benchmark: first load of every page, and Run to charts for the default run on Summit, in real
headless Chromium; where the time of a Run goes (issue 25's speed targets: first load of any page
under 1.5 s, Run to charts under 2 s, on a quiet machine). Figures, not a test.

    python benchmarks/bench_pages.py [--reps 3] [--no-browser]

1. In Chromium against `streamlit run app.py` (a fresh server on a free port; its database holds
   the shipped logs already, as after the first start):
   - each page's first load in a new browser session: navigation start to the page rendered and
     its script run over (the status widget gone), `reps` sessions per page, median;
   - the Planner's Run click to its result charts drawn, default scenario (one day of Summit
     from 2021-02-10 20:21:15, 1024 nodes, HPO, dp against equal share), median.
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
IDLE_JS = "() => !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')"


def _prepare_db(path: Path) -> float:
    from planner.store import catalog, db

    t0 = time.perf_counter()
    con = db.connect(path)
    catalog.ensure_default(con)
    catalog.ensure_shipped(con)
    con.close()
    return time.perf_counter() - t0


def _page_load(browser, url: str) -> float:
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    t0 = time.perf_counter()
    pg.goto(url)
    pg.locator('[data-testid="stMainBlockContainer"] h1').first.wait_for(timeout=180_000)
    pg.wait_for_timeout(300)  # a rerun the page asks for may not have started yet
    pg.wait_for_function(IDLE_JS, timeout=180_000)
    dt = time.perf_counter() - t0 - 0.3
    ctx.close()
    return dt


def _run_to_charts(browser, url: str) -> float:
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.goto(f"{url}/planner")
    run = pg.get_by_role("button", name="Run", exact=True)
    run.wait_for(timeout=120_000)
    pg.wait_for_timeout(300)
    pg.wait_for_function(IDLE_JS, timeout=180_000)
    t0 = time.perf_counter()
    run.click()
    pg.get_by_text("Capacity answer").first.wait_for(timeout=300_000)
    pg.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot')).filter(e => "
                         "e.querySelector('.cartesianlayer')).length >= 6", timeout=300_000)
    dt = time.perf_counter() - t0
    ctx.close()
    return dt


BLANK_APP = """import streamlit as st

st.set_page_config(page_title="blank", layout="wide")


def home():
    st.title("Blank")


st.navigation([st.Page(home, title="Home", default=True)]).run()
"""


def in_browser(db_path: Path, work: Path, reps: int) -> dict:
    from playwright.sync_api import sync_playwright

    out: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        with AppServer(work, db_path) as srv:
            out["server_startup_s"] = srv.startup_s
            out["server_first_session_home_s"] = _page_load(browser, srv.url + "/")
            pages = {}
            for page in PAGES:
                times = [_page_load(browser, f"{srv.url}/{page}") for _ in range(reps)]
                pages[page or "home"] = {"median_s": statistics.median(times), "all_s": times}
            out["first_load"] = pages
            runs = [_run_to_charts(browser, srv.url) for _ in range(reps)]
            out["run_to_charts_default_s"] = {"median_s": statistics.median(runs), "all_s": runs}
        # the floor: Streamlit's own first load (its page, scripts and websocket in a new browser
        # session) of a page that only draws a title, on the same machine at the same time
        blank = work / "blank_app.py"
        blank.write_text(BLANK_APP)
        with AppServer(work, db_path, app=blank) as srv:
            _page_load(browser, srv.url + "/")
            times = [_page_load(browser, srv.url + "/") for _ in range(reps)]
            out["blank_streamlit_page_s"] = {"median_s": statistics.median(times), "all_s": times}
        browser.close()
    return out


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


def run(reps: int = 3, browser: bool = True) -> dict:
    work = Path(tempfile.mkdtemp(prefix="bench_pages_"))
    try:
        db_path = work / "planner.duckdb"
        out = {"load_avg_before": os.getloadavg(), "cpus": os.cpu_count(), "db_prepare_s": _prepare_db(db_path)}
        out["run_parts"] = where_the_time_goes(db_path, reps)
        out["browser"] = in_browser(db_path, work, reps) if browser and Path(CHROMIUM).exists() else None
        out["load_avg_after"] = os.getloadavg()
        out["targets"] = "first load of any page < 1.5 s; Run to charts < 2 s (quiet machine)"
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(out, indent=1) + "\n")
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-browser", action="store_true")
    a = ap.parse_args()
    r = run(a.reps, not a.no_browser)
    rp = r["run_parts"]
    print("Run parts (median wall s / CPU s):")
    for k, v in rp["parts_s_median"].items():
        print(f"  {k}: {v:.3f} / {rp['parts_cpu_s_median'][k]:.3f}")
    print(f"  Run to charts in process: {rp['run_to_charts_in_process_s']:.2f} s with the spare worker, "
          f"{rp['run_to_charts_in_process_cold_worker_s']:.2f} s with a cold one")
    if r["browser"]:
        b = r["browser"]
        print("First load (median s): " + ", ".join(f"{k} {v['median_s']:.2f}" for k, v in b["first_load"].items()))
        print(f"Run to charts, default run on Summit (median): {b['run_to_charts_default_s']['median_s']:.2f} s")
        print(f"A blank Streamlit page, first load (median): {b['blank_streamlit_page_s']['median_s']:.2f} s")
    print(f"load average before/after: {r['load_avg_before'][0]:.1f} / {r['load_avg_after'][0]:.1f}; wrote {OUT}")
