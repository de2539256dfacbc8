"""Run the ModelArts study's isolating experiments (planner.studies.modelarts.EXPERIMENTS; one change
each, in the quick setting) and write docs/studies/modelarts_experiments.json; then attach them to the
committed docs/studies/modelarts.json (the extra-jobs rows' "experiments" and "why") and regenerate
the docs' tables.

    PYTHONPATH=. nice -n 10 python scripts/modelarts_experiments.py [--only ID ...] [--no-docs | --attach-only]
    PYTHONPATH=. nice -n 10 python scripts/modelarts_experiments.py --fill-table [VARIANT ...]

About 13 quick replay pairs; a few minutes on 2 shared cores.
"""

from __future__ import annotations

import argparse
import json
import sys

from planner.cli import _clean
from planner.studies import common, docs, modelarts
from planner.studies.common import rewhy


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="experiment ids (default: all); the before runs always run")
    ap.add_argument("--variants", nargs="*", help="only these variants' runs (default: every experiment's)")
    ap.add_argument("--attach-only", action="store_true",
                    help="run nothing: as `planner study NAME --rewhy`")
    ap.add_argument("--no-docs", action="store_true", help="do not touch modelarts.json and the docs")
    ap.add_argument("--fill-table", nargs="*", metavar="VARIANT",
                    help="replay only the full run's cells that docs/studies/modelarts.json lacks (modelarts."
                         "fill_table; of these variants, default all), one at a time, add them, then as --attach-only")
    a = ap.parse_args(argv)
    ids = set(a.only) if a.only else None
    if a.attach_only:
        return attach()
    if a.fill_table is not None:
        p = common.json_path("modelarts")
        res = modelarts.fill_table(json.loads(p.read_text()), a.fill_table or None,
                                   log=lambda s: print(s, file=sys.stderr, flush=True))
        p.write_text(json.dumps(_clean(res), indent=1) + "\n")  # NaN -> null, as the CLI writes it
        return attach()
    new = modelarts.run_experiments(ids, log=lambda s: print(s, file=sys.stderr, flush=True), variants=a.variants)
    old = modelarts.committed_experiments() or []
    ran = {(x["id"], tuple(x["variants"])) for x in new}
    allx = [x for x in old if (x["id"], tuple(x["variants"])) not in ran] + new
    order = (["quick-shape", "diagnosis", "diagnosis-upto", "load-sweep", "earlier-setting", "earlier-pairs"]
             + [x["id"] for x in modelarts.UPTO_EXPERIMENTS] + [x["id"] for x in modelarts.EXPERIMENTS])
    allx = sorted((x for x in allx if x["id"] in order), key=lambda x: order.index(x["id"]))
    modelarts.experiments_path().write_text(json.dumps({"paper": "modelarts", "experiments": allx}, indent=1) + "\n")
    return 0 if a.no_docs else attach()


def attach() -> int:
    """Attach the committed experiments (described by the module's current text) to the committed
    study JSON and regenerate the docs' tables."""
    rewhy("modelarts")
    return docs.main([])


if __name__ == "__main__":
    raise SystemExit(main())
