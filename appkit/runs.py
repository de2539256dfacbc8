"""Running a Planner scenario (allocator and baseline) on the app's database. The pair itself
is planner.scenario.pair; the headline table planner.report.headline (re-exported here)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from planner.report.headline import HEADLINE, answered_note, headline_styler, headline_table  # noqa: F401  (the pages' names)
from planner.scenario import pair
from planner.scenario.pair import labels_for, make_scenario  # noqa: F401  (the pages' names)


def run_pair(sc: Mapping, progress: Callable[[str, float, float], None] | None = None,
             con=None, db_path: str | None = None) -> dict:
    """planner.scenario.pair.run_pair on the database the app uses for the scenario's log
    (a workspace upload's own file, else the shared one) unless `con` is given."""
    if con is None:
        from appkit import data  # Streamlit: the worker process passes its own connection

        con, db_path = data.con_for_log(str(sc["log"]))
    return pair.run_pair(sc, progress, con=con, db_path=db_path)
