"""The Idle page in real headless Chromium (as tests/e2e/test_browser.py): every view draws, no
exception, nothing cut off in the metrics; saves artifacts/screenshots/idle.png (the README's
docs/img/page-idle.png comes from scripts/screenshots.py, on the KTH SP2 log)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from appkit.server import AppServer
from planner import logs
from planner.store import db
from tests.helpers import SHOTS, SMALL, settle, settled, swf

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory, summit_db):
    d = tmp_path_factory.mktemp("profbrowser")
    dbp = d / "planner.duckdb"
    shutil.copy(summit_db, dbp)
    (d / "small.swf").write_text(swf(SMALL))
    con = db.connect(dbp)
    logs.ingest(con, d / "small.swf", name="small")
    con.close()
    with AppServer(d, dbp) as srv:
        yield srv.url


@pytest.mark.slow  # runs in CI (.ci/run: pytest -m slow); keeps the default run short
def test_idle_page_views_in_a_real_browser(server, page):  # noqa: F811 (fixture)
    page.goto(f"{server}/idle")  # the default view: the overview (the split, N(t), the events)
    page.get_by_role("heading", name="Idle capacity").wait_for()
    settle(page)
    # drawn first as pictures (no Plotly: issue 25, speed), each a real SVG the browser decoded
    pics = page.locator('[data-testid="stImage"] img')
    pics.nth(2).wait_for()
    settled(page)
    assert pics.count() == 3 and page.locator(".js-plotly-plot").count() == 0 and "view=overview" in page.url
    assert page.evaluate("""() => [...document.querySelectorAll('[data-testid="stImage"] img')].every(
        i => i.complete && i.naturalWidth > 0 && i.width > 300 && i.src.startsWith('data:image/svg'))""")
    page.get_by_text("Interactive charts", exact=True).click()  # the same three as Plotly figures
    settle(page)
    page.locator(".js-plotly-plot").nth(2).wait_for()
    settled(page)
    assert page.locator(".js-plotly-plot").count() == 3 and pics.count() == 0
    # issue 25: every figure saves as PNG from its camera icon (Plotly's modebar): a real PNG file
    chart = page.locator(".js-plotly-plot").nth(1)
    chart.hover()
    with page.expect_download() as dl:
        chart.locator('[data-title="Download plot as a PNG"]').click()
    png = Path(dl.value.path()).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000, len(png)
    assert dl.value.suggested_filename.endswith(".png")
    assert "charts=interactive" in page.url  # kept in the URL: a reload draws the Plotly figures again
    page.reload()
    page.get_by_role("heading", name="Idle capacity").wait_for()
    settle(page)
    page.locator(".js-plotly-plot").nth(2).wait_for()
    settled(page)
    assert page.locator(".js-plotly-plot").count() == 3 and pics.count() == 0
    page.get_by_text("Everything", exact=True).click()  # every section: the view the URL keeps
    settle(page)
    page.get_by_text("When and where the machine is idle").wait_for()
    page.locator(".js-plotly-plot").nth(9).wait_for()
    settled(page)
    # the eight views, the idle split's bar (issue 25) and the calibration plot (issue 24)
    assert page.locator(".js-plotly-plot").count() == 10 and "view=all" in page.url
    page.get_by_test_id("stSelectbox").first.click()
    page.get_by_role("option", name="small").click()
    settle(page)
    page.get_by_text("Where the idle capacity comes from").wait_for()
    page.get_by_text("Idle and wait per partition").wait_for()
    page.locator(".js-plotly-plot").nth(12).wait_for()
    settled(page)
    # + partitions, idle while waiting, idle and wait per partition (user, group, queue: the radio)
    assert page.locator(".js-plotly-plot").count() == 13
    assert page.locator('[data-testid="stException"]').count() == 0
    # no metric value is cut off (an ellipsis is CSS overflow: wider content than its box)
    cut = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stMetricValue"], '
                           + '[data-testid="stMetricValue"] *')].filter(e => e.scrollWidth > e.clientWidth + 1)
                           .map(e => e.innerText)""")
    assert cut == []
    h = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": 1500, "height": int(h) + 50})
    page.wait_for_timeout(1500)  # let plotly redraw at the new size
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "idle.png"), full_page=True)



_RANGES = """() => Object.fromEntries([...document.querySelectorAll('.js-plotly-plot')]
    .filter(g => g.layout && g.layout.title && g.layout.xaxis)
    .map(g => [g.layout.title.text.replace(/<[^>]+>/g, ''), g.layout.xaxis.range]))"""
_TIME_CHARTS = ("Idle nodes N(t)", "Events per", "Idle node-hours per calendar")


def _time_ranges(page) -> dict:
    return {t: r for t, r in page.evaluate(_RANGES).items() if t.startswith(_TIME_CHARTS)}


@pytest.mark.slow
def test_one_drag_zooms_every_time_chart(server, page):  # noqa: F811 (fixture)
    """Issue 25: drag across N(t) in a real browser: N(t), the events and the calendar days all show
    that range, which the URL keeps (from/to): a reload shows it again; "Whole window" undoes it."""
    page.goto(f"{server}/idle?log=small&view=all")  # N(t) and the events (overview) with the days (where)
    page.get_by_text("Drag across any time chart", exact=False).wait_for()
    settle(page)
    for _ in range(120):  # every chart drawn
        before = _time_ranges(page)
        if len(before) == 3:
            break
        page.wait_for_timeout(500)
    assert len(before) == 3, page.evaluate(_RANGES)
    chart = page.locator(".js-plotly-plot").filter(has_text="Idle nodes N(t)").first
    chart.scroll_into_view_if_needed()
    box = chart.locator(".nsewdrag").first.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 0.25 * box["width"], y)
    page.mouse.down()
    page.mouse.move(box["x"] + 0.5 * box["width"], y, steps=5)
    page.mouse.move(box["x"] + 0.75 * box["width"], y, steps=5)
    page.mouse.up()
    for _ in range(120):  # the drag reruns the page (Streamlit's selection event)
        page.wait_for_timeout(500)
        after = _time_ranges(page)
        if len(after) == 3 and after != before and len({tuple(r) for r in after.values()}) == 1:
            break
    settle(page)
    after = _time_ranges(page)
    assert len({tuple(r) for r in after.values()}) == 1, after  # one range, every time chart
    lo, hi = (str(v)[:19] for v in next(iter(after.values())))
    assert "2021-01-04 00:15" < lo < hi < "2021-01-04 02:45", (lo, hi)  # the dragged middle half
    # the range is in the URL (from/to, as Grafana's): a reload shows the same range on every chart
    for _ in range(20):
        if "from=" in page.url and "to=" in page.url:
            break
        page.wait_for_timeout(250)
    assert f"from={lo.replace(' ', 'T').replace(':', '%3A')}" in page.url, (page.url, lo)
    page.reload()
    page.get_by_text("Drag across any time chart", exact=False).wait_for()
    settle(page)
    for _ in range(120):
        reloaded = _time_ranges(page)
        if len(reloaded) == 3 and len({tuple(r) for r in reloaded.values()}) == 1 and reloaded != before:
            break
        page.wait_for_timeout(500)
    assert {k: [str(v)[:19] for v in r] for k, r in reloaded.items()} == {k: [lo, hi] for k in after}, reloaded
    page.get_by_role("button", name="Whole window").click()
    settle(page)
    for _ in range(60):
        page.wait_for_timeout(500)
        if _time_ranges(page) == before:
            break
    assert _time_ranges(page) == before
    assert "from=" not in page.url and "to=" not in page.url  # the whole window: no range in the URL
