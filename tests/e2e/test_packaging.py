"""`pip install .` (not editable) from a copy of the repository into a fresh venv gives a working
`planner`, run from an unrelated directory: it loads the shipped Summit log from the package
data into the per-user default database and writes nothing into its install location.

The venv reuses the system site-packages (the pinned dependencies are installed there), so only
the project itself is built and installed: about 15 s, hence slow-marked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

JUNK = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", "*.duckdb", "*.duckdb.wal", "artifacts",
                              "data", "build", "*.egg-info", ".pytest_cache", ".hypothesis", ".venv")


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in root.rglob("*")}


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert r.returncode == 0, f"{cmd}: {r.stderr[-2000:]}"
    return r


@pytest.mark.slow
def test_pip_install_non_editable_runs_anywhere_and_writes_nothing_into_the_install(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=JUNK)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PLANNER_DB", "PLANNER_DATA_DIR", "PLANNER_ARTIFACTS_DIR",
                        "XDG_DATA_HOME")}
    env["HOME"] = str(tmp_path / "home")
    _run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", str(src)],
         env=env, cwd=tmp_path)
    shutil.rmtree(src)  # the install must not need its source any more

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run([str(py), "-c", "import planner, planner.paths as p; print(planner.__file__); "
                  "print(p.SOURCE_CHECKOUT); print(p.SUMMIT_LOG.is_file())"], env=env, cwd=elsewhere)
    pkg_file, checkout, shipped = where.stdout.split()
    pkg = Path(pkg_file).parent
    assert pkg.is_relative_to(venv) and checkout == "False" and shipped == "True"
    before = _snapshot(venv)

    out = _run([str(venv / "bin" / "planner"), "fragments", "--json"], env=env, cwd=elsewhere)
    frag = json.loads(out.stdout)
    assert frag["nodes"] == 4734 and frag["events"] > 20000  # the shipped Summit log, loaded
    db = tmp_path / "home" / ".local" / "share" / "harvest-planner" / "planner.duckdb"
    assert db.is_file()
    assert _snapshot(venv) == before, "the run wrote into the install location"
    assert list(elsewhere.iterdir()) == []


def test_default_database_location_order(monkeypatch, tmp_path):
    """$PLANNER_DB, else $PLANNER_DATA_DIR/planner.duckdb, else the per-user data directory
    (XDG on Linux); never under the package."""
    from planner import paths

    for var in ("PLANNER_DB", "PLANNER_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert paths.default_db() == tmp_path / "xdg" / "harvest-planner" / "planner.duckdb"
    assert not paths.default_db().is_relative_to(paths.PACKAGE)
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "d"))
    assert paths.default_db() == tmp_path / "d" / "planner.duckdb" and paths.DATA_DIR == tmp_path / "d"
    monkeypatch.setenv("PLANNER_DB", str(tmp_path / "x.duckdb"))
    assert paths.default_db() == tmp_path / "x.duckdb"


def test_shipped_datasets_are_package_data():
    """Every shipped file lives under planner/ and matches the package-data patterns."""
    import fnmatch
    import tomllib

    from planner import paths

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["planner"]
    files = [p.relative_to(paths.PACKAGE).as_posix() for p in paths.DATASETS.rglob("*") if p.is_file()]
    assert paths.SUMMIT_LOG.is_file() and paths.PHILLY_LOG.is_file() and paths.IMAGENET_SCALING.is_file()
    assert len(files) >= 8
    assert all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in files)
    assert not (ROOT / "datasets").exists()
