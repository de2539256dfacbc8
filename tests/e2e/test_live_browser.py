"""The Live page in real headless Chromium against the real Slurm test cluster (tests/e2e/conftest.py).

Saves the connection settings (the cluster's SLURM_CONF, partition batch, 1 s interval, one elastic
job), switches Record on, sees the harvestable nodes per partition, sees a job submitted on the cluster
lower the count without a full page rerun, sees a recommendation, makes a log of the recording; a second
workspace sees none of it. Screenshots under artifacts/screenshots/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from appkit.server import CHROMIUM, CHROMIUM_ARGS, AppServer

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
IN_CI = os.environ.get("CI", "").lower() == "true"


def _need(ok: bool, why: str):
    if not ok:
        if IN_CI:
            pytest.fail(f"{why} (CI=true: the browser test must run)")
        pytest.skip(why)


def _harvestable_now(page) -> int:
    text = page.get_by_text(re.compile(r"nodes harvestable")).first.inner_text()
    return int(re.search(r"(\d+) of \d+ nodes harvestable", text).group(1))


def test_live_page_against_the_cluster(slurm_cluster, summit_db, tmp_path):
    _need(Path(CHROMIUM).exists(), f"{CHROMIUM} not found (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need(False, "playwright for Python is not installed")
    drv = slurm_cluster["driver"]
    db = tmp_path / "planner.duckdb"
    shutil.copy(summit_db, db)
    SHOTS.mkdir(parents=True, exist_ok=True)
    jobs = json.dumps({"tfwd_s": 5, "trainers": [{"id": "a", "model": "resnet18", "nmin": 1, "nmax": 3}]})
    blocker = None
    with AppServer(tmp_path, db) as srv, sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = b.new_page(viewport={"width": 1400, "height": 1800})
            page.goto(f"{srv.url}/live", timeout=120_000)
            page.get_by_text("Connection and jobs").first.wait_for(timeout=120_000)
            page.get_by_role("textbox", name="SLURM_CONF", exact=True).fill(slurm_cluster["conf"])
            page.get_by_role("textbox", name="Harvestable partitions", exact=True).fill("batch")
            page.get_by_role("spinbutton", name="Interval (s)", exact=True).fill("1")
            page.get_by_role("textbox", name="Elastic jobs (JSON, optional)", exact=True).fill(jobs)
            page.get_by_role("button", name="Save").click()
            page.get_by_text("Saved.").wait_for(timeout=60_000)
            page.get_by_text("Record (poll the cluster)").click()
            page.get_by_text("Harvestable nodes now").wait_for(timeout=60_000)
            page.wait_for_function("document.body.innerText.includes('6 of 8 nodes harvestable')", timeout=60_000)
            page.get_by_text("sbatch").first.wait_for(state="attached", timeout=60_000)  # a grow recommendation (a)
            page.screenshot(path=str(SHOTS / "live_page.png"), full_page=True)
            marker = page.evaluate("() => { window.__no_full_rerun = 1; return 1; }")
            blocker = drv.submit(2, seconds=600, partition="batch", name="main", nodelist="node5,node6")
            drv.wait_state(blocker, "RUNNING")
            page.wait_for_function("document.body.innerText.includes('4 of 8 nodes harvestable')", timeout=60_000)
            assert page.evaluate("() => window.__no_full_rerun") == marker  # same document: the fragment reran
            assert _harvestable_now(page) == 4
            page.get_by_text("Record (poll the cluster)").click()  # stop polling
            time.sleep(1.5)
            page.get_by_role("textbox", name="Log name for the recording", exact=True).fill("from-live")
            page.get_by_role("button", name="Make a log").click()
            page.get_by_text(re.compile("Log 'from-live' made from")).wait_for(timeout=60_000)
            page.screenshot(path=str(SHOTS / "live_page_export.png"), full_page=True)
            # the log is there for the other pages of this workspace
            ws = page.url.split("ws=")[1].split("&")[0]
            page.goto(f"{srv.url}/logs?ws={ws}", timeout=120_000)
            page.get_by_text("from-live").first.wait_for(timeout=60_000)
            # another workspace: no settings, no recording
            other = b.new_page()
            other.goto(f"{srv.url}/live", timeout=120_000)
            other.get_by_text("Connection and jobs").first.wait_for(timeout=120_000)
            other.get_by_text("No recording yet").wait_for(timeout=60_000)
            assert other.get_by_role("textbox", name="SLURM_CONF", exact=True).input_value() == ""
            assert "ws=" + ws not in other.url
        finally:
            b.close()
            if blocker:
                drv.cancel(blocker)
                drv.wait_nodes(lambda st: st["node5"] == "idle" and st["node6"] == "idle", timeout=60)
