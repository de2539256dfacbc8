"""End-to-end in real headless Chromium: a Planner run's limits (cost-free twin, the clairvoyant
bound on its button, "dp reaches N % of the bound" and the relaxation), then a many-window run in
the Planner and in Compare (one shared component): band and strip plot, the paired comparison,
surviving a reload (the runs are saved in the workspace). One server, one page."""

from __future__ import annotations

import shutil

import pytest

from appkit.server import AppServer
from tests.helpers import SHOTS, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory, summit_db):
    d = tmp_path_factory.mktemp("browser_windows")
    db = d / "planner.duckdb"
    shutil.copy(summit_db, db)
    with AppServer(d, db) as srv:
        yield srv.url, d


def _strip_points(pg) -> int:
    """Points of the strip (one per window and allocator) in the many-window figure."""
    return pg.evaluate("""() => { const f = [...document.querySelectorAll('.js-plotly-plot')]
        .find(p => (p.layout && p.layout.title && String(p.layout.title.text).includes('windows: median')));
        if (!f) return -1;
        return f.data.filter(t => t.name === 'one window').reduce((n, t) => n + t.y.length, 0); }""")


def _wait_band_figure(page):
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')].some(p => p.layout && "
                           "p.layout.title && String(p.layout.title.text).includes('windows: median'))",
                           timeout=60_000)


def _run_many_windows(page, count: int):
    """Open the many-window part of the page, run `count` random 1 h windows, wait for the result."""
    page.get_by_text("Run this scenario over many windows").click()
    page.get_by_label("Window length (h)").fill("1")
    page.get_by_label("Window length (h)").press("Enter")
    settle(page)
    box = page.get_by_label("Windows: all, or a number of random ones")
    box.fill(str(count))
    box.press("Enter")
    settle(page)
    page.get_by_role("button", name="Run over many windows").click()
    page.get_by_text(f"{count} windows of 1 h").wait_for(timeout=300_000)
    settle(page)


def test_many_window_run_band_strip_and_reload(server, page):
    url, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    # a small window first: the run's limits, the clairvoyant bound on its button
    page.goto(f"{url}/planner?pool_size=32&allocator=dp&baseline=equal-share&count=2&hours=0.25")
    page.get_by_role("heading", name="Planner").wait_for()
    settle(page)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_role("heading", name="Limits of this run").wait_for(timeout=180_000)
    settle(page)
    assert "when they cost nothing (headroom" in page.content()
    limit = page.get_by_role("spinbutton", name="Solver time limit (s)")
    limit.fill("5")  # stopped early: the dual bound, with its gap
    limit.press("Enter")
    settle(page)
    page.get_by_role("button", name="Compute the clairvoyant bound").first.click()
    page.get_by_text("Relaxed: node identity relaxed").wait_for(timeout=240_000)
    settle(page)
    text = page.content()
    assert "dp reaches" in text and "% of the clairvoyant bound" in text and "equal-share reaches" in text
    page.get_by_role("heading", name="Limits of this run").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "planner_limits.png"))
    page.reload()  # the bound is saved beside the run
    page.get_by_text("Relaxed: node identity relaxed").wait_for(timeout=60_000)

    page.goto(f"{url}/planner?pool_size=256&allocator=dp&baseline=equal-share&count=10")
    page.get_by_role("heading", name="Planner").wait_for()
    settle(page)
    _run_many_windows(page, 3)
    _wait_band_figure(page)
    assert _strip_points(page) == 6  # 3 windows x 2 allocators
    assert "windows, by" in page.content()  # the paired sentence ("dp beats equal-share in ...")
    # the windows ran on a pool of 2 local processes (the page's default "Worker processes";
    # tests/app/test_windows_jobs.py: the grant, the pool's processes, a cancel leaving none)
    assert "in a pool of 2 worker processes" in page.content()
    assert "ws=" in page.url
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1500, "height": 2600})
    page.wait_for_timeout(1500)
    page.screenshot(path=str(SHOTS / "planner_windows.png"), full_page=True)

    page.reload()  # the saved run comes back without pressing anything
    page.get_by_text("3 windows of 1 h").wait_for(timeout=60_000)
    settle(page)
    _wait_band_figure(page)
    assert _strip_points(page) == 6

    # Compare: the grid's allocators over many windows, the same component (its own saved run)
    page.goto(f"{url}/compare")
    page.get_by_role("heading", name="Compare").wait_for()
    settle(page)
    _run_many_windows(page, 2)
    _wait_band_figure(page)
    assert _strip_points(page) == 4  # 2 windows x (dp, equal-share)
    assert "windows, by" in page.content()
    page.set_viewport_size({"width": 1500, "height": 2600})
    page.wait_for_timeout(1500)
    page.screenshot(path=str(SHOTS / "compare_windows.png"), full_page=True)
    page.reload()
    page.get_by_text("2 windows of 1 h").wait_for(timeout=60_000)
    settle(page)
    _wait_band_figure(page)
    assert _strip_points(page) == 4
