"""Re-take the README's screenshots of every page (docs/img/page-*.png) in real headless Chromium.

    python scripts/screenshots.py [--out docs/img] [--only planner,idle]

A fresh `streamlit run app.py` on a free port with a database holding the shipped logs; every page
on the shipped logs (Papers' overview and ModelArts' 110-node row, its reason open, the Planner after one
Run of its default scenario on Summit and Downloads after it, the Solver after a small benchmark, the
Idle page on KTH SP2 with its per-user view, Compare after its default grid), then a small SWF
uploaded on the Logs page (the first 2,000 jobs of KTH SP2) and the Idle page and Planner on it. Look
at every image before committing it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from appkit.server import CHROMIUM, CHROMIUM_ARGS, AppServer, small_swf  # noqa: E402

IDLE_JS = "() => !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')"


def settle(pg, ms: int = 800):
    pg.wait_for_timeout(ms)
    pg.wait_for_function(IDLE_JS, timeout=600_000)
    pg.wait_for_timeout(700)


def pick(pg, label: str, option: str):
    box = pg.get_by_test_id("stSelectbox").filter(has=pg.get_by_test_id("stWidgetLabel").get_by_text(label, exact=True))
    box.first.click()
    pg.get_by_role("option", name=option, exact=True).click()
    settle(pg)


FULL_JS = ("() => { const m = document.querySelector('[data-testid=\"stMain\"]') || document.body; "
           "return m.scrollHeight; }")


def shot(pg, out: Path, name: str, element=None):
    """The whole page, or one `element` of it (a locator): Streamlit scrolls inside its main block, so
    the viewport grows to the page's height first."""
    path = out / f"page-{name}.png"
    pg.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]'); if (m) m.scrollTo(0, 0); "
                "window.scrollTo(0, 0); }")
    h = int(pg.evaluate(FULL_JS))
    for _ in range(30):  # a long page (Papers) may still be growing: wait until its height holds
        pg.wait_for_timeout(1000)
        h2 = int(pg.evaluate(FULL_JS))
        if h2 == h:
            break
        h = h2
    pg.set_viewport_size({"width": 1500, "height": max(1100, min(h + 60, 12000))})
    pg.wait_for_timeout(1500)
    if element is None:
        pg.screenshot(path=str(path), full_page=True)
    else:
        element.screenshot(path=str(path))
    pg.set_viewport_size({"width": 1500, "height": 1100})
    print("wrote", path)


def main(out: Path, only: set[str] | None):
    from playwright.sync_api import sync_playwright

    from planner.store import catalog, db

    work = Path(tempfile.mkdtemp(prefix="shots_"))
    dbf = work / "planner.duckdb"
    con = db.connect(dbf)
    catalog.ensure_default(con)
    catalog.ensure_shipped(con)
    con.close()
    out.mkdir(parents=True, exist_ok=True)
    want = (lambda n: only is None or n in only)
    with AppServer(work, dbf, timeout_s=180) as srv, sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        pg = b.new_context(viewport={"width": 1500, "height": 1100}).new_page()
        pg.set_default_timeout(600_000)
        u = srv.url
        for name, path in (("home", "/"), ("logs", "/logs"), ("live", "/live"), ("papers", "/papers")):
            if want(name):
                pg.goto(u + path)
                settle(pg, 1500)
                shot(pg, out, name)
        if want("papers-modelarts"):  # one paper, the 110-node row's reason open: its experiments' bars
            pg.goto(u + "/papers?view=modelarts")
            settle(pg, 1500)
            row = pg.get_by_test_id("stExpander").filter(has_text="Extra jobs at 110 nodes").first
            row.locator("summary").click()
            settle(pg)
            shot(pg, out, "papers-modelarts", element=row)
        if want("solver"):  # after a small benchmark: its charts and table
            pg.goto(u + "/solver")
            settle(pg, 1500)
            reps = pg.get_by_label("Instances per cell")
            reps.fill("1")
            reps.press("Enter")
            settle(pg)
            pg.get_by_role("button", name="Run benchmark").click()
            pg.get_by_text("Medians per cell").first.wait_for()
            settle(pg, 2000)
            shot(pg, out, "solver")
        if want("planner") or want("downloads"):
            pg.goto(u + "/planner")
            settle(pg, 1500)
            pg.get_by_role("button", name="Run", exact=True).click()
            pg.get_by_text("Capacity answer").first.wait_for()
            settle(pg, 2000)
            if want("planner"):
                shot(pg, out, "planner")
            if want("downloads"):  # what the run gives to download (the same session: its workspace)
                pg.get_by_test_id("stSidebar").get_by_role("link", name="Downloads", exact=True).click()
                settle(pg, 1500)
                shot(pg, out, "downloads")
        if want("idle"):
            pg.goto(u + "/idle?log=kth-sp2-1996&view=all")  # every section (the default view: the overview)
            settle(pg, 1500)
            pick(pg, "Log", "kth-sp2-1996")
            settle(pg, 2000)
            shot(pg, out, "idle")
        if want("idle-philly"):
            pg.goto(u + "/idle?view=all")
            settle(pg, 1500)
            pick(pg, "Log", "philly-2017")
            settle(pg, 2000)
            shot(pg, out, "idle-philly")
        if want("compare"):
            pg.goto(u + "/compare")
            settle(pg, 1500)
            btn = pg.get_by_role("button", name="Run grid", exact=False)
            if btn.count():
                btn.first.click()
                settle(pg, 3000)
            shot(pg, out, "compare")
        if want("uploaded"):
            f = work / "kth-first-2000.swf"
            f.write_text(small_swf(2000))
            pg.goto(u + "/logs")
            settle(pg, 1500)
            pg.locator("input[type=file]").first.set_input_files(str(f))
            settle(pg, 1500)
            pg.get_by_role("button", name="Load", exact=True).click()
            pg.get_by_text("kth-first-2000").first.wait_for()
            settle(pg, 3000)
            shot(pg, out, "logs-uploaded")
            pg.get_by_role("link", name="Idle capacity").first.click()
            settle(pg, 1500)
            pick(pg, "Log", "kth-first-2000")
            settle(pg, 2000)
            shot(pg, out, "idle-uploaded")
            pg.get_by_role("link", name="Planner").first.click()
            settle(pg, 1500)
            pick(pg, "Log", "kth-first-2000")
            pick(pg, "Arrivals", "from the log (its jobs' submissions)")
            pg.get_by_role("button", name="Run", exact=True).click()
            pg.get_by_text("Capacity answer").first.wait_for()
            settle(pg, 2000)
            shot(pg, out, "planner-uploaded")
        b.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    ap.add_argument("--only", default=None, help="comma-separated shot names")
    a = ap.parse_args()
    main(a.out, set(a.only.split(",")) if a.only else None)
