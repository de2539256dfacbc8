"""The app's pages, in one place: their files, titles, icons and one-line purpose. app.py builds the
navigation from PAGES; Home links every other page with its purpose (nothing to keep in step by hand)."""

from __future__ import annotations

from typing import NamedTuple


class PageInfo(NamedTuple):
    path: str
    title: str
    icon: str
    purpose: str  # Home's link: "<title>: <purpose>"


PAGES = (
    PageInfo("app_pages/home.py", "Home", ":material/home:", "what the tool does, the loaded logs"),
    PageInfo("app_pages/logs.py", "Logs", ":material/upload_file:", "pick or upload a log"),
    PageInfo("app_pages/idle.py", "Idle capacity", ":material/area_chart:", "N(t), fragments, T_fwd"),
    PageInfo("app_pages/planner.py", "Planner", ":material/play_circle:", "replay a window with an allocator"),
    PageInfo("app_pages/compare.py", "Compare", ":material/grid_on:", "sweep grids"),
    PageInfo("app_pages/solver.py", "Solver", ":material/speed:", "allocator benchmark"),
    PageInfo("app_pages/live.py", "Live", ":material/sensors:", "advice on a running Slurm cluster"),
    PageInfo("app_pages/papers.py", "Papers", ":material/menu_book:", "the five papers' claims beside ours"),
    PageInfo("app_pages/downloads.py", "Downloads", ":material/download:", "CSV, Parquet, HTML report"),
)


def page(path: str) -> PageInfo:
    """The page whose file is `path` (a link's target)."""
    return next(p for p in PAGES if p.path == path)
