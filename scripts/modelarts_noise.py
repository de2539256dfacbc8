"""Why the ModelArts ETA-noise variant gains on the base at 150 nodes (issue 22): the committed noise
variant with one thing changed at a time (planner.studies.modelarts.ETA_FORMS, NOISE_EXP), one replay pair
per draw, the end times kept. Writes docs/studies/modelarts_noise.json after each pair (a stopped run
keeps what it ran), then attaches the figures to the row's why (as `planner study modelarts --rewhy`) and
regenerates the docs' tables.

    PYTHONPATH=. nice -n 10 python scripts/modelarts_noise.py [--no-docs] [--attach-only]

59 replay pairs (47 at 150 nodes, 12 at the other pools), the horizon-milp replay cut after greedy's 100th
completion (cut_pair), 6-25 s each (731 s for the 59 at load 1-5 on 2 shared cores, 2026-11-26).
"""

from __future__ import annotations

import functools
import sys

from planner.studies import modelarts


def main(argv=None) -> int:
    log = functools.partial(print, file=sys.stderr, flush=True)
    return modelarts.draws_script(argv, __doc__, lambda a: modelarts.run_draws(
        modelarts.noise_path(), modelarts.noise_cells(), {"noise": modelarts.NOISE_EXP}, log))


if __name__ == "__main__":
    raise SystemExit(main())
