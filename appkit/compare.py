"""The Compare page's workspace side: where the last grid and its cells are kept. The grid's
axes, defaults and result shaping are the library's (planner.sweep.compare)."""

from __future__ import annotations

from pathlib import Path

from appkit import workspace

RESULTS_FILE = "sweep.duckdb"  # the workspace's last grid's cells (planner.sweep's store)


def results_path(ws_dir: Path) -> Path:
    return Path(ws_dir) / RESULTS_FILE


def remember_grid(ws_dir: Path, grid: dict) -> None:
    """Keep the grid a new run starts with in the workspace (its results file holds the cells)."""
    workspace.update_meta(ws_dir, compare_grid=grid)


def last_grid(ws_dir: Path) -> dict | None:
    """The workspace's last grid, when its results are there: a refresh, a restart or the link
    show them again."""
    grid = workspace.read_meta(ws_dir).get("compare_grid")
    return grid if grid and results_path(ws_dir).exists() else None
