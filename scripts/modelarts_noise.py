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

import argparse
import json
import sys
import time

from planner.studies import docs, modelarts
from planner.studies.common import rewhy


def write(path, draws: list[dict]) -> None:
    """The draws one a line (each holds its horizon-milp completion times: ~300 numbers)."""
    path.write_text('{"paper": "modelarts", "noise": ' + json.dumps(modelarts.NOISE_EXP) + ', "draws": [\n'
                    + ",\n".join(json.dumps(d) for d in draws) + "\n]}\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-docs", action="store_true", help="do not touch modelarts.json and the docs")
    ap.add_argument("--attach-only", action="store_true", help="run nothing; as `planner study modelarts --rewhy`")
    a = ap.parse_args(argv)
    if not a.attach_only:
        path = modelarts.noise_path()
        have = modelarts.committed_noise()
        done = {json.dumps(d["cell"], sort_keys=True) for d in have}
        for cell in modelarts.noise_cells():
            if json.dumps(cell, sort_keys=True) in done:
                continue
            t0 = time.perf_counter()
            have.append(modelarts.spread_draw(cell, ends=True))
            print(json.dumps({k: v for k, v in have[-1].items() if k != "horizon_ends_s"}),
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
            write(path, have)
    if a.no_docs:
        return 0
    rewhy("modelarts")
    return docs.main([])


if __name__ == "__main__":
    raise SystemExit(main())
