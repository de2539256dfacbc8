"""No setting that silently goes wrong (issue 25), in real headless Chromium: the Planner through
log switches large -> small -> large (Summit 4,734 nodes -> KTH SP2 100 -> Summit), a partial link
(a log and nothing else) and a link whose pool size does not fit; the Idle and Compare pages on
the small log after the large one. Each value that does not fit is reset to the log's default
with a visible note; nothing of the previous log stays.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from appkit import nav
from appkit.server import CHROMIUM, CHROMIUM_ARGS, AppServer

pytestmark = [pytest.mark.slow, pytest.mark.browser]
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"


@pytest.fixture(scope="module")
def server(tmp_path_factory, summit_db):
    d = tmp_path_factory.mktemp("switch")
    db = d / "planner.duckdb"
    shutil.copy(summit_db, db)
    with AppServer(d, db) as srv:
        yield srv.url


@pytest.fixture(scope="module")
def page():
    if not Path(CHROMIUM).exists() and os.environ.get("CI", "").lower() != "true":
        pytest.skip(f"{CHROMIUM} not found")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        pg = b.new_context(viewport={"width": 1500, "height": 1100}).new_page()
        pg.set_default_timeout(120_000)
        yield pg
        b.close()


def _settle(pg):
    pg.wait_for_timeout(500)
    pg.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')",
                         timeout=180_000)
    pg.wait_for_timeout(300)


def _pick(pg, label: str, option: str):
    """Choose `option` in the selectbox labelled `label`."""
    box = pg.get_by_test_id("stSelectbox").filter(has=pg.get_by_test_id("stWidgetLabel").get_by_text(label, exact=True))
    box.first.click()
    pg.get_by_role("option", name=option, exact=True).click()
    _settle(pg)


def _value(pg, label: str, want: str | None = None, timeout_s: float = 90.0) -> str:
    """The value of the text or number input labelled `label`; with `want`, waits (a rerun may
    still be drawing) until it shows that value or the time is up, and returns what it shows."""
    loc = pg.locator(f"input[aria-label=\"{label}\"]").first
    loc.wait_for(timeout=timeout_s * 1000)
    waited = 0.0
    while True:
        v = loc.input_value()
        if want is None or v == want or waited >= timeout_s:
            return v
        pg.wait_for_timeout(500)
        waited += 0.5


def _alerts(pg) -> str:
    return " | ".join(pg.locator("[data-testid=stAlert]").all_inner_texts())


def test_planner_log_switches_and_partial_links(server, page):
    pg = page
    pg.goto(f"{server}/planner")
    _settle(pg)
    assert _value(pg, "Pool size (nodes)", "1024") == "1024"
    _pick(pg, "Log", "kth-sp2-1996")  # large -> small
    assert _value(pg, "Pool size (nodes)", "100") == "100"
    assert "Pool size 1024 does not fit kth-sp2-1996" in _alerts(pg)
    start_small = _value(pg, "Window start (UTC, ISO)")
    assert start_small.startswith("1996-10-02")  # inside KTH, after its 52 h warm-up (not the Summit start)
    assert "warm-up" in _alerts(pg)
    _pick(pg, "Log", "summit-2021")  # small -> large: the pool size does not stick at 100
    assert _value(pg, "Pool size (nodes)", "1024") == "1024"
    assert "previous log's default" in _alerts(pg)
    assert _value(pg, "Window start (UTC, ISO)").startswith("2021-02-")
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SHOTS / "planner_after_switches.png"), full_page=True)

    # a link naming a log and nothing else: start, horizon and pool size come from that log
    pg.goto(f"{server}/planner?log=kth-sp2-1996")
    _settle(pg)
    assert _value(pg, "Pool size (nodes)", "100") == "100"
    assert _value(pg, "Window start (UTC, ISO)", start_small) == start_small
    assert pg.get_by_role("button", name="Run", exact=True).first.is_enabled()
    # a link whose pool size does not fit: reset with a note
    pg.goto(f"{server}/planner?log=kth-sp2-1996&pool_size=4000")
    _settle(pg)
    assert _value(pg, "Pool size (nodes)", "100") == "100"
    assert "does not fit" in _alerts(pg)
    # back to the large log by link: nothing of KTH stays
    pg.goto(f"{server}/planner?log=summit-2021")
    _settle(pg)
    assert _value(pg, "Pool size (nodes)", "1024") == "1024"
    assert _value(pg, "Window start (UTC, ISO)").startswith("2021-02-")


def test_idle_and_compare_follow_the_log(server, page):
    pg = page
    pg.goto(f"{server}/idle")
    _settle(pg)
    _pick(pg, "Log", "theta-2022")
    text = pg.locator("[data-testid=stMain]").inner_text()
    assert "Harvestable:" in text and "planned down / maintenance" in text
    assert "Outages:" in text and "Warm-up:" in text
    pg.screenshot(path=str(SHOTS / "idle_split_theta.png"), full_page=True)
    pg.goto(f"{server}/compare")
    _settle(pg)
    _pick(pg, "Log", "kth-sp2-1996")
    # the grid's pool sizes fit the small log and its window starts after the warm-up
    assert _value(pg, "Window start (UTC, ISO)").startswith("1996-10-02")
    main = pg.locator("[data-testid=stMain]").inner_text()
    assert "4096" not in main and "kth-sp2-1996 has 100 nodes" not in main or "25" in main


def test_upload_trainer_csv_run_and_read_the_capacity_answer(server, page, tmp_path):
    """The workload in the operator's hands: a bad Trainer CSV gives one line naming its line and
    field; a good one is previewed, becomes the workload, runs, and the capacity answer shows."""
    pg = page
    pg.goto(f"{server}/planner?log=summit-2021&hours=2&pool_size=256&baseline=none")
    _settle(pg)
    pg.get_by_text("Upload a Trainer CSV", exact=False).first.click()
    bad = tmp_path / "bad.csv"
    bad.write_text("id,model,submit_s,work_samples\nt1,AlexNet,0,1e8\nt2,NoSuchNet,5,1e8\n")
    pg.locator("input[type=file]").first.set_input_files(str(bad))
    pg.get_by_text("line 3, field 'model'", exact=False).first.wait_for()
    err = _alerts(pg)
    assert "bad.csv, line 3, field 'model'" in err and "NoSuchNet" in err and "/" not in err.split("bad.csv")[0]
    good = ROOT / "tests" / "golden" / "trainers.csv"
    pg.locator("input[type=file]").first.set_input_files(str(good))
    pg.get_by_text("40 Trainers", exact=False).first.wait_for()  # the preview
    _settle(pg)
    pg.get_by_role("button", name="Run", exact=True).first.click()
    pg.get_by_text("Capacity answer", exact=False).first.wait_for(timeout=300_000)
    # the tiles come later in the same script run as the subheader: wait for them, not for the status
    # widget (a short run can end before Streamlit shows it, so _settle alone may read a half-drawn page)
    pg.get_by_text("queueing p95 (min)", exact=False).first.wait_for(timeout=120_000)
    pg.get_by_text("Trainers arrived", exact=False).first.wait_for(timeout=120_000)
    _settle(pg)
    main = pg.locator("[data-testid=stMain]").inner_text()
    assert "delivered node-hours / week" in main and "queueing p95 (min)" in main
    assert "40 Trainers arrived" in main
    pg.screenshot(path=str(SHOTS / "planner_capacity_answer.png"), full_page=True)


_PAGES = tuple(p.title for p in nav.PAGES)  # every page of the app's navigation


def _open(pg, name: str):
    """A page through the sidebar (the session and its workspace stay)."""
    pg.get_by_test_id("stSidebar").get_by_role("link", name=name, exact=True).click()
    _settle(pg)
    assert pg.locator("[data-testid=stException]").count() == 0, name


def test_every_page_through_uploaded_and_shipped_logs_and_a_reload(server, page, tmp_path):
    """Issue 25: an uploaded log (the first 2,000 KTH SP2 jobs) <-> a shipped one (Summit), every page,
    then a reload: each page shows the chosen log's values, never the other log's."""
    from appkit.server import small_swf

    pg = page
    f = tmp_path / "kth-first-2000.swf"
    f.write_text(small_swf(2000))
    pg.goto(f"{server}/logs")
    _settle(pg)
    pg.locator("input[type=file]").first.set_input_files(str(f))
    _settle(pg)
    pg.get_by_role("button", name="Load", exact=True).click()
    pg.get_by_text("Loaded kth-first-2000", exact=False).first.wait_for()
    _settle(pg)
    for name in _PAGES:  # the uploaded log is the log of every page
        _open(pg, name)
        if name in ("Idle capacity", "Planner", "Compare"):
            main = pg.locator("[data-testid=stMain]").inner_text()
            assert "kth-first-2000" in main, name
            # its load report's warning (busy nodes above the machine size) is stored with it: on every page
            assert "warning(s) from loading kth-first-2000" in main, name
        if name == "Planner":
            assert _value(pg, "Pool size (nodes)", "100") == "100"
            assert _value(pg, "Window start (UTC, ISO)").startswith("1996-")
    _open(pg, "Idle capacity")  # uploaded -> shipped on the Idle page, then a reload
    _pick(pg, "Log", "summit-2021")
    pg.reload()
    _settle(pg)
    pg.get_by_text("summit-2021: node log", exact=False).first.wait_for()  # the Idle page's log survives it
    _open(pg, "Planner")
    assert _value(pg, "Pool size (nodes)", "1024") == "1024"  # nothing of the 100-node upload stays
    assert _value(pg, "Window start (UTC, ISO)").startswith("2021-02-")
    _open(pg, "Idle capacity")  # shipped -> uploaded
    _pick(pg, "Log", "kth-first-2000")
    pg.get_by_text("kth-first-2000: jobs log", exact=False).first.wait_for()
    _open(pg, "Planner")
    assert _value(pg, "Pool size (nodes)", "100") == "100"
    assert _value(pg, "Window start (UTC, ISO)").startswith("1996-")
    # partial links (a log and the workspace, nothing else) on the Idle and Compare pages
    ws = pg.url.split("ws=", 1)[1].split("&", 1)[0]
    pg.goto(f"{server}/idle?log=theta-2022&ws={ws}")
    _settle(pg)
    pg.get_by_text("theta-2022: jobs log", exact=False).first.wait_for()
    pg.goto(f"{server}/compare?log=kth-first-2000&ws={ws}")
    _settle(pg)
    assert _value(pg, "Window start (UTC, ISO)").startswith("1996-10-01")  # the upload's, after its warm-up
