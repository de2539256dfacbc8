"""Upload memory benchmark (issue 23): the app server's peak RSS while one big upload arrives.

    python benchmarks/bench_upload_memory.py [--mib 300] [--out artifacts/bench_upload_memory.json]

Starts `streamlit run app.py` on a free loopback port with a temporary database (the shipped Summit
log) and workspace root, opens the Logs page in headless Debian Chromium (Playwright, never
`playwright install`), waits until the page has settled (the baseline: the server process's RSS),
then chooses a generated SWF of --mib MiB in the file box and samples the server's RSS every 20 ms
(psutil, the server process only: the workers are not involved before Load) until the page shows the
preview of the staged file. Prints and writes: baseline, peak during the upload, peak minus baseline,
RSS after, seconds from choosing the file to the preview.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from appkit.server import CHROMIUM, CHROMIUM_ARGS, AppServer, RssSampler, swf_file  # noqa: E402
from planner.store import catalog, db  # noqa: E402

MIB = 2**20


def settle(pg):
    pg.wait_for_timeout(300)
    pg.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]')",
                         timeout=180_000)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=300)
    ap.add_argument("--out", default="artifacts/bench_upload_memory.json")
    a = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="bench_upload_"))
    try:
        dbp = tmp / "planner.duckdb"
        con = db.connect(dbp)
        catalog.ensure_default(con)
        con.close()
        big = swf_file(tmp / "big.swf", a.mib)
        with AppServer(tmp, dbp) as srv, sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            ctx = b.new_context()
            pg = ctx.new_page()
            pg.set_default_timeout(300_000)
            pg.goto(f"{srv.url}/logs")
            pg.get_by_role("heading", name="Logs").wait_for()
            settle(pg)
            time.sleep(2)
            base = psutil.Process(srv.proc.pid).memory_info().rss
            t0 = time.perf_counter()
            with RssSampler(srv.proc.pid) as s:
                pg.locator('input[type="file"]').set_input_files(str(big))
                pg.get_by_text("First lines of big.swf").wait_for()
                settle(pg)
            wall = time.perf_counter() - t0
            after = psutil.Process(srv.proc.pid).memory_info().rss
            ctx.close()
            b.close()
        res = {"upload_mib": a.mib, "baseline_mib": round(base / MIB, 1), "peak_mib": round(s.peak / MIB, 1),
               "peak_over_baseline_mib": round((s.peak - base) / MIB, 1), "after_mib": round(after / MIB, 1),
               "samples": s.samples, "choose_to_preview_s": round(wall, 2),
               "load_avg_1min": round(psutil.getloadavg()[0], 2),
               "when": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(res, indent=1))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1) + "\n")
    return res


if __name__ == "__main__":
    main()
