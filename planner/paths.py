"""Where things live: the shipped datasets (package data), the default database, artifacts.

The package never writes into its own directory (it may be a read-only site-packages):
- the shipped logs and tables are package data under planner/datasets/ (read only);
- the default database is $PLANNER_DB, else planner.duckdb in $PLANNER_DATA_DIR, else in the
  per-user data directory (platformdirs.user_data_dir: ~/.local/share/harvest-planner on Linux,
  ~/Library/Application Support/harvest-planner on macOS, %LOCALAPPDATA%\\harvest-planner on
  Windows);
- benchmark figures go to $PLANNER_ARTIFACTS_DIR, else artifacts/ of the source checkout when
  running from one, else artifacts/ under the working directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent  # the source checkout (app.py, examples/, benchmarks/) when running from one
SOURCE_CHECKOUT = (ROOT / "pyproject.toml").is_file() and (ROOT / "planner" / "paths.py").is_file()
DATASETS = PACKAGE / "datasets"
SCALING_DIR = DATASETS / "scaling"
SUMMIT_LOG = DATASETS / "summit-2021-node_idle_transitions.csv.gz"
PHILLY_LOG = DATASETS / "philly_jobs.csv.gz"
IMAGENET_SCALING = SCALING_DIR / "imagenet_summit_samples_per_sec.csv"
EXAMPLES = ROOT / "examples"  # source checkout only
APP_NAME = "harvest-planner"


def _user_data_dir() -> Path:
    return Path(user_data_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    """$PLANNER_DATA_DIR, else the per-user data directory."""
    env = os.environ.get("PLANNER_DATA_DIR")
    return Path(env).expanduser() if env else _user_data_dir()


def default_db() -> Path:
    """$PLANNER_DB, else data_dir()/planner.duckdb."""
    env = os.environ.get("PLANNER_DB")
    return Path(env).expanduser() if env else data_dir() / "planner.duckdb"


def artifacts_dir() -> Path:
    env = os.environ.get("PLANNER_ARTIFACTS_DIR")
    if env:
        return Path(env).expanduser()
    return ROOT / "artifacts" if SOURCE_CHECKOUT else Path.cwd() / "artifacts"



def as_text(path) -> str:
    """A path as printable text: bytes that are not UTF-8 in a file name (os.fsdecode keeps them as
    surrogates, which a database or JSON cannot store) become \\xNN escapes."""
    return os.fsencode(os.fspath(path)).decode("utf-8", "backslashreplace")


def os_error_text(e: OSError) -> str:
    """'<path>: <reason>' of an OSError, one line (the path as text)."""
    name = e.filename if e.filename is not None else ""
    reason = e.strerror or type(e).__name__
    return f"{as_text(name)}: {reason}" if name != "" else reason


def __getattr__(name: str):
    """`paths.DATA_DIR`: data_dir(), evaluated when asked (so $PLANNER_DATA_DIR set later counts)."""
    if name == "DATA_DIR":
        return data_dir()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
