"""Shared fixtures, and the tiers.

Tiers: `python3 -m pytest` runs the fast tier (pyproject: -m 'not slow'); `pytest -m slow` the rest
(.ci/run runs both). The folder says what a test needs, and sets its tier where that is the cost:
  tests/unit/  the library; fast unless marked slow (random batteries run a fixed sample by default
               and all of it under -m slow: tests.helpers.seeds / tests.helpers.examples)
  tests/app/   the app; a test that opens an AppTest session (the open_app fixture) is slow unless
               marked `smoke` (one cheap render per page stays in the fast tier)
  tests/e2e/   real browser, real cluster, signals, process kills: all slow

summit_db    session: path of a DuckDB file with the shipped Summit log loaded ('summit-2021'), this
             worker's copy of a file built once for all workers and runs (tests.helpers.built_once)
summit_con   session: an open connection to a copy of that file (treat as read-only)
mem_con      a fresh in-memory planner database
write_file   write_file(name, text, gz=False) -> Path under tmp_path
tiny_log     path of the 3-node hand-made node log (TINY_NODE_LOG; figures counted by hand in
             tests/unit/test_idle_fragments.py)
tiny_con     mem_con with the tiny log loaded as 'tiny'
loaded_db    path of a database file already holding the tiny log (as 'tiny.csv')
open_app     open_app(db, page=None, query=None) -> a Streamlit AppTest of app.py on `db` (tests/app)
browser      module: headless Debian Chromium via Playwright (tests/e2e); page: a fresh page in it

Plain helpers (constants, hypothesis strategies, small logs) are in tests/helpers.py.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
from pathlib import Path

# Bytecode caches (__pycache__/, git-ignored) are written even where PYTHONDONTWRITEBYTECODE is set
# (as on our 2-core machine): without them every xdist worker, and every `planner` or sweep-worker
# subprocess a test starts, compiles planner/, appkit/ and pytest's rewritten test modules from
# source again: about 20 CPU s of the fast tier's ~110 (measured). Python checks each cache against
# its source file's mtime (whole seconds) and size, pytest's rewritten ones likewise, so an edited file
# is recompiled, unless it is rewritten within the same second at the same size: code that loads a file
# it may have just rewritten must compile the source itself (benchmarks/run_all.py's _load does).
# Set here, before the imports below, and in the environment the workers and subprocesses inherit.
if sys.dont_write_bytecode:
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import pytest
from hypothesis import settings

from planner import logs
from planner.store import catalog, db
from tests.helpers import APP, TINY_NODE_LOG, built_once, need

# Under CI the property tests draw the same examples every run (a failure there reproduces);
# locally each run draws new ones and keeps exploring.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")


TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    for item in items:
        try:
            folder = Path(item.path).resolve().relative_to(TESTS).parts[0]
        except ValueError:
            continue
        if folder == "e2e":
            item.add_marker(pytest.mark.slow)
        elif folder == "app" and "open_app" in getattr(item, "fixturenames", ()) \
                and item.get_closest_marker("smoke") is None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def summit_db(request, tmp_path_factory) -> Path:
    """This worker's own copy (tests may write to it) of the database built once (built_once)."""
    def build(path):
        con = db.connect(path)
        catalog.ensure_default(con)
        catalog.ensure_shipped(con)  # as the app does at start: its sessions on copies then load nothing
        con.close()

    return built_once(request.config, tmp_path_factory, "summit", build,
                      tmp_path_factory.mktemp("summit") / "summit.duckdb")


@pytest.fixture(scope="session")
def summit_con(summit_db):
    # on its own copy of the file: a connection held for the whole session on summit_db itself
    # locks it, and a later test in the same worker that runs the CLI on summit_db then fails with
    # DuckDB's "Conflicting lock" (seen under pytest -n 2, where the order of tests differs)
    copy = summit_db.with_name("summit_con.duckdb")
    shutil.copyfile(summit_db, copy)
    con = db.connect(copy)
    yield con
    con.close()


@pytest.fixture
def mem_con():
    con = db.connect(":memory:")
    yield con
    con.close()


@pytest.fixture
def write_file(tmp_path):
    def _write(name: str, text: str, gz: bool = False) -> Path:
        p = tmp_path / name
        data = text.encode()
        p.write_bytes(gzip.compress(data) if gz else data)
        return p
    return _write


@pytest.fixture
def tiny_log(write_file) -> Path:
    return write_file("tiny.csv", TINY_NODE_LOG)


@pytest.fixture
def tiny_con(mem_con, tiny_log):
    logs.ingest(mem_con, tiny_log, name="tiny")
    return mem_con


@pytest.fixture
def loaded_db(tmp_path, tiny_log) -> Path:
    """A database file that already holds one good log (so 'unchanged' is not trivially 0)."""
    path = tmp_path / "loaded.duckdb"
    con = db.connect(path)
    logs.ingest(con, tiny_log)
    con.close()
    return path


@pytest.fixture(autouse=True)
def _keep_main_module():
    """Streamlit's AppTest runs app.py as `__main__` and leaves it there; a sweep started later in
    the same process spawns its workers, which re-import the parent's `__main__` by path and so
    ran the app's pages (opening the default database). Put pytest's `__main__` back after each test."""
    import sys

    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture
def open_app(tmp_path, monkeypatch):
    """open_app(db, page=None, query=None) -> Streamlit AppTest of app.py on database `db`, the
    app's workspaces under tmp_path; run (no exception) and switched to app_pages/<page>.py."""
    from streamlit.testing.v1 import AppTest

    import appkit.data

    monkeypatch.setenv("PLANNER_SESSIONS_DIR", str(tmp_path / "sessions"))
    monkeypatch.setattr(appkit.data, "SESSIONS_ROOT", tmp_path / "sessions")
    monkeypatch.setenv("PLANNER_APP_SPARE_WORKER", "0")  # no pre-started worker per AppTest (tests/app)

    def make(db, page: str | None = None, query: dict | None = None, timeout_s: float = 180):
        monkeypatch.setenv("PLANNER_DB", str(db))
        at = AppTest.from_file(APP, default_timeout=timeout_s)
        if query:
            at.query_params.update(query)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        if page and page != "home":
            at.switch_page(f"app_pages/{page}.py").run()
        return at
    return make


# the real browser (tests/e2e): Debian chromium through Playwright, one per module; skipped locally
# without chromium/playwright, a failure under CI=true
@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (Playwright, executable_path=/usr/bin/chromium), one per test module."""
    from appkit.server import CHROMIUM, CHROMIUM_ARGS

    need(Path(CHROMIUM).exists(), f"{CHROMIUM} not found (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        need(False, "playwright for Python is not installed (pip install -r requirements-dev.txt)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
    pg = ctx.new_page()
    pg.set_default_timeout(60_000)
    yield pg
    ctx.close()
