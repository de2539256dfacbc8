"""Run the IBM study's isolating experiments (planner.studies.ibm.EXPERIMENTS; one change each from a
row's setting) and write docs/studies/ibm_experiments.json; then attach them to the committed
docs/studies/ibm.json (each row's "experiments" and "why") and regenerate the docs' tables.

    PYTHONPATH=. nice -n 10 python scripts/ibm_experiments.py [--only ID ...] [--no-docs | --attach-only]
    PYTHONPATH=. nice -n 10 python scripts/ibm_experiments.py --sweep     # Fig. 8(a)'s growth (1.5 min)
    PYTHONPATH=. nice -n 10 python scripts/ibm_experiments.py --fill-runs # the full run's missing cases

--only runs those experiments and keeps the others' committed results. The 40-GPU ones take seconds
to a minute or two each (the Fig. 8(a) and 8(c) ones about a second); comm400 about 10 min and rate400 a
few minutes on 2 shared cores. --sweep replays Fig. 8(a)'s setting at every all-reduce growth
(k-1)^p of ibm.FIG8A_GRID with ten seeds and stores it as "fig8a_sweep"; ibm.FIG8A_P must be its fit
(a test checks it).
"""

from __future__ import annotations

import argparse
import json
import sys

from planner.studies import common, docs, ibm
from planner.studies.common import rewhy


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="experiment ids (default: all)")
    ap.add_argument("--attach-only", action="store_true",
                    help="run nothing: as `planner study NAME --rewhy`")
    ap.add_argument("--no-docs", action="store_true", help="do not touch ibm.json and the docs")
    ap.add_argument("--sweep", action="store_true",
                    help="run Fig. 8(a)'s sweep of the all-reduce growth (ibm.fig8a_sweep, about a minute) and store "
                         "it beside the experiments (\"fig8a_sweep\"); ibm.FIG8A_P must be its fit")
    ap.add_argument("--fill-runs", action="store_true",
                    help="add the full run's replays that docs/studies/ibm.json lacks (ibm.fill_runs: e.g. Table IV's "
                         "400 GPUs at 8x, Fig. 5's 4 h high-arrival cases), then attach; runs no experiment")
    a = ap.parse_args(argv)
    ids = set(a.only) if a.only else None
    if a.attach_only:
        return attach()
    if a.fill_runs:
        p = common.json_path("ibm")
        res = ibm.fill_runs(json.loads(p.read_text()),
                            ibm.BURSTY400_CASES + ibm.FIG5_CASES + ibm.FIG8A_CASES + ibm.FIG8C_CASES,
                            log=lambda s: print(s, file=sys.stderr, flush=True))
        p.write_text(json.dumps(res, indent=1) + "\n")
        return attach()
    if a.sweep:
        sweep = ibm.fig8a_sweep(log=lambda s: print(s, file=sys.stderr, flush=True))
        stored = json.loads(ibm.experiments_path().read_text())
        ibm.experiments_path().write_text(json.dumps(dict(stored, fig8a_sweep=sweep), indent=1) + "\n")
        print(f"fit: p {ibm.fig8a_fit(sweep):g} (ibm.FIG8A_P {ibm.FIG8A_P:g})", file=sys.stderr)
        return 0 if a.no_docs else attach()
    new = ibm.run_experiments(ids, log=lambda s: print(s, file=sys.stderr, flush=True))
    old = ibm.committed_experiments() or []
    ran = {(x["id"], x["load"]) for x in new}
    keep = [x for x in old if (x["id"], x["load"]) not in ran]
    order = [x["id"] for x in ibm.EXPERIMENTS]
    allx = sorted(keep + new, key=lambda x: (order.index(x["id"]) if x["id"] in order else 99, x["load"]))
    allx = [x for x in allx if x["id"] in order]
    stored = json.loads(ibm.experiments_path().read_text()) if ibm.experiments_path().exists() else {}
    ibm.experiments_path().write_text(json.dumps(dict(stored, paper="ibm", experiments=allx), indent=1) + "\n")
    return 0 if a.no_docs else attach()


def attach() -> int:
    """Attach the committed experiments (described by the module's current text) to the committed
    study JSON and regenerate the docs' tables."""
    rewhy("ibm")
    return docs.main([])


if __name__ == "__main__":
    raise SystemExit(main())
