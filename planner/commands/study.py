"""`planner study NAME`: one paper's comparison in the paper's own setting (planner.studies)."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

from planner.studies import STUDIES, module

NAME = "study"
HELP = "run one paper's comparison as the paper states it (bftrainer, modelarts, ibm, optimus, elan)"


def add_arguments(p):
    p.add_argument("name", choices=STUDIES + ("all",), help="the paper (all: only with --rewhy)")
    p.add_argument("--quick", action="store_true",
                   help="a cut-down run (within 3 minutes on 2 cores); the result says what it cut")
    p.add_argument("--out", default=None, help="also write the JSON result to this file")
    p.add_argument("--rewhy", action="store_true",
                   help="run nothing: regenerate every row's why (and its experiments, per row) of the committed "
                        "docs/studies/NAME.json from what it stores, then the docs' tables")


def run(args):
    if args.rewhy:
        from planner.studies import docs  # lazy: CLI start-up (docs and common load the glossary)
        from planner.studies.common import rewhy  # lazy: CLI start-up (the glossary)

        names = STUDIES if args.name == "all" else (args.name,)
        out = {n: [r["why"] for r in rewhy(n)["rows"]] for n in names}
        with contextlib.redirect_stdout(sys.stderr):  # stdout stays JSON
            docs.main([])
        return out if args.name == "all" else out[args.name]
    if args.name == "all":
        raise SystemExit("planner study: NAME 'all' works only with --rewhy; choose one of " + ", ".join(STUDIES))
    def progress(*parts):  # (fraction, message) from the study modules; to stderr, stdout stays JSON
        print("study " + args.name + ": " + " ".join(f"{p:.0%}" if isinstance(p, float) else str(p) for p in parts),
              file=sys.stderr, flush=True)

    result = module(args.name).run(quick=args.quick, progress=progress)
    from planner.studies.common import capitalize_sentences  # lazy: CLI start-up (the glossary)

    for r in result.get("rows", []):  # as rewhy writes the committed whys: a quick run's too
        r["why"] = capitalize_sentences(r["why"])
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return result
