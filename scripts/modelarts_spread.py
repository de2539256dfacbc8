"""How far the ModelArts noise and delay rows' differences move under a small change of the setting
(planner.studies.modelarts.SPREAD): the ETA-noise variant under other noise seeds, and the base,
noise and delay variants with their arrivals jittered (jitter_arrivals, seeded), at the pools whose
difference lies outside the paper's range. One replay pair at a time; writes
docs/studies/modelarts_spread.json after each pair (a stopped run keeps what it ran), then attaches
the figures to the rows' why (as `planner study modelarts --rewhy`) and regenerates the docs' tables.

    PYTHONPATH=. nice -n 10 python scripts/modelarts_spread.py [--no-docs] [--attach-only]

29 replay pairs at 130-150 nodes; the horizon-milp replay cut after greedy's 100th completion (cut_pair), 20-45 s each
(about 15 min on 2 shared cores).
"""

from __future__ import annotations

import functools
import sys

from planner.studies import modelarts


def main(argv=None) -> int:
    log = functools.partial(print, file=sys.stderr, flush=True)
    return modelarts.draws_script(argv, __doc__, lambda a: modelarts.run_draws(
        modelarts.spread_path(), modelarts.spread_cells(), {"spread": modelarts.SPREAD}, log, ends=False))


if __name__ == "__main__":
    raise SystemExit(main())
