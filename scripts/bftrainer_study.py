"""The bftrainer study: a thin caller of `planner study bftrainer` (planner/studies/bftrainer.py).

    python scripts/bftrainer_study.py [--quick]

Runs the study; a full run writes docs/studies/bftrainer.json and regenerates the docs' tables from it
(python -m planner.studies.docs); --quick prints the JSON only (it says what it cut).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.cli import main as planner  # noqa: E402
from planner.studies import docs  # noqa: E402


def main(argv=None) -> int:
    quick = "--quick" in (sys.argv[1:] if argv is None else argv)
    if quick:
        return planner(["study", "bftrainer", "--quick", "--json"])
    rc = planner(["study", "bftrainer", "--json", "--out", str(ROOT / "docs" / "studies" / "bftrainer.json")])
    return rc or docs.main([])


if __name__ == "__main__":
    raise SystemExit(main())
