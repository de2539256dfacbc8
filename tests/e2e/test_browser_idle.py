"""The Idle page in real headless Chromium (as tests/e2e/test_browser.py): every view draws, no
exception, nothing cut off in the metrics; saves artifacts/screenshots/idle.png (the README's
docs/img/page-idle.png comes from scripts/screenshots.py, on the KTH SP2 log)."""

from __future__ import annotations

import shutil

import pytest

from appkit.server import AppServer
from planner import logs
from planner.store import db
from tests.helpers import SHOTS, SMALL, settle, swf

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
    page.goto(f"{server}/idle")
    page.get_by_role("heading", name="Idle capacity").wait_for()
    settle(page)
    page.get_by_text("When and where the machine is idle").wait_for()
    page.locator(".js-plotly-plot").nth(9).wait_for()
    # the eight views, the idle split's bar (issue 25) and the calibration plot (issue 24)
    assert page.locator(".js-plotly-plot").count() == 10
    page.get_by_test_id("stSelectbox").first.click()
    page.get_by_role("option", name="small").click()
    settle(page)
    page.get_by_text("Where the idle capacity comes from").wait_for()
    page.get_by_text("Idle and wait per partition").wait_for()
    page.locator(".js-plotly-plot").nth(12).wait_for()
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
