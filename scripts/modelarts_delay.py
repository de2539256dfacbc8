"""What the ModelArts 15 s scaling delay does (issue 22): the base and the committed variant (the paper's form,
the replay's scaling delay) at every pool with their end times, the earlier form (15 s of O(k) at every change
to k > 0 nodes) at every pool as a one-change experiment, each one change of the earlier form at its outlying
pools (planner.studies.modelarts.DELAY_FORMS, DELAY_EXP), both forms at the spread's jittered arrivals, and the
committed variant with greedy undelayed where it gains on the base; one replay pair per draw, the end times kept
(docs/studies/modelarts_delay.json). --repeat: the base at 150 nodes with one decision stopped early at a time
(REPEAT_EXP; docs/studies/modelarts_repeat.json). Writes after each pair (a stopped run keeps what it ran), then
attaches the figures to the rows' whys (as `planner study modelarts --rewhy`) and regenerates the docs' tables.

    PYTHONPATH=. nice -n 10 python scripts/modelarts_delay.py [--repeat] [--no-docs] [--attach-only]

48 delay pairs, 4-28 s each (about 8 min at load 2-7 on 2 shared cores, 2026-11-26); 16 repeat pairs (about 4 min).
"""

from __future__ import annotations

import functools
import sys

from planner.studies import modelarts


def run(a) -> None:
    log = functools.partial(print, file=sys.stderr, flush=True)
    if a.repeat:
        modelarts.run_draws(modelarts.repeat_path(), modelarts.repeat_cells(), {"repeat": modelarts.REPEAT_EXP}, log)
    else:
        modelarts.run_draws(modelarts.delay_path(), modelarts.delay_cells(),
                            {"delay": modelarts.DELAY_EXP, "forms": modelarts.DELAY_FORMS}, log)


def main(argv=None) -> int:
    return modelarts.draws_script(argv, __doc__, run, {"--repeat": "the repeatability pairs (REPEAT_EXP) instead"})


if __name__ == "__main__":
    raise SystemExit(main())
