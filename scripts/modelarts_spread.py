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

import argparse
import json
import sys
import time

from planner.studies import docs, modelarts
from planner.studies.common import rewhy


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-docs", action="store_true", help="do not touch modelarts.json and the docs")
    ap.add_argument("--attach-only", action="store_true", help="run nothing; as `planner study modelarts --rewhy`")
    a = ap.parse_args(argv)
    if not a.attach_only:
        path = modelarts.spread_path()
        have = json.loads(path.read_text())["draws"] if path.exists() else []
        done = {json.dumps(d["cell"], sort_keys=True) for d in have}
        for cell in modelarts.spread_cells():
            if json.dumps(cell, sort_keys=True) in done:
                continue
            t0 = time.perf_counter()
            have.append(modelarts.spread_draw(cell))
            print(json.dumps(have[-1]), f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
            path.write_text(json.dumps({"paper": "modelarts", "spread": modelarts.SPREAD, "draws": have},
                                       indent=1) + "\n")
    if a.no_docs:
        return 0
    rewhy("modelarts")
    return docs.main([])


if __name__ == "__main__":
    raise SystemExit(main())
