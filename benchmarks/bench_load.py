"""Load benchmark: 10 concurrent browser sessions on one app, each uploading its own log and
running a simulation on it.

    python benchmarks/bench_load.py [--sessions 10] [--out artifacts/bench_load.json]

Starts `streamlit run app.py` on a free loopback port with a temporary PLANNER_DB (the shipped
Summit log preloaded) and PLANNER_DATA_DIR / PLANNER_SESSIONS_DIR, then drives N browser
contexts (separate cookies = separate Streamlit sessions) in one headless Debian Chromium
(/usr/bin/chromium via Playwright, never `playwright install`), all at once. Each session:

  1. opens the Logs page;
  2. uploads its own small SWF (the header and the first 150 + 25*i jobs of the shipped KTH SP2
     log, so every file differs), presses Load and waits for "Loaded <name>";
  3. checks the page lists its upload and no other session's;
  4. goes to the Planner through the app's navigation (same session), picks its log there (the
     page moves the window into the log: 24 h, all its nodes) and checks the log choices offer its
     upload and no other session's; runs the scenario (dp against equal share, HPO workload)
     until the headline numbers show;
  5. checks the Planner names its own log only, no exception box anywhere.

Measured: the response time of every interaction (page open, upload, log pick, page switch, run)
from the user's action to the element that shows its result; p50/p95/max over all of them and per
kind; peak RSS of the server process (psutil, sampled every 0.1 s, children included); the CPU
seconds the server and the whole machine spent; whether the server stayed healthy. Writes the JSON
to --out. Loopback only; every wait is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # appkit sits beside app.py, not installed
from appkit.server import CHROMIUM, CHROMIUM_ARGS, AppServer, small_swf  # noqa: E402

OUT = ROOT / "artifacts" / "bench_load.json"
STEP_TIMEOUT_MS = 300_000  # no single interaction may take longer (bounded waits)


def wait_for_chromium(max_s: float) -> None:
    """Engineer E may still be installing Debian's chromium: wait (bounded) for the binary."""
    deadline = time.time() + max_s
    while not Path(CHROMIUM).exists():
        if time.time() > deadline:
            raise SystemExit(f"{CHROMIUM} not found after {max_s:.0f} s (apt-get install chromium)")
        time.sleep(5)


class Server(AppServer):
    """The app server plus a sampler of its peak RSS (children included)."""

    def __init__(self, work: Path):
        from planner.store import catalog, db

        dbf = work / "planner.duckdb"
        con = db.connect(dbf)
        catalog.ensure_default(con)  # preloaded: the bench measures sessions, not the first load
        con.close()
        super().__init__(work, dbf, timeout_s=120, extra_env={"PLANNER_DATA_DIR": str(work / "data")})
        self.peak_rss = 0
        self.samples = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)

    def wait_healthy(self) -> None:
        self.__enter__()
        self._sampler.start()

    def _sample(self):
        try:
            p = psutil.Process(self.proc.pid)
        except psutil.Error:
            return
        while not self._stop.is_set():
            try:
                rss = p.memory_info().rss + sum(c.memory_info().rss for c in p.children(recursive=True))
            except psutil.Error:
                break
            self.peak_rss = max(self.peak_rss, rss)
            self.samples += 1
            time.sleep(0.1)

    def stop(self):
        self._stop.set()
        self.__exit__(None, None, None)


async def settle(pg):
    """Streamlit's script run is over: no 'Running...' status widget."""
    await pg.wait_for_timeout(300)
    await pg.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                               timeout=STEP_TIMEOUT_MS)


async def pick(pg, label_text: str, option: str):
    box = pg.locator('[data-testid="stSelectbox"]').filter(has_text=label_text).first
    await box.click()
    await pg.get_by_role("option", name=option, exact=True).click()


async def session(i: int, browser, url: str, swf: Path, all_names: list[str], timings: list, errors: list):
    name = swf.stem
    others = [n for n in all_names if n != name]
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = await ctx.new_page()
    pg.set_default_timeout(STEP_TIMEOUT_MS)

    async def step(kind: str, coro):
        t0 = time.perf_counter()
        await coro
        timings.append({"session": i, "step": kind, "s": time.perf_counter() - t0})

    async def open_logs():
        await pg.goto(f"{url}/logs")
        await pg.get_by_role("heading", name="Logs").wait_for()
        await settle(pg)

    async def upload():
        await pg.locator('input[type="file"]').set_input_files(str(swf))
        await settle(pg)
        await pg.get_by_role("button", name="Load", exact=True).click()
        await pg.get_by_text(f"Loaded {name}").wait_for()
        await settle(pg)

    async def pick_log():  # on the Planner: the page moves the window into the log and reruns
        await pick(pg, "Log", name)
        await pg.get_by_text(f"Log {name}:").wait_for()
        await settle(pg)

    async def to_planner():
        await pg.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Planner").click()
        await pg.get_by_role("heading", name="Planner").wait_for()
        await settle(pg)

    async def run():
        await pg.get_by_role("button", name="Run", exact=True).click()
        exc = pg.locator('[data-testid="stException"]')
        await pg.get_by_text("Headline numbers").or_(exc).first.wait_for()
        if await exc.count():
            raise RuntimeError("the app showed an exception: " + (await exc.first.inner_text())[:200])
        await pg.locator(".js-plotly-plot").first.wait_for()
        await settle(pg)

    try:
        await step("open page", open_logs())
        await step("upload", upload())
        text = await pg.locator("body").inner_text()
        assert f"Your uploads in this workspace: {name}" in text, "own upload not listed"
        leak = [n for n in others if n in text]
        assert not leak, f"sees other sessions' uploads: {leak}"
        await step("switch page", to_planner())
        await step("pick log", pick_log())
        # the Planner's log choices: the shipped logs and this session's upload, nobody else's
        await pg.locator('[data-testid="stSelectbox"]').filter(has_text="Log").first.click()
        opts = await pg.get_by_role("option").all_inner_texts()
        await pg.keyboard.press("Escape")
        assert name in opts, f"own log not offered: {opts}"
        assert not [n for n in others if n in opts], f"offered other sessions' logs: {opts}"
        await step("run", run())
        text = await pg.locator("body").inner_text()
        assert f"Log {name}:" in text, "planner is not on its own log"
        leak = [n for n in others if n in text]
        assert not leak, f"planner sees other sessions' uploads: {leak}"
        assert await pg.locator('[data-testid="stException"]').count() == 0, "exception box shown"
        await pg.locator('[data-testid="stMetricValue"]').nth(3).wait_for(timeout=60_000)  # 4 headline metrics
    except Exception as e:  # noqa: BLE001 - recorded and reported, the bench goes on
        errors.append({"session": i, "error": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"})
        try:
            shots = ROOT / "artifacts" / "screenshots"
            shots.mkdir(parents=True, exist_ok=True)
            await pg.screenshot(path=str(shots / f"bench_load_error_{i}.png"), full_page=True)
        except Exception:  # noqa: BLE001
            pass
    finally:
        await ctx.close()


async def drive(url: str, swfs: list[Path]) -> tuple[list, list, float]:
    from playwright.async_api import async_playwright

    timings, errors = [], []
    names = [p.stem for p in swfs]
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        t0 = time.perf_counter()
        await asyncio.gather(*(session(i, browser, url, swf, names, timings, errors)
                               for i, swf in enumerate(swfs)))
        wall = time.perf_counter() - t0
        await browser.close()
    return timings, errors, wall


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--wait-chromium-s", type=float, default=600)
    args = ap.parse_args(argv)
    wait_for_chromium(args.wait_chromium_s)
    work = Path(tempfile.mkdtemp(prefix="bench-load-"))
    swfs = []
    for i in range(args.sessions):
        swfs.append(work / f"kth-s{i:02d}.swf")
        swfs[-1].write_text(small_swf(150 + 25 * i))
    load_before = os.getloadavg()
    srv = Server(work)
    try:
        srv.wait_healthy()
        sp = psutil.Process(srv.proc.pid)
        cpu0, mach0 = sum(sp.cpu_times()[:2]), psutil.cpu_times()
        timings, errors, wall = asyncio.run(drive(srv.url, swfs))
        server_cpu_s = sum(sp.cpu_times()[:2]) - cpu0
        mach1 = psutil.cpu_times()
        machine_busy_s = (mach1.user + mach1.system + mach1.nice) - (mach0.user + mach0.system + mach0.nice)
        healthy = srv.healthy()
        idle_rss = psutil.Process(srv.proc.pid).memory_info().rss
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)
    secs = [t["s"] for t in timings]
    by_kind = {}
    for kind in dict.fromkeys(t["step"] for t in timings):
        xs = [t["s"] for t in timings if t["step"] == kind]
        by_kind[kind] = {"n": len(xs), "median_s": round(statistics.median(xs), 3),
                         "p95_s": round(float(np.percentile(xs, 95)), 3), "max_s": round(max(xs), 3)}
    result = {
        "bench": "load",
        "sessions": args.sessions,
        "sessions_ok": args.sessions - len({e["session"] for e in errors}),
        "errors": errors,
        "server_healthy_after": healthy,
        "interactions": len(secs),
        "response_s": {"median": round(statistics.median(secs), 3) if secs else None,
                       "p95": round(float(np.percentile(secs, 95)), 3) if secs else None,
                       "max": round(max(secs), 3) if secs else None},
        "by_step": by_kind,
        "wall_s": round(wall, 2),
        "server_cpu_s": round(server_cpu_s, 1),
        "machine_cpu_busy_s": round(machine_busy_s, 1),
        "server_peak_rss_mib": round(srv.peak_rss / 2**20, 1),
        "server_rss_after_mib": round(idle_rss / 2**20, 1),
        "rss_samples": srv.samples,
        "load_avg_1m_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps({k: result[k] for k in ("sessions", "sessions_ok", "server_healthy_after", "response_s",
                                             "server_peak_rss_mib", "wall_s", "server_cpu_s", "machine_cpu_busy_s")},
                     indent=2))
    for kind, v in by_kind.items():
        print(f"  {kind:12s} n={v['n']:3d} median {v['median_s']:7.2f} s  p95 {v['p95_s']:7.2f} s  "
              f"max {v['max_s']:7.2f} s")
    for e in errors:
        print(f"  session {e['session']}: {e['error']}")
    return result


if __name__ == "__main__":
    res = main()
    raise SystemExit(0 if res["sessions_ok"] == res["sessions"] and res["server_healthy_after"] else 1)
