"""Each paper's comparison as the paper states it: `planner study NAME [--quick] --json`.

One module per paper (bftrainer, modelarts, ibm, optimus, elan). Each defines

    PAPER: str                      # the paper, as cited in docs/papers.md
    def run(quick: bool = False, progress=None) -> dict

returning {"paper": NAME, "quick": bool, "cut": str (what --quick leaves out), "rows": [row, ...]}
with one row per headline claim (planner.studies.common.row builds one):

    {"claim", "metric", "paper_value", "paper_setting", "value", "setting",
     "reproduced": "yes" | "partly" | "no", "why"}

Full runs are committed as JSON under docs/studies/NAME.json; the docs' tables are generated
from those files (planner.studies.common.markdown_table), so a table cannot drift from its run.
"""

from __future__ import annotations

import importlib

STUDIES = ("bftrainer", "modelarts", "ibm", "optimus", "elan")


def module(name: str):
    """The study module of paper `name` (ValueError naming the choices when unknown)."""
    if name not in STUDIES:
        raise ValueError(f"unknown study {name!r}; choose one of {', '.join(STUDIES)}")
    return importlib.import_module(f"planner.studies.{name}")
